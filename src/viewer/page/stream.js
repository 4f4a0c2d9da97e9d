// @ts-check
/**
 * `/assets/stream.js`: reads a log from `/api/events` and parses its lines. The stream is read
 * with `fetch`, not `EventSource`, which in Chromium takes seconds for tens of megabytes; a
 * stream that breaks is opened again after the server's `retry` delay, and starts over with the
 * whole log (a `reset`).
 */
import { tokenHeaders } from "./token.js";
/**
 * Follows the event stream at url: onOpen() when it is connected, onUpdate(update) for each
 * `lines` event, as { reset, records, problems, missing, partial } (records: { line, entry } in
 * order; problems: lines that are not entries, and what the server could not read), onBroken() when
 * it breaks (it reconnects), onRefused(message) when the server refuses it (it gives up).
 * @param {string} url
 * @param {{ onOpen: () => void, onUpdate: (update: LogUpdate) => void, onBroken: () => void, onRefused: (message: string) => void }} handlers
 */
export function followEvents(url, handlers) {
  let retryMs = 1000;
  const connect = async () => {
    let response;
    try {
      response = await fetch(url, { headers: { accept: "text/event-stream", ...tokenHeaders() }, cache: "no-store" });
    } catch {
      return broken();
    }
    if (!response.ok || response.body === null) {
      /** @type {unknown} */
      const body = await response.json().catch(() => undefined);
      const error =
        typeof body === "object" && body !== null && "error" in body && typeof body.error === "string"
          ? body.error
          : "";
      return handlers.onRefused(error || response.status + " " + response.statusText);
    }
    handlers.onOpen();
    try {
      await readEvents(response.body, (type, data) => {
        if (type === "retry") retryMs = Number(data[0]) || retryMs;
        else if (type === "lines") handlers.onUpdate(readUpdate(data));
      });
    } catch {
      // A broken connection: as when it ends.
    }
    broken();
  };
  const broken = () => {
    handlers.onBroken();
    setTimeout(connect, retryMs);
  };
  void connect();
}

// Server-Sent Events as the viewer's server writes them: "\n" line ends, one space after the colon.
// Calls onEvent(type, dataLines) per event, and onEvent("retry", [ms]) for a retry field.
/**
 * @param {ReadableStream<Uint8Array<ArrayBuffer>>} body
 * @param {(type: string, data: string[]) => void} onEvent
 */
async function readEvents(body, onEvent) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    // Search only the new text (and the "\n" before it) for the blank line that ends an event.
    let searchFrom = Math.max(0, buffer.length - 1);
    buffer += value;
    let start = 0;
    for (let end = buffer.indexOf("\n\n", searchFrom); end !== -1; end = buffer.indexOf("\n\n", start)) {
      dispatch(buffer.slice(start, end).split("\n"), onEvent);
      start = end + 2;
    }
    if (start > 0) buffer = buffer.slice(start);
  }
}

/**
 * @param {string[]} fields
 * @param {(type: string, data: string[]) => void} onEvent
 */
function dispatch(fields, onEvent) {
  let type = "message";
  const data = [];
  for (const field of fields) {
    const colon = field.indexOf(":");
    if (colon === 0) continue;
    const name = colon === -1 ? field : field.slice(0, colon);
    const value = colon === -1 ? "" : field.slice(field[colon + 1] === " " ? colon + 2 : colon + 1);
    if (name === "event") type = value;
    else if (name === "data") data.push(value);
    else if (name === "retry") onEvent("retry", [value]);
  }
  if (data.length > 0) onEvent(type, data);
}

/**
 * What the page draws from a `lines` event: `records` (entries, each with its line number, in
 * order), `problems` (lines that are not entries, and what the server could not read: `line`
 * undefined), `missing` when there is no file, `partial` when the last line has no end yet.
 * @typedef {{ reset: boolean, records: { line: number, entry: import("./timeline.js").JsonObject }[], problems: { line?: number, message: string }[],
 *   missing?: true, partial?: { line: number, bytes: number } }} LogUpdate
 */
/**
 * The head of a `lines` event, as the server writes it (`LogEventHead`): trusted, unlike the lines.
 * @typedef {{ reset: boolean, firstLine: number, count: number, quoted?: number[], problems: { line?: number, message: string }[], missing?: boolean, partial?: { line: number, bytes: number } }} EventHead
 */

/**
 * A `lines` event (its data lines: the head, then the log's lines) as an update: each line parsed, or a problem naming it.
 * @param {string[]} data
 * @returns {LogUpdate}
 */
export function readUpdate(data) {
  /** @type {EventHead} */
  const head = JSON.parse(data[0] ?? "null");
  const quoted = new Set(head.quoted || []);
  /** @type {LogUpdate["records"]} */
  const records = [];
  const problems = head.problems.slice();
  for (let index = 0; index < head.count; index++) {
    const raw = data[index + 1] ?? "";
    /** @type {string} */
    const text = quoted.has(index) ? JSON.parse(raw) : raw;
    readLine(text, head.firstLine + index, records, problems);
  }
  /** @type {LogUpdate} */
  const update = { reset: head.reset, records, problems };
  if (head.missing) update.missing = true;
  if (head.partial) update.partial = head.partial;
  return update;
}

/**
 * @param {string} text
 * @param {number} line
 * @param {LogUpdate["records"]} records
 * @param {LogUpdate["problems"]} problems
 */
function readLine(text, line, records, problems) {
  const trimmed = text.trim();
  if (trimmed === "") return;
  /** @type {unknown} */
  let value;
  try {
    value = JSON.parse(trimmed);
  } catch (error) {
    problems.push({
      line,
      message: "not valid JSON (" + (error instanceof Error ? error.message : "unreadable") + "): " + excerpt(trimmed),
    });
    return;
  }
  if (!isEntry(value)) {
    problems.push({ line, message: 'not a log entry (a JSON object with a string "type"): ' + excerpt(trimmed) });
    return;
  }
  records.push({ line, entry: value });
}

/**
 * @param {unknown} value
 * @returns {value is import("./timeline.js").JsonObject & { type: string }}
 */
function isEntry(value) {
  return (
    typeof value === "object" &&
    value !== null &&
    !Array.isArray(value) &&
    "type" in value &&
    typeof value.type === "string"
  );
}

/** @param {string} text */
function excerpt(text) {
  return text.length > 80 ? text.slice(0, 80) + "…" : text;
}
