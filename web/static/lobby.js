// The lobby: the server's games, refreshed every two seconds; a form to create a game; join buttons.
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

function render(data) {
  const bodies = {
    waiting: document.querySelector("#waiting tbody"),
    active: document.querySelector("#active tbody"),
    finished: document.querySelector("#finished tbody"),
  };
  const rows = { waiting: [], active: [], finished: [] };
  for (const game of data.games) {
    if (game.status === "waiting") {
      const free = game.seats.filter((s) => !s.joined);
      const button = free.length
        ? h("button", { class: "join", "data-game-id": game.game_id, onclick: () => join(game.game_id) }, "Join")
        : "";
      rows.waiting.push(h("tr", { "data-game-id": game.game_id }, h("td", {}, gameLink(game)),
        h("td", {}, String(game.players)), h("td", {}, names(game)), h("td", {}, button)));
    } else if (game.status === "active") {
      rows.active.push(h("tr", { "data-game-id": game.game_id }, h("td", {}, gameLink(game)),
        h("td", {}, names(game)), h("td", {}, game.round ? `${game.round}/${game.rounds}` : "setup"),
        h("td", { class: "moves" }, String(game.version)), h("td", {}, scores(game.scores))));
    } else {
      const result = game.status === "finished" ? "finished" : `abandoned${game.abandon_reason ? ": " + game.abandon_reason : ""}`;
      rows.finished.push(h("tr", { "data-game-id": game.game_id }, h("td", {}, gameLink(game)),
        h("td", {}, names(game)), h("td", {}, String(game.version)),
        h("td", {}, game.result ? scores(game.result.scores, game.result.winners) : "—"), h("td", {}, result)));
    }
  }
  for (const [key, body] of Object.entries(bodies)) {
    const fresh = rows[key].length ? rows[key] : [h("tr", { class: "empty" }, h("td", { colspan: 5 }, "none"))];
    // Replace a table's rows only when they changed, so that a click never lands on a row being replaced.
    const signature = fresh.map((row) => row.outerHTML).join("");
    if (body.dataset.signature === signature) continue;
    body.dataset.signature = signature;
    body.replaceChildren(...fresh);
  }
}

async function refresh() {
  const status = document.getElementById("lobby-status");
  try {
    const data = await getJSON("/api/games");
    document.getElementById("unavailable").hidden = true;
    render(data);
    status.textContent = `Game server ${data.server}; updated ${new Date().toLocaleTimeString()}.`;
  } catch (error) {
    status.textContent = error.message;
    const banner = document.getElementById("unavailable");
    banner.hidden = !/unavailable/.test(error.message);
    if (!banner.hidden) banner.textContent = error.message;
  }
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
seatChoices();
refresh();
setInterval(refresh, 2000);
