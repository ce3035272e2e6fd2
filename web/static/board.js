// The board: the whole public game of one observation drawn as SVG, from the observation and the
// component set, both as the server sent them (field names as in the .proto files).
import { label, SEAT_COLOURS, SEAT_SHAPES } from "./common.js";

const NS = "http://www.w3.org/2000/svg";

export const GUILD_COLOURS = {
  GUILD_METALLURGISTS: "#c3ccd4",
  GUILD_MINERS: "#8c7a6b",
  GUILD_BUILDERS: "#b98a55",
  GUILD_SCRIBES: "#9cb6d6",
  GUILD_GROCERS: "#9cc27a",
  GUILD_INNKEEPERS: "#e2a94b",
};
export const PUBLIC_COLOURS = {
  COLOR_GREEN: "#5c9e5c",
  COLOR_SILVER: "#aeb7c0",
  COLOR_YELLOW: "#e6c94d",
  COLOR_RED: "#c24a3e",
};
const COMMODITY_GUILD = {
  COMMODITY_SILVER: "GUILD_METALLURGISTS",
  COMMODITY_ORE: "GUILD_MINERS",
  COMMODITY_WOOD: "GUILD_BUILDERS",
  COMMODITY_PERMITS: "GUILD_SCRIBES",
  COMMODITY_FOOD: "GUILD_GROCERS",
  COMMODITY_BEER: "GUILD_INNKEEPERS",
};
const ARM_OF = {
  COMMODITY_WOOD: "ARM_WOOD",
  COMMODITY_FOOD: "ARM_FOOD",
  COMMODITY_BEER: "ARM_BEER",
  COMMODITY_SILVER: "ARM_SILVER_ORE",
  COMMODITY_ORE: "ARM_SILVER_ORE",
  COMMODITY_PERMITS: "ARM_PERMITS",
};
const ACTION_SHORT = {
  ACTION_RIGHTS: "Rights",
  ACTION_INCOME: "Income",
  ACTION_PLOT: "Plot",
  ACTION_MINE: "Mine",
  ACTION_BUILDING: "Build",
  ACTION_JOKER: "Joker",
  ACTION_ST_BARBARA: "Barbara",
};
const BARBARA_SHORT = {
  BARBARA_EFFECT_REPUTATION: "+2 rep.",
  BARBARA_EFFECT_FREE_RIGHTS: "free Rights",
  BARBARA_EFFECT_HOUSE_FOR_PRODUCTION: "house → +2",
  BARBARA_EFFECT_FREE_PLOT: "free Plot",
  BARBARA_EFFECT_DOUBLE_INCOME: "2× Income",
  BARBARA_EFFECT_SEAT_FROM_BANK: "patrician",
  BARBARA_EFFECT_PUBLIC_NEIGHBOURS: "neighbours",
  BARBARA_EFFECT_FREE_BUILDING: "free Build",
  BARBARA_EFFECT_DOUBLE_MINE: "2× Mine",
  BARBARA_EFFECT_SCORE_BUILDING: "score dots",
  BARBARA_EFFECT_FINAL: "+5 points",
};
const REWARD_SHORT = {
  HOUSE_REWARD_KIND_PUBLIC_BUILDING: () => "public",
  HOUSE_REWARD_KIND_PELICAN: (a) => `${a} pelican`,
  HOUSE_REWARD_KIND_REPUTATION: (a) => `+${a} rep`,
  HOUSE_REWARD_KIND_POINTS: (a) => `${a} pt`,
};
const POPULATION = ["COMMODITY_WOOD", "COMMODITY_FOOD", "COMMODITY_BEER"];
const ORE = ["COMMODITY_SILVER", "COMMODITY_ORE", "COMMODITY_PERMITS"];

