/**
 * `/assets/dom.js`: element building and formatting for the page's other modules. Session content
 * only ever becomes text nodes and attribute values, never markup.
 */
export const domScript = String.raw`
/**
 * h("div.tool.error", { title: "…" }, child, "text"), attributes optional: strings become text
 * nodes; null, undefined and false are skipped.
 */
export function h(tag, ...rest) {
  const [name, ...classes] = tag.split(".");
  const node = document.createElement(name || "div");
  if (classes.length > 0) node.className = classes.join(" ");
  const first = rest[0];
  if (first === null || (typeof first === "object" && !Array.isArray(first) && !(first instanceof Node))) setAttributes(node, rest.shift());
  appendChildren(node, rest);
  return node;
}

export function setAttributes(node, attributes) {
  if (!attributes) return;
  for (const key of Object.keys(attributes)) {
    const value = attributes[key];
    if (value === undefined || value === null || value === false) continue;
    if (key === "onclick") node.addEventListener("click", value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
}

/** Replaces node's children as h() builds them: null, undefined and false are skipped (replaceChildren would show them as text). */
export function fill(node, ...children) {
  node.replaceChildren();
  appendChildren(node, children);
}

export function appendChildren(node, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) appendChildren(node, child);
    else node.append(typeof child === "object" ? child : String(child));
  }
}

// Formatters made once: toLocaleString and friends build a new one on every call, which costs seconds on a long session.
const countFormat = new Intl.NumberFormat("en-US");
const clockFormat = new Intl.DateTimeFormat("en-GB", { hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23" });
const dateFormat = new Intl.DateTimeFormat("en-CA", { year: "numeric", month: "2-digit", day: "2-digit" });

export function formatCount(value) {
  return countFormat.format(Math.round(value));
}

/** Tokens, short: 950, 12.3k, 456k, 1.2M. */
export function formatTokens(value) {
  if (value < 1000) return String(Math.round(value));
  if (value < 10000) return (value / 1000).toFixed(1) + "k";
  if (value < 1000000) return Math.round(value / 1000) + "k";
  return (value / 1000000).toFixed(1) + "M";
}

export function formatDuration(ms) {
  if (typeof ms !== "number" || !(ms >= 0)) return "";
  if (ms < 1000) return Math.round(ms) + " ms";
  if (ms < 10000) return (ms / 1000).toFixed(1) + " s";
  if (ms < 60000) return Math.round(ms / 1000) + " s";
  const seconds = Math.round(ms / 1000);
  if (seconds < 3600) return Math.floor(seconds / 60) + "m " + String(seconds % 60).padStart(2, "0") + "s";
  return Math.floor(seconds / 3600) + "h " + String(Math.floor(seconds / 60) % 60).padStart(2, "0") + "m";
}

/** Milliseconds since the epoch of an ISO time, or undefined. */
export function timeOf(iso) {
  const parsed = typeof iso === "string" ? Date.parse(iso) : NaN;
  return Number.isNaN(parsed) ? undefined : parsed;
}

export function formatClock(ms) {
  return ms === undefined ? "" : clockFormat.format(ms);
}

export function formatDateTime(ms) {
  if (ms === undefined) return "";
  return dateFormat.format(ms) + " " + clockFormat.format(ms);
}

export function formatAgo(ms, now) {
  const seconds = Math.max(0, Math.round((now - ms) / 1000));
  if (seconds < 60) return seconds + " s ago";
  if (seconds < 3600) return Math.round(seconds / 60) + " min ago";
  if (seconds < 86400 * 2) return Math.round(seconds / 3600) + " h ago";
  return Math.round(seconds / 86400) + " days ago";
}

export function formatBytes(bytes) {
  if (bytes < 1024) return bytes + " B";
  if (bytes < 1024 * 1024) return (bytes / 1024).toFixed(1) + " KB";
  return (bytes / 1024 / 1024).toFixed(1) + " MB";
}

/** A tool input or output as shown: strings as they are, anything else as indented JSON. */
export function pretty(value) {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

export function plural(count, one, many) {
  return formatCount(count) + " " + (count === 1 ? one : many || one + "s");
}
`;
