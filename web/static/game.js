// The game page: follows a game over server-sent events, keeps every version it has seen, and shows any of
// them (the URL's ?v=N names it); the seat this browser holds answers its decisions from here.
import { Board } from "./board.js";
import { getJSON, h, label, postJSON, SEAT_COLOURS, seatName } from "./common.js";

const root = document.getElementById("game");
const gameId = root.dataset.gameId;
const state = {
  history: [], // by version: {version, observation, move, status, result}
  shown: null, // the version on screen
  follow: true, // show the newest version as it arrives
  wanted: null, // a version named in the URL, shown once it arrives
  summary: null,
  you: null,
  ended: false,
  sending: false,
  board: null,
  source: null,
};

const $ = (id) => document.getElementById(id);

function showError(message) {
  $("error").textContent = message || "";
}

function latest() {
  return state.history.length - 1;
}

function header(obs, status) {
  const phase = label(obs.phase);
  const cards = obs.phase === "PHASE_TURNS" ? ` (${obs.cards_left_in_turn} card${obs.cards_left_in_turn === 1 ? "" : "s"} left)` : "";
  return `Game ${gameId} · Round ${obs.round}/${obs.rounds} · Turn ${obs.turn}${cards} · ${phase} · Tax ${obs.tax} · Start P${obs.start_seat} · ${status}`;
}

function turnLine(obs, status) {
  const node = $("turn");
  node.replaceChildren();
  delete node.dataset.waiting;
  if (status === "waiting") return waitingLine();
  if (obs.over) {
    node.append(h("b", {}, "Game over."));
    return;
  }
  if (!obs.pending) return;
  const seat = obs.pending.seat;
  node.append(
    "To play: ",
    h("span", { class: "seatname", style: `color:${SEAT_COLOURS[seat]}` }, seatName(state.summary, seat, state.you)),
    ` — ${obs.pending.question || label(obs.pending.kind)}`,
  );
}

function renderMoves() {
  const list = $("moves");
  const items = [];
  // The moves that led to the version on screen, newest first: a replay tells nothing ahead of its position.
  for (let v = 1; v <= (state.shown ?? 0); v++) {
    const entry = state.history[v];
    if (!entry || !entry.move) continue;
    const m = entry.move;
    const item = h(
      "li",
      { value: v, class: v === state.shown ? "move current" : "move", "data-version": v },
      h("span", { class: "seatname", style: `color:${SEAT_COLOURS[m.seat]}` }, seatName(state.summary, m.seat, state.you)),
      ": ",
      h("b", {}, m.description),
      m.source ? h("i", {}, ` (${m.source})`) : "",
      m.events.length ? h("div", { class: "events" }, m.events.join(" · ")) : "",
    );
    item.addEventListener("click", () => show(v, false));
    items.push(item);
  }
  list.replaceChildren(...items.reverse());
}

function cost(option) {
  // What an option costs, as the server prices it (OptionCost): groschen (with the permits or wood they
  // buy), reputation, points and pelicans.
  const c = option.cost;
  if (!c) return "free";
  const parts = [];
  if (c.groschen) {
    const buys = [c.permits ? `${c.permits} permit${c.permits === 1 ? "" : "s"}` : "", c.wood ? `${c.wood} wood` : ""].filter(Boolean);
    parts.push(`${c.groschen} groschen` + (buys.length ? ` (${buys.join(", ")})` : ""));
  }
  if (c.reputation) parts.push(`${c.reputation} reputation`);
  if (c.points) parts.push(`${c.points} point${c.points === 1 ? "" : "s"}`);
  if (c.pelicans) parts.push(`${c.pelicans} pelican${c.pelicans === 1 ? "" : "s"}`);
  return parts.length ? `costs ${parts.join(" · ")}` : "free";
}

function renderOptions(obs, atLatest) {
  const panel = $("options");
  const mine = atLatest && state.you !== null && obs.pending && obs.pending.seat === state.you && (obs.pending.options || []).length && !obs.over;
  panel.hidden = !mine;
  if (!mine) {
    panel.replaceChildren();
    return;
  }
  const buttons = obs.pending.options.map((option) =>
    h(
      "button",
      { class: "option", "data-option": option.index, "data-text": option.text, disabled: state.sending, onclick: () => choose(option) },
      h("span", { class: "desc" }, option.description || option.text),
      h("span", { class: "short" }, option.text),
      h("span", { class: "price" }, cost(option)),
    ),
  );
  const unavailable = (obs.pending.unavailable || []).map((u) =>
    h("li", {}, `Card ${u.card}, ${label(u.action)}: ${u.reason}`),
  );
  panel.replaceChildren(
    h("h3", {}, "Your decision"),
    h("p", { class: "question" }, obs.pending.question || label(obs.pending.kind)),
    h("div", { class: "option-list" }, buttons),
    unavailable.length ? h("details", { class: "unavailable" }, h("summary", {}, "Not playable now"), h("ul", {}, unavailable)) : "",
    h("p", { class: "note" }, "Highlighted squares and tiles on the board can be clicked too."),
  );
}

