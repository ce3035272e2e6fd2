// The game page: follows a game over server-sent events, keeps every version it has seen, and shows any of
// them (the URL's ?v=N names it); the seat this browser holds answers its decisions from here.
import { Board, shortCost } from "./board.js";
import { getJSON, h, label, postJSON, SEAT_COLOURS, SEAT_SHAPES, seatName } from "./common.js";

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
  view: "table", // the tab on screen: table (city and mines), townhall, market, church, players
  chosenView: false, // the player picked a tab for this decision
  alerted: null, // the version whose "your turn" was last announced
  resigned: false,
};
const TITLE = document.title;
const VIEWS = ["table", "townhall", "market", "church", "players"];
// The decisions answered on a part of the board other than the city and mines.
const VIEW_OF_KIND = {
  DECISION_KIND_RIGHTS_TILE: "townhall",
  DECISION_KIND_PLOT_SQUARE: "table",
  DECISION_KIND_BUILD_SQUARE: "table",
  DECISION_KIND_MINE_SQUARE: "table",
  DECISION_KIND_TECH_SQUARE: "table",
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
    h("span", { class: "seatname", style: `color:${SEAT_COLOURS[seat]}` }, `${SEAT_SHAPES[seat]} ${seatName(state.summary, seat, state.you)}`),
    ` — ${obs.pending.question || label(obs.pending.kind)}`,
  );
}

// Your turn, unmissable: the title, the favicon, a sound if asked for, a notification if permitted.
function announce(obs, atLatest) {
  const mine = atLatest && state.you !== null && !state.resigned && obs.pending && obs.pending.seat === state.you && !obs.over;
  $("turn").classList.toggle("mine", Boolean(mine));
  document.title = mine ? `▶ Your turn · ${TITLE}` : TITLE;
  const icon = document.getElementById("favicon");
  if (icon) icon.href = mine ? "/static/favicon-turn.svg" : "/static/favicon.svg";
  root.dataset.yourTurn = mine ? "true" : "false";
  if (!mine || state.alerted === obs.version) return;
  const fresh = state.alerted === null || obs.version > state.alerted;
  state.alerted = obs.version;
  if (!fresh) return;
  if ($("sound").checked) beep();
  if (document.hidden && "Notification" in window && Notification.permission === "granted") {
    new Notification("Kutná Hora: your turn", { body: obs.pending.question || label(obs.pending.kind), tag: `kh-${gameId}` });
  }
}

function beep() {
  try {
    const audio = new AudioContext();
    const tone = audio.createOscillator();
    const gain = audio.createGain();
    tone.frequency.value = 660;
    gain.gain.setValueAtTime(0.15, audio.currentTime);
    gain.gain.exponentialRampToValueAtTime(0.001, audio.currentTime + 0.35);
    tone.connect(gain).connect(audio.destination);
    tone.start();
    tone.stop(audio.currentTime + 0.35);
  } catch (error) {
    /* no sound device: the title and favicon still tell */
  }
}

function renderScores(obs) {
  const rows = obs.players.map((p) => {
    const toPlay = obs.pending && obs.pending.seat === p.seat && !obs.over;
    const resigned = state.summary && state.summary.seats[p.seat] && state.summary.seats[p.seat].resigned;
    return h(
      "tr",
      { class: toPlay ? "to-play" : "", "data-scores-row": p.seat },
      h("td", {}, h("span", { class: "shape", style: `color:${SEAT_COLOURS[p.seat]}`, "aria-hidden": "true" }, SEAT_SHAPES[p.seat]), " ",
        seatName(state.summary, p.seat, state.you), resigned ? " (resigned)" : "", toPlay ? h("span", { class: "visually-hidden" }, " (to play)") : ""),
      h("td", { class: "points" }, String(p.points)),
      h("td", { class: "groschen" }, String(p.groschen)),
      h("td", { class: "reputation" }, String(p.reputation)),
    );
  });
  $("scores").replaceChildren(
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Seat"), h("th", { scope: "col" }, "Points"), h("th", { scope: "col" }, "Groschen"), h("th", { scope: "col" }, "Rep.")))
    , h("tbody", {}, rows),
  );
}

