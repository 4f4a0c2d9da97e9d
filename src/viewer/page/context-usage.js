// @ts-check
/**
 * `/assets/context-usage.js`: where the session's context goes, estimated as the library's
 * `contextUsage` does (a token per 4 characters of a message's JSON; an image 1,600 tokens, a file
 * a token per 20 bytes), by part: system, user, assistant, thinking, tool calls, tool results and
 * cleared output (placeholders and the markers of offloaded output). The tools sent with each
 * request are not in the log, so they are not counted. No DOM here.
 */

/** @typedef {import("./entry-check.js").JsonObject} JsonObject */
/** @typedef {{ name: string, tokens: number }[]} ContextParts */

/** The parts, in the order `contextUsage` gives them (less `tools`). */
export const partNames = ["system", "user", "assistant", "thinking", "tool_calls", "tool_results", "cleared"];

/**
 * Tokens by part (indexes of `partNames`) for `message`, added to `into`; `sign` -1 takes them off
 * (a message a compaction replaced or removed).
 * @param {number[]} into
 * @param {JsonObject} message
 * @param {1 | -1} sign
 */
export function addMessage(into, message, sign) {
  const characters = messageCharacters(message);
  const part = partOf(message);
  if (part === "tool_results" && message.kept === "offloaded" && typeof message.output === "string") {
    const marker = markerLength(message.output);
    add(into, "cleared", marker, sign);
    add(into, "tool_results", characters - marker, sign);
    return;
  }
  add(into, part, characters, sign);
}

/** @returns {number[]} */
export function emptyParts() {
  return partNames.map(() => 0);
}

/**
 * @param {readonly number[]} counts
 * @returns {{ total: number, parts: ContextParts }}
 */
export function contextOf(counts) {
  const parts = partNames.map((name, index) => ({ name, tokens: counts[index] ?? 0 }));
  return { total: parts.reduce((sum, part) => sum + part.tokens, 0), parts };
}

/**
 * @param {number[]} into
 * @param {string} part
 * @param {number} characters
 * @param {1 | -1} sign
 */
function add(into, part, characters, sign) {
  const index = partNames.indexOf(part);
  into[index] = (into[index] ?? 0) + sign * Math.ceil(characters / 4);
}

/** @param {JsonObject} message */
function partOf(message) {
  if (typeof message.role === "string") return partNames.includes(message.role) ? message.role : "user";
  if (message.type === "thinking") return "thinking";
  if (message.type === "tool_call") return "tool_calls";
  return message.kept === "cleared" ? "cleared" : "tool_results";
}

// The message's JSON, images and files counted by their tokens rather than their base64, and a
// result's `output` beside its `content` (the same text again) not at all.
/** @param {JsonObject} message */
function messageCharacters(message) {
  const parts = Array.isArray(message.content) ? message.content : undefined;
  if (parts === undefined || !parts.some(isMedia)) return JSON.stringify(message).length;
  let characters = 0;
  const light = parts.map((part) => {
    if (!isMedia(part)) return part;
    characters += 4 * mediaTokens(/** @type {JsonObject} */ (part));
    return { type: "text", text: "" };
  });
  const { output: _output, ...rest } = message;
  return characters + JSON.stringify({ ...(message.type === "tool_result" ? rest : message), content: light }).length;
}

/** @param {unknown} part */
function isMedia(part) {
  return typeof part === "object" && part !== null && "type" in part && (part.type === "image" || part.type === "file");
}

/** @param {JsonObject} part */
function mediaTokens(part) {
  if (part.type === "image") return 1600;
  const data = typeof part.data === "string" ? part.data : "";
  return Math.ceil((data.length * 3) / 4 / 20);
}

// The marker an offloaded output carries between its head and tail.
/** @param {string} output */
function markerLength(output) {
  const match = /\n\[… [\d,]+ characters omitted[^\n]*…\]\n/.exec(output);
  return match === null ? 0 : match[0].length;
}