function renderYou(obs) {
  const panel = $("you");
  if (state.you === null) {
    panel.hidden = true;
    return;
  }
  panel.hidden = false;
  const parts = [h("h3", {}, `You play seat ${state.you}`)];
  if ((obs.drawn || []).length) {
    parts.push(h("p", { class: "drawn" }, "You drew: " + obs.drawn.map((t) => `tile ${t} (${state.board.mineTileWords(t)})`).join("; ")));
  }
  if (!obs.over && state.summary && state.summary.status === "active") {
    parts.push(h("button", { class: "resign", onclick: resign }, "Resign"));
  }
  panel.replaceChildren(...parts);
}

function renderResult(entry) {
  const panel = $("result");
  const final = state.history[latest()];
  const result = entry.result || (final && final.result);
  if (!result || !entry.observation.over) {
    panel.hidden = true;
    return;
  }
  panel.hidden = false;
  const rows = [...result.seats]
    .sort((a, b) => b.score - a.score || b.groschen - a.groschen)
    .flatMap((seat) => [
      h(
        "tr",
        { "data-result-seat": seat.seat, class: result.winners.includes(seat.seat) ? "winner" : "" },
        h("td", {}, h("span", { style: `color:${SEAT_COLOURS[seat.seat]}` }, seatName(state.summary, seat.seat, state.you))),
        h("td", { class: "score" }, String(seat.score)),
        h("td", {}, String(seat.groschen)),
        h("td", {}, result.winners.includes(seat.seat) ? "winner" : "", seat.resigned ? " resigned" : ""),
      ),
      h(
        "tr",
        { class: "breakdown" },
        h("td", { colspan: 4 }, seat.breakdown.filter((b) => b.name !== "total").map((b) => `${b.name.replace(/_/g, " ")} ${b.points}`).join(" · ")),
      ),
    ]);
  let verdict = "";
  if (state.you !== null) {
    const mine = result.seats.find((s) => s.seat === state.you);
    verdict = result.winners.includes(state.you) ? `You won with ${mine.score} points!` : `You scored ${mine ? mine.score : "?"} points.`;
  }
  panel.replaceChildren(
    h("h3", {}, "Final result"),
    verdict ? h("p", { class: "verdict" }, verdict) : "",
    h("table", { class: "list" }, h("thead", {}, h("tr", {}, ["Seat", "Score", "Groschen", ""].map((t) => h("th", {}, t)))), h("tbody", {}, rows)),
  );
}

function renderScrub() {
  const slider = $("slider");
  slider.max = Math.max(0, latest());
  slider.value = state.shown ?? 0;
  $("version").textContent = state.shown ?? 0;
  $("move-count").textContent = Math.max(0, latest());
  const rounds = $("round");
  const seen = [...new Set(state.history.filter(Boolean).map((e) => e.observation.round))];
  if (rounds.options.length !== seen.length) {
    rounds.replaceChildren(...seen.map((r) => h("option", { value: r }, String(r))));
  }
  const current = state.history[state.shown];
  if (current) rounds.value = current.observation.round;
  $("live").textContent = state.ended ? "replay" : state.follow ? "● live" : "live (paused: ▶| follows again)";
}

function show(version, follow) {
  if (!state.history.length) return;
  version = Math.max(0, Math.min(version, latest()));
  state.shown = version;
  state.follow = follow;
  const entry = state.history[version];
  const atLatest = version === latest() && !state.ended;
  const obs = entry.observation;
  $("header").textContent = header(obs, entry.status);
  turnLine(obs, entry.status);
  const interactive = atLatest && state.you !== null && obs.pending && obs.pending.seat === state.you && !state.sending;
  $("board").replaceChildren(...state.board.draw(obs, state.summary, state.you, interactive));
  renderOptions(obs, atLatest);
  renderYou(obs);
  renderResult(entry);
  renderMoves();
  renderScrub();
  const url = new URL(location.href);
  if (follow && !state.ended) url.searchParams.delete("v");
  else url.searchParams.set("v", version);
  history.replaceState(null, "", url);
}