function setView(view, chosen) {
  state.view = view;
  if (chosen) state.chosenView = true;
  for (const tab of document.querySelectorAll(".tabs [role=tab]")) {
    const on = tab.dataset.view === view;
    tab.setAttribute("aria-selected", on ? "true" : "false");
    tab.tabIndex = on ? 0 : -1;
  }
  $("board").setAttribute("aria-labelledby", `tab-${view}`);
  for (const part of $("board").children) part.hidden = part.dataset.view !== view;
}

function renderMoves() {
  const list = $("moves");
  const items = [];
  // The moves that led to the version on screen, newest first: a replay tells nothing ahead of its position.
  // Every move known, newest first; those after the position on screen are greyed but can be clicked too.
  for (let v = 1; v <= latest(); v++) {
    const entry = state.history[v];
    if (!entry || !entry.move) continue;
    const m = entry.move;
    const where = v === state.shown ? "move current" : v > (state.shown ?? 0) ? "move ahead" : "move";
    const item = h(
      "li",
      { value: v, class: where, "data-version": v, tabindex: "0" },
      h("span", { class: "seatname", style: `color:${SEAT_COLOURS[m.seat]}` }, seatName(state.summary, m.seat, state.you)),
      ": ",
      h("b", {}, m.description),
      m.source ? h("i", {}, ` (${m.source})`) : "",
      m.events.length ? h("div", { class: "events" }, m.events.join(" · ")) : "",
    );
    item.addEventListener("click", () => show(v, false));
    item.addEventListener("keydown", (event) => {
      if (event.key === "Enter") show(v, false);
    });
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

// What the step a Rights card leads to costs: the town hall's columns that still hold buildings.
function rightsPrice(obs) {
  const costs = state.components.town_hall_costs || [];
  const prices = new Set();
  obs.town_hall.forEach((row) => row.stacks.forEach((stack, c) => {
    const cost = costs[c];
    if (stack.size && cost) prices.add(cost.currency === "CURRENCY_GROSCHEN" ? `${cost.amount} groschen` : `${cost.amount} permit${cost.amount === 1 ? "" : "s"}`);
  }));
  return prices.size ? `then a building's rights for ${[...prices].join(" or ")}` : "";
}

function optionPrice(obs, option) {
  const play = option.decision && option.decision.play_card;
  const price = cost(option);
  if (play && play.action === "ACTION_RIGHTS") {
    const next = rightsPrice(obs);
    return next ? `${price}; ${next}` : price;
  }
  return price;
}

// The question, worded for the position: a tax of 0 asks nothing.
function question(obs) {
  const pay = obs.pending.kind === "DECISION_KIND_TAX" && (obs.pending.options || []).find((o) => o.decision && o.decision.confirm && o.decision.confirm.yes);
  if (pay && !(pay.cost && pay.cost.groschen)) return "The tax is 0 for you: nothing to pay. Go on with “Pay the tax”.";
  return obs.pending.question || label(obs.pending.kind);
}

function renderOptions(obs, atLatest) {
  const panel = $("options");
  const mine = atLatest && state.you !== null && !state.resigned && obs.pending && obs.pending.seat === state.you && (obs.pending.options || []).length && !obs.over;
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
      h("span", { class: "price" }, optionPrice(obs, option)),
    ),
  );
  const unavailable = (obs.pending.unavailable || []).map((u) =>
    h("li", {}, `Card ${u.card}, ${label(u.action)}: ${u.reason}`),
  );
  const narrow = window.matchMedia("(max-width: 759.98px)").matches;
  if (panel.dataset.version !== String(obs.version)) panel.open = !narrow || panel.open;
  panel.dataset.version = String(obs.version);
  panel.replaceChildren(
    h("summary", {}, `Your decision (${obs.pending.options.length} option${obs.pending.options.length === 1 ? "" : "s"})`),
    h("p", { class: "question" }, question(obs)),
    h("div", { class: "option-list" }, buttons),
    unavailable.length ? h("details", { class: "unavailable" }, h("summary", {}, "Not playable now"), h("ul", {}, unavailable)) : "",
    h("p", { class: "note" }, "Highlighted squares and tiles on the board can be clicked too."),
  );
}

