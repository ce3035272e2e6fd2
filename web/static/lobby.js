// The lobby: every game waiting or being played and a page of the ended ones, refreshed every two seconds;
// a form to create a game; join buttons.
import { getJSON, h, postJSON, SEAT_COLOURS } from "./common.js";

const KINDS = ["you", "greedy", "mcts", "random", "open"];

function seatChoices() {
  const players = Number(document.getElementById("players").value);
  const box = document.getElementById("seat-choices");
  const previous = [...box.querySelectorAll("select")].map((s) => s.value);
  box.replaceChildren();
  for (let seat = 0; seat < players; seat++) {
    const chosen = previous[seat] || (seat === 0 ? "you" : "greedy");
    const select = h("select", { name: `seat${seat}`, id: `seat${seat}` },
      KINDS.map((k) => h("option", { value: k, selected: k === chosen }, k)));
    box.append(h("label", {}, h("span", { class: "dot", style: `background:${SEAT_COLOURS[seat]}` }), `Seat ${seat} `, select));
  }
}

function names(game) {
  return game.seats.map((s) => h("span", { class: `seat s${s.seat}` }, s.joined ? s.name || `seat ${s.seat}` : "open"));
}

function gameLink(game) {
  return h("a", { href: `/games/${game.game_id}`, class: "game-link", "data-game-id": game.game_id }, game.game_id);
}

function scores(list, winners = []) {
  if (!list) return "—";
  return list.map((score, seat) => `${winners.includes(seat) ? "★" : ""}${score}`).join(" · ");
}

// Ended games come a page at a time, newest first. Each ended status keeps the tokens of the pages shown
// so far (the first page's is ""): Older goes on from the server's next token, Newer goes back one.
const pages = {
  finished: { tokens: [""], next: "" },
  abandoned: { tokens: [""], next: "" },
};
let asked = 0; // the number of the latest listing asked for; an older answer is not drawn over it

function row(game, ...cells) {
  return h("tr", { "data-game-id": game.game_id }, h("td", {}, gameLink(game)), ...cells.map((c) => h("td", c.attrs || {}, c.body ?? c)));
}

function render(data) {
  const rows = { waiting: [], active: [], finished: [], abandoned: [] };
  for (const game of data.games) {
    if (game.status === "waiting") {
      const free = game.seats.filter((s) => !s.joined);
      const button = free.length
        ? h("button", { class: "join", "data-game-id": game.game_id, onclick: () => join(game.game_id) }, "Join")
        : "";
      rows.waiting.push(row(game, String(game.players), names(game), button));
    } else if (game.status === "active") {
      const round = game.round === undefined ? "—" : game.round ? `${game.round}/${game.rounds}` : "setup";
      rows.active.push(row(game, names(game), round, { attrs: { class: "moves" }, body: String(game.version) },
        scores(game.scores)));
    } else if (game.status === "finished") {
      rows.finished.push(row(game, names(game), String(game.version),
        game.result ? scores(game.result.scores, game.result.winners) : "—", "finished"));
    } else if (game.status === "abandoned") {
      rows.abandoned.push(row(game, names(game), String(game.version), game.abandon_reason || "—"));
    }
  }
  for (const [key, list] of Object.entries(rows)) {
    const table = document.getElementById(key);
    const body = table.querySelector("tbody");
    const columns = table.querySelectorAll("thead th").length;
    const fresh = list.length ? list : [h("tr", { class: "empty" }, h("td", { colspan: columns }, "none"))];
    // Replace a table's rows only when they changed, so that a click never lands on a row being replaced.
    const signature = fresh.map((r) => r.outerHTML).join("");
    if (body.dataset.signature === signature) continue;
    body.dataset.signature = signature;
    body.replaceChildren(...fresh);
  }
  for (const key of ["waiting", "active"]) {
    const note = document.getElementById(`${key}-more`);
    note.hidden = !data.more[key];
    note.textContent = `The newest ${data.most} are listed; the game server has more.`;
  }
  for (const [key, state] of Object.entries(pages)) {
    state.next = data.next[key];
    const pager = document.getElementById(`${key}-pager`);
    pager.querySelector(".newest").disabled = state.tokens.length === 1;
    pager.querySelector(".newer").disabled = state.tokens.length === 1;
    pager.querySelector(".older").disabled = !state.next;
    pager.querySelector(".pageno").textContent = `page ${state.tokens.length}`;
  }
}

async function refresh() {
  const status = document.getElementById("lobby-status");
  const query = new URLSearchParams();
  for (const [key, state] of Object.entries(pages)) {
    const token = state.tokens[state.tokens.length - 1];
    if (token) query.set(key, token);
  }
  const number = ++asked;
  try {
    const data = await getJSON(`/api/games${query.toString() ? "?" + query : ""}`);
    if (number !== asked) return;
    document.getElementById("unavailable").hidden = true;
    render(data);
    status.textContent = `Game server ${data.server}; updated ${new Date().toLocaleTimeString()}.`;
  } catch (error) {
    if (number !== asked) return;
    status.textContent = error.message;
    if (/page token/.test(error.message)) {
      // A token the game server no longer knows (it was restarted): back to the newest pages.
      for (const state of Object.values(pages)) state.tokens = [""];
    }
    const banner = document.getElementById("unavailable");
    banner.hidden = !/unavailable/.test(error.message);
    if (!banner.hidden) banner.textContent = error.message;
  }
}

function turnPage(key, direction) {
  const state = pages[key];
  if (direction === "older" && state.next) state.tokens.push(state.next);
  else if (direction === "newer" && state.tokens.length > 1) state.tokens.pop();
  else if (direction === "newest") state.tokens = [""];
  else return;
  refresh();
}

async function join(gameId) {
  const name = document.getElementById("name").value;
  try {
    await postJSON(`/api/games/${gameId}/join`, { name });
    location.href = `/games/${gameId}`;
  } catch (error) {
    document.getElementById("create-error").textContent = error.message;
  }
}

async function create(event) {
  event.preventDefault();
  const players = Number(document.getElementById("players").value);
  const seats = [];
  for (let seat = 0; seat < players; seat++) seats.push(document.getElementById(`seat${seat}`).value);
  const body = {
    players,
    seats,
    name: document.getElementById("name").value,
    delay: Number(document.getElementById("delay").value || 0),
    clock: Number(document.getElementById("clock").value || 0),
  };
  const seed = document.getElementById("seed").value;
  if (seed !== "") body.seed = Number(seed);
  try {
    const created = await postJSON("/api/games", body);
    location.href = `/games/${created.game_id}`;
  } catch (error) {
    document.getElementById("create-error").textContent = error.message;
  }
}

document.getElementById("players").addEventListener("change", seatChoices);
document.getElementById("create").addEventListener("submit", create);
for (const key of Object.keys(pages)) {
  for (const direction of ["newest", "newer", "older"]) {
    document.querySelector(`#${key}-pager .${direction}`).addEventListener("click", () => turnPage(key, direction));
  }
}
seatChoices();
refresh();
setInterval(refresh, 2000);