async function choose(option) {
  if (state.sending) return;
  state.sending = true;
  showError("");
  document.querySelectorAll("button.option").forEach((b) => (b.disabled = true));
  const obs = state.history[latest()].observation;
  try {
    await postJSON(`/api/games/${gameId}/decide`, { version: obs.version, index: option.index });
  } catch (error) {
    showError(error.message);
    state.sending = false;
    show(latest(), true);
    return;
  }
  // The new version arrives on the event stream.
}

async function resign() {
  if (!confirm("Resign? The server plays your seat to the end.")) return;
  try {
    await postJSON(`/api/games/${gameId}/resign`, {});
  } catch (error) {
    showError(error.message);
  }
}

function waitingLine() {
  const seats = state.summary.seats.map((s) => `seat ${s.seat}: ${s.joined ? s.name || "taken" : "open"}`);
  $("turn").textContent = `Waiting for players (${seats.join(", ")}). The game starts when every seat is taken.`;
  $("turn").dataset.waiting = "true";
}

function receive(entry) {
  state.history[entry.version] = entry;
  if (entry.version === latest()) state.sending = false;
  if (state.wanted !== null) {
    if (entry.version >= state.wanted) {
      const wanted = state.wanted;
      state.wanted = null;
      show(wanted, false);
    } else renderScrub();
    return;
  }
  if (state.follow) show(latest(), true);
  else renderScrub();
}

function connect() {
  const source = new EventSource(`/api/games/${gameId}/events?from=0`);
  state.source = source;
  let pending = [];
  let scheduled = false;
  source.addEventListener("version", (event) => {
    // Versions may come in bursts (a replay): draw once per frame.
    pending.push(JSON.parse(event.data));
    if (!scheduled) {
      scheduled = true;
      requestAnimationFrame(() => {
        scheduled = false;
        const batch = pending;
        pending = [];
        for (const entry of batch.slice(0, -1)) state.history[entry.version] = entry;
        receive(batch[batch.length - 1]);
      });
    }
  });
  source.addEventListener("seats", (event) => {
    // Who holds the seats of a game waiting for players; the last seat taken starts it.
    const data = JSON.parse(event.data);
    state.summary = { ...state.summary, seats: data.seats, status: data.status };
    if (data.status === "waiting") waitingLine();
    else if (state.history.length) show(state.shown ?? latest(), state.follow);
  });
  source.addEventListener("end", () => {
    source.close();
    const finish = () => {
      if (pending.length || scheduled) return requestAnimationFrame(finish);
      state.ended = true;
      getJSON(`/api/games/${gameId}`).then((data) => {
        state.summary = data.game;
        show(state.wanted ?? (state.follow ? latest() : state.shown), state.follow && state.wanted === null);
        state.wanted = null;
        root.dataset.ended = "true";
      });
    };
    finish();
  });
  source.addEventListener("failure", (event) => {
    source.close();
    showError(JSON.parse(event.data).error);
  });
}

function bindControls() {
  $("first").addEventListener("click", () => show(0, false));
  $("prev").addEventListener("click", () => show((state.shown ?? 0) - 1, false));
  $("next").addEventListener("click", () => show((state.shown ?? 0) + 1, false));
  $("last").addEventListener("click", () => show(latest(), true));
  $("slider").addEventListener("input", (event) => show(Number(event.target.value), false));
  $("round").addEventListener("change", (event) => {
    const round = Number(event.target.value);
    const version = state.history.findIndex((e) => e && e.observation.round === round);
    if (version >= 0) show(version, false);
  });
  document.addEventListener("keydown", (event) => {
    if (event.target.tagName === "INPUT" || event.target.tagName === "SELECT") return;
    if (event.key === "ArrowLeft") show((state.shown ?? 0) - 1, false);
    if (event.key === "ArrowRight") show((state.shown ?? 0) + 1, false);
  });
}

async function start() {
  bindControls();
  const wanted = new URL(location.href).searchParams.get("v");
  if (wanted !== null && /^\d+$/.test(wanted)) {
    state.wanted = Number(wanted);
    state.follow = false;
  }
  try {
    const [components, game] = await Promise.all([getJSON("/api/components"), getJSON(`/api/games/${gameId}`)]);
    state.summary = game.game;
    state.you = game.seat;
    state.board = new Board(components, (option) => choose(option));
  } catch (error) {
    showError(error.message);
    $("header").textContent = `Game ${gameId}`;
    return;
  }
  if (state.summary.status === "waiting") waitingLine();
  connect();
  // Refresh seat names while the game runs (people and bots join, seats resign).
  setInterval(async () => {
    if (state.ended) return;
    try {
      state.summary = (await getJSON(`/api/games/${gameId}`)).game;
    } catch (error) {
      /* the event stream reports lasting failures */
    }
  }, 5000);
}

start();