function s(tag, attrs = {}, ...children) {
  const node = document.createElementNS(NS, tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    node.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function text(x, y, content, attrs = {}) {
  return s("text", { x, y, "text-anchor": "middle", ...attrs }, content);
}

function svg(width, height, cls, title, ...children) {
  return s("svg", { viewBox: `0 0 ${width} ${height}`, width, height, class: cls, role: "img", "aria-label": title, preserveAspectRatio: "xMidYMin meet" }, ...children);
}

// What an option costs, in a few characters for a label on the board.
export function shortCost(option) {
  const c = option.cost;
  if (!c) return "free";
  const parts = [];
  if (c.groschen) parts.push(`${c.groschen} gr.`);
  if (c.reputation) parts.push(`−${c.reputation} rep.`);
  if (c.points) parts.push(`−${c.points} pt`);
  if (c.pelicans) parts.push(`${c.pelicans} pelican`);
  return parts.length ? parts.join(" ") : "free";
}

// The seats whose squares, tiles and stats changed between two observations (the last decision's marks).
function changedKeys(before, after) {
  const out = new Set();
  if (!before) return out;
  const was = new Map(before.city.map((t) => [key(t.square), `${t.building}/${t.owner}`]));
  for (const t of after.city) if (was.get(key(t.square)) !== `${t.building}/${t.owner}`) out.add(`city:${key(t.square)}`);
  const plots = new Set(before.plots.map((p) => `${key(p.square)}/${p.seat}`));
  for (const p of after.plots) if (!plots.has(`${key(p.square)}/${p.seat}`)) out.add(`city:${key(p.square)}`);
  const mines = new Set(before.mines.map((m) => `${key(m.square)}/${m.tile}`));
  for (const m of after.mines) if (!mines.has(`${key(m.square)}/${m.tile}`)) out.add(`mine:${key(m.square)}`);
  const tops = new Map();
  before.town_hall.forEach((row, r) => row.stacks.forEach((st, c) => tops.set(`${r},${c}`, `${st.top}/${st.size}`)));
  after.town_hall.forEach((row, r) => row.stacks.forEach((st, c) => {
    if (tops.get(`${r},${c}`) !== `${st.top}/${st.size}`) out.add(`hall:${st.top}`);
  }));
  return out;
}

function sheet(title, node, cls = "") {
  const box = document.createElement("figure");
  box.className = `sheet ${cls}`;
  const caption = document.createElement("figcaption");
  caption.textContent = title;
  box.append(caption, node);
  return box;
}

// Break a name into lines of at most `width` characters.
function lines(name, width) {
  const out = [];
  let line = "";
  for (const word of String(name).split(" ")) {
    if (line && (line + " " + word).length > width) {
      out.push(line);
      line = word;
    } else line = line ? line + " " + word : word;
  }
  if (line) out.push(line);
  return out.slice(0, 3);
}

function buildingColour(building) {
  if (!building) return "#ddd";
  if (building.guild && building.guild !== "GUILD_UNSPECIFIED") return GUILD_COLOURS[building.guild] || "#ddd";
  return PUBLIC_COLOURS[building.color] || "#ddd";
}

function dotsOf(building, x, y, w, hgt, r = 4.5) {
  if (!building || !building.dots) return [];
  const d = building.dots;
  const out = [];
  const dot = (cx, cy) => s("circle", { cx, cy, r, class: "bdot" });
  if (d.north) out.push(dot(x + w / 2, y + r + 1));
  if (d.south) out.push(dot(x + w / 2, y + hgt - r - 1));
  if (d.west) out.push(dot(x + r + 1, y + hgt / 2));
  if (d.east) out.push(dot(x + w - r - 1, y + hgt / 2));
  return out;
}

const key = (sq) => `${sq.row},${sq.col}`;

// Options that name a square or a tile, by where they can be clicked.
function picks(obs, kinds) {
  const out = new Map();
  if (!obs.pending || !kinds.includes(obs.pending.kind)) return out;
  for (const option of obs.pending.options || []) {
    const d = option.decision || {};
    if (d.choose_square) out.set(key(d.choose_square.square), option);
    if (d.choose_tile) out.set(`tile:${d.choose_tile.tile}`, option);
  }
  return out;
}

export class Board {
  constructor(components, onPick) {
    this.c = components;
    this.onPick = onPick;
    this.buildings = new Map(components.buildings.map((b) => [b.id, b]));
    this.mineTiles = new Map([...components.mine_tiles, ...components.technology_tiles].map((t) => [t.id, t]));
    this.rockStars = new Map(components.rock_tiles.map((r) => [r.id, r.stars]));
    this.cards = new Map(components.action_cards.map((c) => [c.number, c]));
  }

  building(id) {
    return this.buildings.get(id);
  }

  buildingName(id) {
    const b = this.buildings.get(id);
    return b ? b.name : `building ${id}`;
  }

  pickable(node, option) {
    if (!option || !this.onPick) return node;
    node.classList.add("pick");
    node.setAttribute("data-option", option.index);
    node.setAttribute("tabindex", "0");
    node.setAttribute("role", "button");
    node.setAttribute("aria-label", `${option.description || option.text}, ${shortCost(option)}`);
    node.addEventListener("click", () => this.onPick(option));
    node.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === " ") {
        event.preventDefault();
        this.onPick(option);
      }
    });
    // The price on the element itself, not only in a tooltip.
    // On a square the label sits at the top, clear of what the square holds; on a town-hall tile at its
    // bottom left, clear of the building's name and the stack's count.
    const tile = node.querySelector("rect.tile");
    const box = tile || node.querySelector("rect");
    const x = Number(box.getAttribute("x"));
    const y = Number(box.getAttribute("y"));
    const w = Number(box.getAttribute("width"));
    const hgt = Number(box.getAttribute("height"));
    const words = shortCost(option);
    const lw = Math.min(w - 4, 8 + words.length * 6.4);
    const lx = tile ? x + 6 : x + (w - lw) / 2;
    const ly = tile ? y + hgt - 19 : y + 2;
    node.append(
      s("g", { class: "picklabel", "data-cost": words },
        s("rect", { x: lx, y: ly, width: lw, height: 15, rx: 3 }),
        text(lx + lw / 2, ly + 11, words)),
    );
    node.append(s("title", {}, `${option.description || option.text} (${words})`));
    return node;
  }

  explain(node, words) {
    if (words) node.append(s("title", {}, words));
    return node;
  }

  words(kind, id) {
    const w = this.c.words && this.c.words[kind];
    return w ? w[String(id)] || "" : "";
  }

  // Every part of the board, by the view (tab) that shows it: city and mines together, then the others.
  draw(obs, summary, you, interactive, before = null) {
    this.changed = changedKeys(before, obs);
    return {
      table: [sheet("Kutná Hora", this.city(obs, interactive), "city"), sheet("Mines", this.mines(obs, interactive), "mines")],
      townhall: [sheet("Town hall", this.townHall(obs, interactive), "townhall")],
      market: [sheet("Price stands", this.market(obs), "market")],
      church: [sheet("St. Barbara, the council and the event", this.church(obs), "church")],
      players: obs.players.map((board) => this.player(obs, board, summary, you)),
    };
  }

  city(obs, interactive) {
    const small = obs.players.length === 2;
    const board =
      this.c.city_boards.find((b) => b.name === (small ? "small" : "large")) || this.c.city_boards[0];
    const C = 86;
    const pad = 22;
    const rows = board.rows;
    const cols = board.columns;
    const blocked = new Set(board.blocked.map(key));
    const tiles = new Map(obs.city.map((t) => [key(t.square), t]));
    const plots = new Map(obs.plots.map((p) => [key(p.square), p.seat]));
    const choices = interactive ? picks(obs, ["DECISION_KIND_PLOT_SQUARE", "DECISION_KIND_BUILD_SQUARE"]) : new Map();
    const g = [];
    g.push(s("rect", { x: 0, y: 0, width: cols * C + 2 * pad, height: rows * C + 2 * pad, rx: 10, class: "cityground" }));
    for (let c = 0; c < cols; c++) g.push(text(pad + c * C + C / 2, 15, c, { class: "axis" }));
    for (let r = 0; r < rows; r++) g.push(text(9, pad + r * C + C / 2 + 4, r, { class: "axis" }));
    for (let r = 0; r < rows; r++) {
      for (let c = 0; c < cols; c++) {
        const x = pad + c * C;
        const y = pad + r * C;
        const k = `${r},${c}`;
        if (blocked.has(k)) {
          g.push(s("rect", { x, y, width: C, height: C, class: "blocked" }));
          continue;
        }
        const cell = s("g", { class: "square", "data-square": k });
        cell.append(s("rect", { x, y, width: C, height: C, class: "cityfloor" }));
        const tile = tiles.get(k);
        if (tile) {
          const b = this.building(tile.building);
          const owned = tile.owner !== undefined && tile.owner !== null;
          this.explain(cell, this.words("buildings", tile.building) + (owned ? ` · built by P${tile.owner}` : ""));
          cell.append(
            s("rect", {
              x: x + 4, y: y + 4, width: C - 8, height: C - 8, rx: 5,
              fill: buildingColour(b),
              class: owned ? "building owned" : "building public",
              stroke: owned ? SEAT_COLOURS[tile.owner] : "#6b5d45",
              "stroke-width": owned ? 4 : 1.5,
            }),
          );
          const words = lines(b ? b.name : "?", 11);
          // A three-line name is set smaller so that the owner's mark below it stays clear.
          const step = words.length > 2 ? 10 : 12;
          words.forEach((line, i) =>
            cell.append(text(x + C / 2, y + 24 + i * step, line, { class: words.length > 2 ? "bname tight" : "bname" })),
          );
          cell.append(...dotsOf(b, x + 4, y + 4, C - 8, C - 8));
          if (owned) {
            cell.append(s("circle", { cx: x + 17, cy: y + C - 17, r: 9, fill: SEAT_COLOURS[tile.owner], class: "owner" }));
            cell.append(text(x + 17, y + C - 13.5, `P${tile.owner}`, { class: "ownertext" }));
            cell.append(text(x + C - 14, y + C - 12, SEAT_SHAPES[tile.owner], { class: "ownershape", fill: SEAT_COLOURS[tile.owner] }));
          } else {
            cell.append(text(x + C / 2, y + C - 11, "public", { class: "small" }));
          }
        } else if (plots.has(k)) {
          const seat = plots.get(k);
          cell.append(s("path", { d: `M${x + C / 2 - 2} ${y + 58} v-34 l18 8 l-18 8`, fill: SEAT_COLOURS[seat], stroke: "#333", class: "plot" }));
          cell.append(text(x + C / 2, y + 74, `plot P${seat}`, { class: "small" }));
        }
        const option = choices.get(k);
        if (option) this.pickable(cell, option);
        if (this.changed.has(`city:${k}`)) cell.classList.add("changed");
        g.push(cell);
      }
    }
    for (const dot of board.edge_dots) {
      const x = pad + dot.square.col * C;
      const y = pad + dot.square.row * C;
      const at = {
        SIDE_NORTH: [x + C / 2, y - 1],
        SIDE_SOUTH: [x + C / 2, y + C + 1],
        SIDE_WEST: [x - 1, y + C / 2],
        SIDE_EAST: [x + C + 1, y + C / 2],
      }[dot.side];
      if (at) g.push(s("circle", { cx: at[0], cy: at[1], r: 5, class: "edgedot" }));
    }
    return svg(cols * C + 2 * pad, rows * C + 2 * pad, "city-svg", "The city of Kutná Hora", g);
  }

  mines(obs, interactive) {
    const area = this.c.mine_area;
    const M = 64;
    const left = 44;
    const top = 26;
    const placed = new Map(obs.mines.map((m) => [key(m.square), m]));
    const rocks = new Map(obs.rocks.map((r) => [key(r.square), r]));
    const entrances = new Set(area.entrances.map(key));
    const choices = interactive ? picks(obs, ["DECISION_KIND_MINE_SQUARE", "DECISION_KIND_TECH_SQUARE"]) : new Map();
    const width = left + area.columns * M + 8;
    const height = top + area.rows * M + 40;
    const g = [s("rect", { x: 0, y: 0, width, height, rx: 10, class: "mineground" })];
    for (let c = 0; c < area.columns; c++) g.push(text(left + c * M + M / 2, 16, c, { class: "axis light" }));
    for (let r = 0; r < area.rows; r++) {
      g.push(text(20, top + r * M + M / 2 + 5, `${area.row_stars[r] || 0}★`, { class: "rowstars" }));
      for (let c = 0; c < area.columns; c++) {
        const x = left + c * M;
        const y = top + r * M;
        const k = `${r},${c}`;
        const cell = s("g", { class: "square", "data-mine-square": k });
        cell.append(s("rect", { x, y, width: M, height: M, class: "rock-floor" }));
        if (entrances.has(k)) {
          cell.append(s("path", { d: `M${x + 14} ${y + M - 6} v-20 a18 18 0 0 1 36 0 v20`, class: "entrance" }));
          cell.append(text(x + M / 2, y + 14, `entry ${area.entrance_cost}`, { class: "small light" }));
        }
        const m = placed.get(k);
        const rock = rocks.get(k);
        if (m) {
          const t = this.mineTiles.get(m.tile) || {};
          cell.append(s("rect", { x: x + 3, y: y + 3, width: M - 6, height: M - 6, rx: 4, class: t.draws ? "minetile tech" : "minetile" }));
          cell.append(text(x + 22, y + 26, `${t.stars || 0}★`, { class: "stars" }));
          cell.append(text(x + M / 2, y + 44, `ore ${t.ore || 0}`, { class: "small" }));
          if (t.points) cell.append(text(x + M / 2, y + 56, `${t.points} pt`, { class: "small" }));
          cell.append(s("circle", { cx: x + M - 15, cy: y + 16, r: 9, fill: SEAT_COLOURS[m.owner], class: "miner" }));
          cell.append(text(x + M - 15, y + 19.5, `P${m.owner}`, { class: "ownertext" }));
          this.explain(cell, `${this.words("mine_tiles", m.tile)} · dug by P${m.owner}`);
        } else if (rock) {
          cell.append(s("rect", { x: x + 3, y: y + 3, width: M - 6, height: M - 6, rx: 10, class: "rock" }));
          cell.append(text(x + M / 2, y + 30, "rock", { class: "small light" }));
          cell.append(text(x + M / 2, y + 46, `${this.rockStars.get(rock.tile) || 0}★`, { class: "stars light" }));
        }
        const option = choices.get(k);
        if (option) this.pickable(cell, option);
        if (this.changed.has(`mine:${k}`)) cell.classList.add("changed");
        g.push(cell);
      }
    }
    const caption = `stack ${obs.mine_stack_size} · discards ${obs.mine_discard_size} · ${obs.mine_draws} drawn per Mine · technology taken ${obs.technology_taken}`;
    g.push(text(width / 2, height - 14, caption, { class: "caption light" }));
    return svg(width, height, "mines-svg", "The mines", g);
  }

  townHall(obs, interactive) {
    const W = 156;
    const H = 84;
    const left = 18;
    const top = 30;
    const columns = Math.max(1, ...obs.town_hall.map((r) => r.stacks.length));
    const choices = interactive ? picks(obs, ["DECISION_KIND_RIGHTS_TILE"]) : new Map();
    const width = left + columns * (W + 12) + 6;
    const height = top + obs.town_hall.length * (H + 18) + 24;
    const g = [s("rect", { x: 0, y: 0, width, height, rx: 10, class: "hallground" })];
    obs.town_hall.forEach((row, r) => {
      const rowColour = PUBLIC_COLOURS[this.c.town_hall_rows[r]] || "#999";
      g.push(s("rect", { x: 4, y: top + r * (H + 18), width: 8, height: H, fill: rowColour, rx: 3 }));
    });
    for (let c = 0; c < columns; c++) {
      const cost = this.c.town_hall_costs[c];
      let words = `column ${c}`;
      if (cost) words = cost.currency === "CURRENCY_GROSCHEN" ? `${cost.amount} groschen` : `${cost.amount} permit${cost.amount === 1 ? "" : "s"}`;
      g.push(text(left + c * (W + 12) + W / 2, 19, words, { class: "cost" }));
    }
    obs.town_hall.forEach((row, r) => {
      row.stacks.forEach((stack, c) => {
        const x = left + c * (W + 12);
        const y = top + r * (H + 18);
        const b = this.building(stack.top);
        const node = s("g", { class: "stack", "data-building": stack.top });
        for (let i = Math.min(stack.size - 1, 3); i > 0; i--) {
          node.append(s("rect", { x: x + i * 3, y: y + i * 3, width: W, height: H, rx: 5, class: "under" }));
        }
        node.append(s("rect", { x, y, width: W, height: H, rx: 5, fill: buildingColour(b), class: "tile" }));
        lines(b ? b.name : "?", 20).slice(0, 2).forEach((line, i) => node.append(text(x + W / 2, y + 18 + i * 13, line, { class: "bname" })));
        if (b) {
          const kind = b.guild !== "GUILD_UNSPECIFIED" ? label(b.guild) : `${label(b.color)} public`;
          const production = b.production ? ` · +${b.production} ${label(b.commodity).toLowerCase()}` : "";
          node.append(text(x + W / 2, y + 48, `${kind}${production}`, { class: "small" }));
          node.append(text(x + W / 2, y + 62, `wood ${b.wood_cost} · plot ${b.plot_cost}`, { class: "small" }));
          node.append(...dotsOf(b, x, y, W, H, 3.5));
        }
        node.append(text(x + W - 8, y + H - 7, `×${stack.size}`, { class: "count" }));
        this.explain(node, `${this.words("buildings", stack.top)} · ${stack.size} in the stack`);
        const option = choices.get(`tile:${stack.top}`);
        if (option) this.pickable(node, option);
        if (this.changed.has(`hall:${stack.top}`)) node.classList.add("changed");
        g.push(node);
      });
    });
    g.push(text(width / 2, height - 8, `red buildings still to come: ${obs.red_stack_size} · built by the town: ${obs.town_discards.length}`, { class: "caption" }));
    return svg(width, height, "hall-svg", "The town hall", g);
  }

  market(obs) {
    const prices = new Map(obs.prices.map((p) => [p.commodity, p]));
    const arms = new Map(obs.arms.map((a) => [a.arm, a.notch]));
    const decks = new Map(obs.deck_positions.map((d) => [d.deck, d.position]));
    const notches = this.c.arm_notches || 6;
    const N = 30;
    const left = 70;
    const width = left + notches * N + 70;
    const standHeight = 3 * 34 + 48;
    const height = 2 * standHeight + 8;
    const g = [];
    const stands = [
      ["DECK_POPULATION", "Population", POPULATION, this.c.population_deck],
      ["DECK_ORE", "Ore", ORE, this.c.ore_deck],
    ];
    stands.forEach(([deck, title, commodities, cards], i) => {
      const y0 = i * (standHeight + 8);
      const position = decks.get(deck) || 0;
      const card = cards && cards.cards ? cards.cards[Math.min(position, cards.cards.length - 1)] : null;
      const back = cards && position > cards.turn_over_after ? " (turned over)" : "";
      g.push(s("rect", { x: 0, y: y0, width, height: standHeight, rx: 10, class: "stand" }));
      g.push(text(12, y0 + 20, `${title} stand · card ${position}${back}`, { class: "standtitle", "text-anchor": "start" }));
      g.push(text(width - 34, y0 + 38, "price", { class: "axis light" }));
      g.push(text(8 + (left - 14) / 2, y0 + 38, "arm at", { class: "axis light" }));
      for (let n = 0; n < notches; n++) g.push(text(left + n * N + N / 2, y0 + 38, n, { class: "axis light" }));
      commodities.forEach((commodity, j) => {
        const y = y0 + 44 + j * 34;
        const notch = arms.get(ARM_OF[commodity]) || 0;
        const row = card ? (card.prices.find((p) => p.commodity === commodity) || { prices: [] }).prices : [];
        g.push(s("rect", { x: 8, y: y + 2, width: left - 14, height: 26, rx: 4, fill: GUILD_COLOURS[COMMODITY_GUILD[commodity]] }));
        g.push(text(8 + (left - 14) / 2, y + 19, label(commodity), { class: "small" }));
        for (let n = 0; n < notches; n++) {
          const here = n === notch;
          g.push(s("rect", { x: left + n * N + 2, y: y + 2, width: N - 4, height: 26, rx: 3, class: here ? "notch arm" : "notch" }));
          if (row[n] !== undefined) g.push(text(left + n * N + N / 2, y + 20, row[n], { class: here ? "notchprice here" : "notchprice" }));
        }
        const entry = prices.get(commodity);
        const price = s("g", { class: "price", "data-price": commodity });
        price.append(s("circle", { cx: width - 34, cy: y + 15, r: 14, class: "coin" }));
        if (entry && entry.no_market) {
          // The red X of a card without a market for this commodity, under the price so it stays readable.
          price.append(s("path", { d: `M${width - 46} ${y + 3} l24 24 M${width - 22} ${y + 3} l-24 24`, class: "nomarket" }));
          price.append(s("title", {}, `${label(commodity)}: no market on this card`));
          price.setAttribute("data-no-market", "true");
        }
        price.append(text(width - 34, y + 20.5, entry ? entry.price : "?", { class: "pricetext" }));
        g.push(price);
      });
    });
    return svg(width, height, "market-svg", "The price stands", g);
  }

  church(obs) {
    const tiles = this.c.barbara_tiles;
    const T = 58;
    const width = Math.max(tiles.length * (T + 4) + 10, 560);
    const height = 240;
    const g = [s("rect", { x: 0, y: 0, width, height, rx: 10, class: "churchground" })];
    g.push(text(10, 18, "St. Barbara: the tile on offer is highlighted", { class: "small bold", "text-anchor": "start" }));
    tiles.forEach((tile, i) => {
      const x = 8 + i * (T + 4);
      const y = 26;
      const state = tile.number < obs.barbara_next ? "flipped" : tile.number === obs.barbara_next ? "current" : "waiting";
      const node = s("g", { class: `barbara ${state}`, "data-barbara": tile.number });
      node.append(s("rect", { x, y, width: T, height: T, rx: 5 }));
      node.append(text(x + T / 2, y + 18, tile.number, { class: "bnum" }));
      lines(BARBARA_SHORT[tile.effect] || label(tile.effect), 10).forEach((line, k) => node.append(text(x + T / 2, y + 33 + k * 11, line, { class: "tiny" })));
      if (tile.flip_tax) node.append(text(x + T / 2, y + T - 4, `tax +${tile.flip_tax}`, { class: "tiny" }));
      this.explain(node, this.words("barbara", tile.number));
      g.push(node);
    });
    // Patricians: the bank, the pool and the council, a disc per patrician.
    const places = [
      ["Bank", obs.patrician_bank],
      ["Pool", obs.patrician_pool],
      ["Council", obs.council],
    ];
    places.forEach(([name, counts], i) => {
      const x = 8 + i * 150;
      const y = 100;
      g.push(s("rect", { x, y, width: 142, height: 72, rx: 6, class: "patricians" }));
      g.push(text(x + 8, y + 16, name, { class: "small", "text-anchor": "start" }));
      let n = 0;
      for (const entry of counts) {
        for (let k = 0; k < entry.count; k++, n++) {
          g.push(s("circle", { cx: x + 14 + (n % 8) * 16, cy: y + 34 + Math.floor(n / 8) * 18, r: 7, fill: PUBLIC_COLOURS[entry.color], class: "patrician" }));
        }
      }
      const total = counts.reduce((sum, e) => sum + e.count, 0);
      if (!total) g.push(text(x + 71, y + 44, "none", { class: "small" }));
    });
    const event = obs.current_event !== undefined ? this.c.event_cards.find((e) => e.id === obs.current_event) : null;
    const ex = 460;
    g.push(s("rect", { x: ex, y: 100, width: width - ex - 8, height: 72, rx: 6, class: "eventcard" }));
    g.push(text(ex + 8, 116, "Event", { class: "small", "text-anchor": "start" }));
    if (event) {
      g.push(this.explain(s("rect", { x: ex, y: 100, width: width - ex - 8, height: 72, rx: 6, class: "eventcard", "data-event": event.id }), this.words("events", event.id)));
      lines(event.name, 14).forEach((line, k) => g.push(text(ex + (width - ex - 8) / 2, 134 + k * 13, line, { class: "bname" })));
      g.push(text(ex + (width - ex - 8) / 2, 165, `tax +${event.tax} · pop +${event.population} · ore +${event.ore}`, { class: "tiny" }));
    } else g.push(text(ex + (width - ex - 8) / 2, 140, "none this round", { class: "small" }));
    const hand = obs.building_in_hand !== undefined ? `Building in hand: ${this.buildingName(obs.building_in_hand)}` : "";
    const kept = obs.kept_tile !== undefined ? `Tile being placed: ${this.mineTileWords(obs.kept_tile)}` : "";
    // The rounds track and the tax.
    g.push(text(10, 196, "Round", { class: "small bold", "text-anchor": "start" }));
    for (let r = 1; r <= obs.rounds; r++) {
      const cx = 70 + (r - 1) * 30;
      const state = r < obs.round ? "past" : r === obs.round ? "now" : "later";
      g.push(s("circle", { cx, cy: 192, r: 11, class: `round ${state}`, "data-round": r }));
      g.push(text(cx, 196, r, { class: "small bold" }));
    }
    const tx = 90 + obs.rounds * 30;
    g.push(s("rect", { x: tx, y: 180, width: 74, height: 24, rx: 4, class: "taxbox", "data-tax": obs.tax }));
    g.push(text(tx + 37, 196, `tax ${obs.tax}`, { class: "small bold" }));
    g.push(text(tx + 90, 196, `events revealed ${obs.revealed_events.length}`, { class: "small", "text-anchor": "start" }));
    g.push(text(10, 214, [hand, kept].filter(Boolean).join(" · "), { class: "small", "text-anchor": "start" }));
    return svg(width, height, "church-svg", "St. Barbara, the council and the event", g);
  }

  mineTileWords(id) {
    const t = this.mineTiles.get(id);
    if (!t) return `tile ${id}`;
    return `${t.stars}★ ore ${t.ore}, population +${t.population}, ${t.points} pt, wood ${t.wood_cost}`;
  }

  player(obs, p, summary, you) {
    const W = 360;
    const H = 346;
    const colour = SEAT_COLOURS[p.seat];
    const entry = summary && summary.seats ? summary.seats[p.seat] : null;
    const name = entry && entry.name ? entry.name : "";
    const toPlay = obs.pending && obs.pending.seat === p.seat && !obs.over;
    const g = [s("rect", { x: 1, y: 1, width: W - 2, height: H - 2, rx: 10, class: "playerground", stroke: colour })];
    g.push(s("rect", { x: 1, y: 1, width: W - 2, height: 30, rx: 10, fill: colour }));
    g.push(text(12, 21, `${SEAT_SHAPES[p.seat]} P${p.seat} · ${name || "seat " + p.seat}${p.seat === you ? " (you)" : ""}`, { class: "playername", "text-anchor": "start" }));
    if (toPlay) g.push(text(W - 12, 21, "▶ to play", { class: "playername", "text-anchor": "end" }));
    const stats = [
      ["Points", p.points, "score"],
      ["Groschen", p.groschen, "groschen"],
      ["Reputation", p.reputation, "reputation"],
      ["Income", p.income, "income"],
      ["Tax due", p.tax_due, "tax"],
    ];
    stats.forEach(([title, value, kind], i) => {
      const x = 8 + i * 70;
      const node = s("g", { class: `stat ${kind}`, [`data-${kind}-seat`]: p.seat });
      node.append(s("rect", { x, y: 38, width: 64, height: 40, rx: 5, class: "statbox" }));
      node.append(text(x + 32, 52, title, { class: "tiny" }));
      node.append(text(x + 32, 71, value, { class: "statvalue" }));
      g.push(node);
    });
    // Guild rows and their houses; a removed house shows the reward printed under it.
    const rewards = this.c.house_rewards || [];
    const perRow = this.c.houses_per_row || 4;
    const guilds = p.guilds.length ? p.guilds : p.guild_set;
    guilds.forEach((guild, r) => {
      const y = 86 + r * 34;
      const removed = p.guilds.length ? p.houses_removed[r] || 0 : 0;
      g.push(s("rect", { x: 8, y, width: 104, height: 28, rx: 4, fill: GUILD_COLOURS[guild] || "#ccc" }));
      g.push(text(60, y + 18, label(guild), { class: "small" }));
      for (let i = 0; i < perRow; i++) {
        const x = 120 + i * 58;
        const reward = rewards[r] && rewards[r].rewards[i];
        if (i < removed) {
          g.push(s("rect", { x, y, width: 52, height: 28, rx: 4, class: "houseplace" }));
          if (reward) g.push(text(x + 26, y + 18, (REWARD_SHORT[reward.kind] || (() => ""))(reward.amount), { class: "tiny" }));
        } else {
          g.push(s("path", { d: `M${x + 10} ${y + 26} v-13 l16 -11 l16 11 v13 z`, fill: colour, class: "house" }));
        }
      }
    });
    if (!p.guilds.length && !p.guild_set.length) g.push(text(W / 2, 120, "no guilds chosen yet", { class: "small" }));
    // Production, miners, pelicans, plots.
    let y = 196;
    const production = p.production.filter((c) => c.amount).map((c) => `${label(c.commodity).toLowerCase()} ${c.amount}`);
    if (p.mine_ore) production.push(`mine ore ${p.mine_ore}`);
    g.push(text(10, y, `Production: ${production.join(", ") || "none"}`, { class: "small", "text-anchor": "start" }));
    y += 17;
    const plots = p.plots.map((sq) => `${sq.row},${sq.col}`).join(" ");
    g.push(text(10, y, `Miners ${p.miners_pool} in pool, ${p.miners_reserve} in reserve · pelicans ${p.pelicans} (${p.pelicans_used} used)`, { class: "small", "text-anchor": "start" }));
    y += 17;
    g.push(text(10, y, `Plots ${plots || "none"} · buildings built ${p.buildings.length}`, { class: "small", "text-anchor": "start" }));
    // Building slots.
    y += 10;
    const slots = this.c.building_slots || 3;
    for (let i = 0; i < slots; i++) {
      const x = 8 + i * 116;
      const id = p.slots[i];
      const b = id !== undefined ? this.building(id) : null;
      g.push(s("rect", { x, y, width: 110, height: 40, rx: 4, class: b ? "slot full" : "slot", fill: b ? buildingColour(b) : null }, b ? s("title", {}, this.words("buildings", id)) : null));
      if (b) lines(b.name, 16).slice(0, 2).forEach((line, k) => g.push(text(x + 55, y + 17 + k * 12, line, { class: "tiny" })));
      else g.push(text(x + 55, y + 24, "empty slot", { class: "tiny" }));
    }
    // The hand: action cards still to play this round.
    y += 50;
    g.push(text(10, y + 22, "Hand", { class: "small", "text-anchor": "start" }));
    p.hand.forEach((number, i) => {
      const card = this.cards.get(number);
      const x = 46 + i * 52;
      g.push(s("rect", { x, y, width: 48, height: 40, rx: 4, class: "card" }));
      g.push(text(x + 24, y + 12, number, { class: "tiny bold" }));
      if (card) {
        g.push(text(x + 24, y + 24, ACTION_SHORT[card.top] || "", { class: "tiny" }));
        g.push(text(x + 24, y + 35, ACTION_SHORT[card.bottom] || "", { class: "tiny" }));
      }
    });
    if (!p.hand.length) g.push(text(70, y + 22, "no cards", { class: "small", "text-anchor": "start" }));
    const box = document.createElement("figure");
    box.className = `sheet player${toPlay ? " to-play" : ""}`;
    box.setAttribute("data-seat", p.seat);
    box.append(svg(W, H, "player-svg", `Board of seat ${p.seat}`, g));
    return box;
  }
}
