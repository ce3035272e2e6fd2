// Shared by the pages: JSON requests to this site's API, names of enum values, seat colours.

export const SEAT_COLOURS = ["#c0392b", "#2563c9", "#24732d", "#8e44ad"];
// Each seat has a shape as well as a colour, so that seats are told apart without seeing colour.
export const SEAT_SHAPES = ["●", "■", "▲", "◆"];

export async function getJSON(url) {
  const response = await fetch(url, { headers: { accept: "application/json" } });
  const data = await response.json().catch(() => ({ error: `${url} answered ${response.status}.` }));
  if (!response.ok) throw new Error(data.error || `${url} answered ${response.status}.`);
  return data;
}

export async function postJSON(url, body) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify(body),
    credentials: "same-origin",
  });
  const data = await response.json().catch(() => ({ error: `${url} answered ${response.status}.` }));
  if (!response.ok) throw new Error(data.error || `${url} answered ${response.status}.`);
  return data;
}

// GUILD_MINERS -> "Miners", ACTION_ST_BARBARA -> "St. Barbara", COLOR_SILVER -> "Silver".
export function label(name) {
  if (!name) return "";
  const words = String(name).split("_");
  const skip = ["DECISION", "GAME", "HOUSE", "EFFECT", "BARBARA"].includes(words[0]) ? 2 : 1;
  return words
    .slice(skip)
    .map((w) => w.charAt(0) + w.slice(1).toLowerCase())
    .join(" ")
    .replace("St Barbara", "St. Barbara");
}

export function seatName(summary, seat, you) {
  const entry = summary && summary.seats ? summary.seats[seat] : null;
  const name = entry && entry.name ? entry.name : "";
  if (seat === you) return `You (seat ${seat})`;
  return `Seat ${seat}` + (name ? ` (${name})` : "");
}

export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "onclick") node.addEventListener("click", value);
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}