// The cards in your hand: each half is a button when playing it is one of your options.
function handCards(obs, me, atLatest) {
  const playing = atLatest && !state.resigned && obs.pending && obs.pending.seat === state.you && !state.sending;
  const options = new Map();
  if (playing) {
    for (const option of obs.pending.options || []) {
      const play = option.decision && option.decision.play_card;
      if (play && !play.no_effect) options.set(`${play.card}/${play.action}`, option);
    }
  }
  const reasons = new Map((obs.pending && obs.pending.unavailable ? obs.pending.unavailable : []).map((u) => [`${u.card}/${u.action}`, u.reason]));
  return me.hand.map((number) => {
    const card = state.board.cards.get(number);
    const half = (action) => {
      const option = options.get(`${number}/${action}`);
      const why = reasons.get(`${number}/${action}`);
      return h(
        "button",
        {
          class: option ? "half playable" : "half",
          disabled: !option,
          "data-option": option ? option.index : null,
          "aria-label": `Card ${number}: ${label(action)}${option ? ", " + optionPrice(obs, option) : why ? ", not playable: " + why : ""}`,
          title: option ? `${option.description || option.text} (${optionPrice(obs, option)})` : why || "",
          onclick: option ? () => choose(option) : null,
        },
        label(action),
      );
    };
    return h("div", { class: "handcard", "data-card": number }, h("span", { class: "num" }, `Card ${number}`), card ? [half(card.top), half(card.bottom)] : "");
  });
}

