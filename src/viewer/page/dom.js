// @ts-check
/**
 * `/assets/dom.js`: element building and formatting for the page's other modules. Session content
 * only ever becomes text nodes and attribute values, never markup, attribute names or classes.
 */

/**
 * What h() and fill() take as children: nodes, and text (a string or a number). null, undefined and
 * false are skipped, so `condition && node` reads as "node if condition"; arrays are flattened.
 * @typedef {Node | string | number | false | null | undefined | Children} Child
 */
/** @typedef {readonly Child[]} Children */

/**
 * An element's attributes, always written in the page's code (never a value from a session): a value
 * true is an empty attribute, false, null and undefined leave it out; onclick is a listener.
 * @typedef {{ [name: string]: string | number | boolean | null | undefined | ((event: MouseEvent) => void) }} Attributes
 */

/**
 * h("div.tool.error", { title: "…" }, child, "text"): an element with the classes after the dots.
 * The attributes are a separate argument (null for none), so a value from a session given as a
 * child can never become attributes: anything that is not a node or a number is shown as text.
 * @param {string} tag
 * @param {Attributes | null} attributes
 * @param {...Child} children
 * @returns {HTMLElement}
 */
export function h(tag, attributes, ...children) {
  const [name, ...classes] = tag.split(".");
  const node = document.createElement(name || "div");
  if (classes.length > 0) node.className = classes.join(" ");
  if (attributes !== null) setAttributes(node, attributes);
  appendChildren(node, children);
  return node;
}

/**
 * @param {Element} node
 * @param {Attributes} attributes
 */
export function setAttributes(node, attributes) {
  for (const key of Object.keys(attributes)) {
    const value = attributes[key];
    if (value === undefined || value === null || value === false) continue;
    if (typeof value === "function") node.addEventListener("click", /** @type {EventListener} */ (value));
    else node.setAttribute(key, value === true ? "" : String(value));
  }
}

/**
 * Replaces node's children as h() builds them (replaceChildren would show null, undefined and false as text).
 * @param {Element} node
 * @param {...Child} children
 */
export function fill(node, ...children) {
  node.replaceChildren();
  appendChildren(node, children);
}

/**
 * @param {Element} node
 * @param {readonly unknown[]} children
 */
function appendChildren(node, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) appendChildren(node, child);
    else if (child instanceof Node) node.append(child);
    // Anything else (a value from a session the types did not stop) is text.
    else node.append(typeof child === "string" ? child : pretty(child));
  }
}

// Formatters made once: toLocaleString and friends build a new one on every call, which costs seconds on a long session.
const countFormat = new Intl.NumberFormat("en-US");
const clockFormat = new Intl.DateTimeFormat("en-GB", {
  hour: "2-digit",
  minute: "2-digit",
  second: "2-digit",
  hourCycle: "h23",
});
const dateFormat = new Intl.DateTimeFormat("en-CA", { year: "numeric", month: "2-digit", day: "2-digit" });

/** @param {number} value */
export function formatCount(value) {
  return Number.isFinite(value) ? countFormat.format(Math.round(value)) : "–";
}

/**
 * Tokens, short: 950, 12.3k, 456k, 1.2M.
 * @param {number} value
 */
export function formatTokens(value) {
  if (!Number.isFinite(value)) return "–";
  if (value < 1000) return String(Math.round(value));
  if (value < 10000) return (value / 1000).toFixed(1) + "k";
  if (value < 1000000) return Math.round(value / 1000) + "k";
  return (value / 1000000).toFixed(1) + "M";
}

/** @param {number | undefined} ms */
export function formatDuration(ms) {
  if (typeof ms !== "number" || !(ms >= 0) || ms === Infinity) return "";
  if (ms < 1000) return Math.round(ms) + " ms";
  if (ms < 10000) return (ms / 1000).toFixed(1) + " s";
  if (ms < 60000) return Math.round(ms / 1000) + " s";
  const seconds = Math.round(ms / 1000);
  if (seconds < 3600) return Math.floor(seconds / 60) + "m " + String(seconds % 60).padStart(2, "0") + "s";
  return Math.floor(seconds / 3600) + "h " + String(Math.floor(seconds / 60) % 60).padStart(2, "0") + "m";
}

// A date and time as toISOString writes it (or with an offset, or without seconds): Date.parse alone
// also reads "x 1" as a date.
const isoTime = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/;

/**
 * Milliseconds since the epoch of an ISO 8601 time, or undefined (for anything else, whatever its type).
 * @param {unknown} iso
 * @returns {number | undefined}
 */
export function timeOf(iso) {
  const parsed = typeof iso === "string" && isoTime.test(iso) ? Date.parse(iso) : NaN;
  return Number.isNaN(parsed) ? undefined : parsed;
}

/** @param {number | undefined} ms */
export function formatClock(ms) {
  return ms === undefined ? "" : clockFormat.format(ms);
}

/** @param {number | undefined} ms */
export function formatDateTime(ms) {
  if (ms === undefined) return "";
  return dateFormat.format(ms) + " " + clockFormat.format(ms);
}

/**
 * @param {number} ms
 * @param {number} now
 */
export function formatAgo(ms, now) {
  const seconds = Math.max(0, Math.round((now - ms) / 1000));
  if (seconds < 60) return seconds + " s ago";
  if (seconds < 3600) return Math.round(seconds / 60) + " min ago";
  if (seconds < 86400 * 2) return Math.round(seconds / 3600) + " h ago";
  return Math.round(seconds / 86400) + " days ago";
}

/** @param {number} bytes */
export function formatBytes(bytes) {
  if (!Number.isFinite(bytes)) return "–";
  if (bytes < 1024) return bytes + " B";
  if (bytes < 1024 * 1024) return (bytes / 1024).toFixed(1) + " KB";
  return (bytes / 1024 / 1024).toFixed(1) + " MB";
}

/**
 * A value from a session as text: strings as they are, anything else as indented JSON. Never
 * throws: String() of an object whose own `toString` is not a function would.
 * @param {unknown} value
 * @returns {string}
 */
export function pretty(value) {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value, null, 2) ?? typeof value;
  } catch {
    return "(a value too deeply nested to show)";
  }
}

/**
 * @param {number} count
 * @param {string} one
 * @param {string} [many]
 */
export function plural(count, one, many) {
  return formatCount(count) + " " + (count === 1 ? one : many || one + "s");
}

/**
 * What an error says, whatever was thrown.
 * @param {unknown} error
 * @returns {string}
 */
export function errorText(error) {
  return error instanceof Error ? error.message : typeof error === "string" ? error : "an unknown error";
}
