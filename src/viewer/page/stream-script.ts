/**
 * `/assets/stream.js`: reads a log from `/api/events` and parses its lines. The stream is read
 * with `fetch`, not `EventSource`, which in Chromium takes seconds for tens of megabytes; a
 * stream that breaks is opened again after the server's `retry` delay, and starts over with the
 * whole log (a `reset`).
 */
export const streamScript = String.raw`
/**
 * Follows the event stream at url: onOpen() when it is connected, onUpdate(update) for each
 * \`lines\` event, as { reset, records, problems, missing, partial } (records: { line, entry } in
 * order; problems: lines that are not entries, and what the server could not read), onBroken() when
 * it breaks (it reconnects), onRefused(message) when the server refuses it (it gives up).
 */
export function followEvents(url, handlers) {
  let retryMs = 1000;
  const connect = async () => {
    let response;
    try {
      response = await fetch(url, { headers: { accept: "text/event-stream" }, cache: "no-store" });
    } catch {
      return broken();
    }
    if (!response.ok || response.body === null) {
      const body = await response.json().catch(() => ({}));
      return handlers.onRefused(body.error || response.status + " " + response.statusText);
    }
    handlers.onOpen();
    try {
      await readEvents(response.body, (type, data) => {
        if (type === "retry") retryMs = Number(data) || retryMs;
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
  connect();
}

// Server-Sent Events as the viewer's server writes them: "\n" line ends, one space after the colon.
// Calls onEvent(type, dataLines) per event, and onEvent("retry", ms) for a retry field.
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
    else if (name === "retry") onEvent("retry", value);
  }
  if (data.length > 0) onEvent(type, data);
}

/** A \`lines\` event (its data lines: the head, then the log's lines) as an update: each line parsed, or a problem naming it. */
export function readUpdate(data) {
  const head = JSON.parse(data[0]);
  const quoted = new Set(head.quoted || []);
  const records = [];
  const problems = head.problems.slice();
  for (let index = 0; index < head.count; index++) {
    const text = quoted.has(index) ? JSON.parse(data[index + 1]) : data[index + 1];
    readLine(text, head.firstLine + index, records, problems);
  }
  const update = { reset: head.reset, records, problems };
  if (head.missing) update.missing = true;
  if (head.partial) update.partial = head.partial;
  return update;
}

function readLine(text, line, records, problems) {
  const trimmed = text.trim();
  if (trimmed === "") return;
  let value;
  try {
    value = JSON.parse(trimmed);
  } catch (error) {
    problems.push({ line, message: "not valid JSON (" + (error && error.message ? error.message : String(error)) + "): " + excerpt(trimmed) });
    return;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value) || typeof value.type !== "string") {
    problems.push({ line, message: 'not a log entry (a JSON object with a string "type"): ' + excerpt(trimmed) });
    return;
  }
  records.push({ line, entry: value });
}

function excerpt(text) {
  return text.length > 80 ? text.slice(0, 80) + "…" : text;
}
`;