function renderYou(obs, atLatest) {
  const panel = $("you");
  if (state.you === null) {
    panel.hidden = true;
    return;
  }
  panel.hidden = false;
  const me = obs.players.find((p) => p.seat === state.you);
  // The seat's shape is drawn before the heading (CSS), so the heading reads "You play seat N".
  const parts = [h("h2", { class: "shaped", "data-shape": SEAT_SHAPES[state.you], style: `--seat:${SEAT_COLOURS[state.you]}` }, `You play seat ${state.you}`)];
  if (me) {
    const stat = (name, value, kind) => h("div", { class: kind }, name, h("b", {}, String(value)));
    parts.push(h("div", { class: "stats" },
      stat("Points", me.points, "points"), stat("Groschen", me.groschen, "groschen"), stat("Reputation", me.reputation, "reputation"),
      stat("Income", me.income, "income"), stat("Tax due", me.tax_due, "tax")));
    const production = me.production.filter((c) => c.amount).map((c) => `${label(c.commodity).toLowerCase()} ${c.amount}`);
    if (me.mine_ore) production.push(`ore from mines ${me.mine_ore}`);
    parts.push(h("p", { class: "production" }, `Production: ${production.join(", ") || "none"} · pelicans ${me.pelicans} · miners ${me.miners_pool}`));
    parts.push(h("div", { class: "hand", "aria-label": "Your hand" }, me.hand.length ? handCards(obs, me, atLatest) : h("span", { class: "note" }, "No cards in hand.")));
  }
  if ((obs.drawn || []).length) {
    parts.push(h("p", { class: "drawn" }, "You drew: " + obs.drawn.map((t) => `tile ${t} (${state.board.mineTileWords(t)})`).join("; ")));
  }
  if (state.resigned) {
    parts.push(h("p", { class: "resigned" }, "You resigned: the server plays your seat to the end."));
  } else if (!obs.over && state.summary && state.summary.status === "active") {
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
    h("h2", {}, "Final result"),
    verdict ? h("p", { class: "verdict" }, verdict) : "",
    h("table", { class: "list" }, h("thead", {}, h("tr", {}, ["Seat", "Score", "Groschen", "Result"].map((t) => h("th", { scope: "col" }, t)))), h("tbody", {}, rows)),
    state.you !== null ? h("button", { id: "rematch", onclick: rematch }, "Rematch: a new game, the same seats") : "",
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
  const interactive = atLatest && state.you !== null && !state.resigned && obs.pending && obs.pending.seat === state.you && !state.sending;
  const before = version > 0 && state.history[version - 1] ? state.history[version - 1].observation : null;
  const parts = state.board.draw(obs, state.summary, state.you, interactive, before);
  // A decision answered on another part of the board brings that part forward, unless a tab was chosen.
  const wanted = interactive ? VIEW_OF_KIND[obs.pending.kind] || null : null;
  if (wanted && !state.chosenView) state.view = wanted;
  if (interactive && state.lastPending !== obs.version) {
    state.lastPending = obs.version;
    state.chosenView = false;
    state.view = wanted || "table";
  }
  $("board").replaceChildren(...VIEWS.map((view) => h("div", { class: `view ${view}`, "data-view": view }, parts[view])));
  setView(state.view, false);
  for (const tab of document.querySelectorAll(".tabs [role=tab]")) {
    const count = tab.dataset.view === wanted ? h("span", { class: "badge" }, "choose here") : "";
    tab.replaceChildren(tab.dataset.label || (tab.dataset.label = tab.textContent), count);
  }
  renderScores(obs);
  renderOptions(obs, atLatest);
  renderYou(obs, atLatest);
  announce(obs, atLatest);
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

// A new game with the same seats: this browser on its seat, the same bots, other people's seats open.
async function rematch() {
  const bots = ["greedy", "mcts", "random"];
  const seats = state.summary.seats.map((s) => (s.seat === state.you ? "you" : bots.includes(s.name) ? s.name : "open"));
  const mine = state.summary.seats[state.you];
  try {
    const created = await postJSON("/api/games", { players: seats.length, seats, name: (mine && mine.name) || "person", delay: 0.5 });
    location.href = `/games/${created.game_id}`;
  } catch (error) {
    showError(error.message);
  }
}

// A tournament game played again here names the game it replays, with a link to the standings' row.
function origin() {
  const found = /^replay of (\S+)$/.exec((state.summary && state.summary.label) || "");
  const node = $("origin");
  if (!found) {
    node.hidden = true;
    return;
  }
  node.hidden = false;
  node.replaceChildren("Replay of tournament game ", h("a", { href: `/tournament#game-${found[1]}`, "data-original": found[1] }, found[1]));
}

async function resign() {
  if (!confirm("Resign? The server plays your seat to the end.")) return;
  try {
    const answer = await postJSON(`/api/games/${gameId}/resign`, {});
    state.summary = answer.game;
  } catch (error) {
    showError(error.message);
    return;
  }
  state.resigned = true;
  show(state.shown ?? latest(), state.follow);
}

function waitingLine() {
  const seats = state.summary.seats.map((s) => `seat ${s.seat}: ${s.joined ? s.name || "taken" : "open"}`);
  $("turn").textContent = `Waiting for players (${seats.join(", ")}). The game starts when every seat is taken.`;
  $("turn").dataset.waiting = "true";
}

function receive(entry) {
  // A new decision starts a new clock.
  if (state.summary && state.summary.clock && entry.version > latest()) setTimeout(refreshGame, 100);
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

async function refused(url) {
  let wait = 5;
  try {
    const response = await fetch(url, { headers: { accept: "application/json" } });
    if (response.ok) {
      // Allowed this time (the refusal has passed): let this request go and follow the game again.
      await response.body?.cancel();
      wait = 1;
    } else {
      const data = await response.json().catch(() => ({ error: `${url} answered ${response.status}.` }));
      showError(data.error || `${url} answered ${response.status}.`);
      wait = Math.max(1, Number(response.headers.get("retry-after")) || 5);
    }
  } catch (error) {
    showError(error.message);
  }
  setTimeout(() => {
    showError("");
    connect();
  }, wait * 1000);
}

function connect() {
  const source = new EventSource(`/api/games/${gameId}/events?from=${state.history.length}`);
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
  source.addEventListener("error", () => {
    // A stream that was refused (429: this visitor follows too many games at once) closes for good
    // without saying why; ask once more to read the sentence, show it, and try again when allowed.
    if (source.readyState !== EventSource.CLOSED || state.source !== source) return;
    refused(source.url);
  });
  source.addEventListener("failure", (event) => {
    source.close();
    const message = JSON.parse(event.data).error;
    showError(message);
    // The game server is away (stopped, restarting): follow again once it answers.
    if (/unavailable|cannot connect/i.test(message)) setTimeout(() => { showError(""); connect(); }, 3000);
  });
}

function bindControls() {
  $("first").addEventListener("click", () => show(0, false));
  $("prev").addEventListener("click", () => show((state.shown ?? 0) - 1, false));
  $("next").addEventListener("click", () => show((state.shown ?? 0) + 1, false));
  $("last").addEventListener("click", () => show(latest(), true));
  $("slider").addEventListener("input", (event) => show(Number(event.target.value), false));
  for (const tab of document.querySelectorAll(".tabs [role=tab]")) {
    tab.addEventListener("click", () => setView(tab.dataset.view, true));
    tab.addEventListener("keydown", (event) => {
      const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
      if (!step) return;
      event.preventDefault();
      event.stopPropagation();
      const next = VIEWS[(VIEWS.indexOf(state.view) + step + VIEWS.length) % VIEWS.length];
      setView(next, true);
      document.getElementById(`tab-${next}`).focus();
    });
  }
  $("sound").checked = localStorage.getItem("kh-sound") === "on";
  $("sound").addEventListener("change", (event) => {
    localStorage.setItem("kh-sound", event.target.checked ? "on" : "off");
    // Asking for notifications needs a click: the same one that turns the sound on.
    if (event.target.checked && "Notification" in window && Notification.permission === "default") Notification.requestPermission();
  });
  $("round").addEventListener("change", (event) => {
    const round = Number(event.target.value);
    const version = state.history.findIndex((e) => e && e.observation.round === round);
    if (version >= 0) show(version, false);
  });
  document.addEventListener("keydown", (event) => {
    if (event.target.tagName === "INPUT" || event.target.tagName === "SELECT" || event.target.getAttribute("role") === "tab") return;
    if (event.key === "ArrowLeft") show((state.shown ?? 0) - 1, false);
    if (event.key === "ArrowRight") show((state.shown ?? 0) + 1, false);
  });
}

// The clock: the time left for the pending decision and each seat's bank, ticking every second.
function clockWords(ms) {
  const seconds = Math.max(0, Math.ceil(ms / 1000));
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`;
}

function renderClock() {
  const node = $("clock");
  const settings = state.summary && state.summary.clock;
  if (!settings || state.ended) {
    node.hidden = true;
    return;
  }
  node.hidden = false;
  const parts = [];
  const running = state.clock;
  if (running) {
    const left = running.deadline_ms - Date.now();
    const banked = Math.max(0, left - running.bank_ms);
    const who = running.seat === state.you ? "you" : `P${running.seat}`;
    parts.push(`⏱ ${who}: ${clockWords(banked)} for this move`);
    parts.push(`bank ${clockWords(Math.min(left, running.bank_ms))}`);
  }
  const banks = (state.summary.time_banks_ms || []).map((ms, seat) => (running && seat === running.seat ? null : `P${seat} ${clockWords(ms)}`)).filter(Boolean);
  if (banks.length) parts.push(`banks: ${banks.join(", ")}`);
  node.textContent = parts.join(" · ");
}

async function refreshGame() {
  try {
    const data = await getJSON(`/api/games/${gameId}`);
    state.summary = data.game;
    state.clock = data.clock;
    renderClock();
  } catch (error) {
    /* the event stream reports lasting failures */
  }
}

let bound = false;

async function start() {
  if (!bound) bindControls();
  bound = true;
  const wanted = new URL(location.href).searchParams.get("v");
  if (wanted !== null && /^\d+$/.test(wanted)) {
    state.wanted = Number(wanted);
    state.follow = false;
  }
  try {
    const [components, game] = await Promise.all([getJSON("/api/components"), getJSON(`/api/games/${gameId}`)]);
    state.summary = game.game;
    state.clock = game.clock;
    state.you = game.seat;
    state.resigned = game.seat !== null && Boolean(game.game.seats[game.seat] && game.game.seats[game.seat].resigned);
    state.components = components;
    state.board = new Board(components, (option) => choose(option));
  } catch (error) {
    showError(error.message);
    $("header").textContent = `Game ${gameId}`;
    // While the game server cannot be reached, try again every few seconds.
    if (/unavailable/.test(error.message)) setTimeout(start, 3000);
    return;
  }
  if (state.summary.status === "waiting") waitingLine();
  origin();
  connect();
  // Refresh seat names and the clock while the game runs (people and bots join, seats resign).
  setInterval(() => {
    if (!state.ended) refreshGame();
  }, 5000);
  setInterval(renderClock, 1000);
}

start();
