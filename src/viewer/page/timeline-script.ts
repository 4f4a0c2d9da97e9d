/**
 * `/assets/timeline.js`: replays a session log's entries as the store does (`replayEntries`), but
 * keeps the whole history for display: messages a compaction removed stay where they were,
 * marked; a replaced message keeps the original. No DOM here.
 *
 * A timeline is `{ turns, live, calls, problems, dirty }`. `live`: the session's messages as they
 * are now (items, by index: what `replace`/`update`/`splice` entries point at). `turns`: the
 * history cut at each user message (a first turn without one, `number` 0, holds what came
 * before: the system prompt). An item is `{ kind, line, turn, ... }`: `message` (with `message`,
 * `original` once replaced, `result`/`call` pairing tool calls and results, `removedBy`),
 * `compaction` (a splice: `entry`, `removed`, `inserted`), `custom` or `other` (`entry`).
 * `dirty`: indexes of turns changed since the page last drew them.
 */
export const timelineScript = String.raw`
export function createTimeline() {
  return { turns: [], live: [], calls: new Map(), problems: [], dirty: new Set(), userTurns: 0 };
}

/** Applies records ({ line, entry }) in order. An entry that cannot apply becomes a problem naming its line; the rest go on. */
export function applyRecords(timeline, records) {
  for (const record of records) applyEntry(timeline, record.line, record.entry);
}

function applyEntry(timeline, line, entry) {
  switch (entry.type) {
    case "message":
      if (!isMessage(entry.message)) return problem(timeline, line, 'a "message" entry needs a message object (with a "role" or a "type")');
      return addMessage(timeline, line, entry.message);
    case "replace":
    case "update": {
      if (!isIndex(entry.index) || entry.index >= timeline.live.length || !isMessage(entry.message)) {
        return problem(timeline, line, '"' + entry.type + '" of message ' + entry.index + ", but the session has " + timeline.live.length + " messages here");
      }
      const item = timeline.live[entry.index];
      if (entry.type === "replace" && item.original === undefined) item.original = isMessage(entry.previous) ? entry.previous : item.message;
      item.message = entry.message;
      return touch(timeline, item);
    }
    case "splice": {
      const removedCount = Array.isArray(entry.removed) ? entry.removed.length : -1;
      if (!isIndex(entry.index) || removedCount < 0 || !Array.isArray(entry.inserted) || !entry.inserted.every(isMessage) || entry.index + removedCount > timeline.live.length) {
        return problem(timeline, line, '"splice" of ' + removedCount + " messages at " + entry.index + ", but the session has " + timeline.live.length + " messages here");
      }
      const compaction = { kind: "compaction", line, entry, removed: [], inserted: [] };
      place(timeline, compaction);
      compaction.inserted = entry.inserted.map((message) => ({ kind: "message", line, message, turn: compaction.turn, insertedBy: compaction }));
      compaction.removed = timeline.live.splice(entry.index, removedCount, ...compaction.inserted);
      for (const item of compaction.removed) {
        item.removedBy = compaction;
        touch(timeline, item);
      }
      return;
    }
    default:
      return place(timeline, { kind: entry.type === "custom" ? "custom" : "other", line, entry });
  }
}

function addMessage(timeline, line, message) {
  const item = { kind: "message", line, message };
  timeline.live.push(item);
  if (message.type === "tool_call") timeline.calls.set(message.id, item);
  if (message.type === "tool_result") {
    const call = timeline.calls.get(message.id);
    if (call !== undefined && call.result === undefined) {
      call.result = item;
      item.call = call;
      touch(timeline, call);
    }
  }
  place(timeline, item);
}

function place(timeline, item) {
  const startsTurn = item.kind === "message" && item.message.role === "user";
  if (startsTurn) timeline.userTurns++;
  if (startsTurn || timeline.turns.length === 0) timeline.turns.push({ index: timeline.turns.length, number: startsTurn ? timeline.userTurns : 0, items: [] });
  const turn = timeline.turns[timeline.turns.length - 1];
  item.turn = turn.index;
  turn.items.push(item);
  timeline.dirty.add(turn.index);
}

function touch(timeline, item) {
  timeline.dirty.add(item.turn);
}

function problem(timeline, line, message) {
  timeline.problems.push({ line, message });
}

function isIndex(value) {
  return Number.isInteger(value) && value >= 0;
}

export function isMessage(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value) && (typeof value.role === "string" || typeof value.type === "string");
}

/** Model output: assistant text, thinking, a tool call. */
export function isModelMessage(message) {
  return message.role === "assistant" || message.type === "thinking" || message.type === "tool_call";
}

/**
 * What a turn cost and how it ended: tokens summed over its model calls (a model call: a run of
 * model messages), tool calls and their errors, calls waiting for approval, time from its first
 * message to its last. Removed (compacted) history counts: it happened.
 */
export function turnStats(turn) {
  const stats = { start: undefined, end: undefined, durationMs: undefined, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0,
    modelCalls: 0, toolCalls: 0, errors: 0, pending: 0, aborted: false, stopReason: undefined, removed: false };
  let inModelCall = false;
  for (const item of turn.items) {
    if (item.kind !== "message") {
      inModelCall = false;
      continue;
    }
    const message = item.message;
    for (const at of [timeOf(message.ts), item.result && timeOf(item.result.message.ts)]) {
      if (at === undefined) continue;
      if (stats.start === undefined || at < stats.start) stats.start = at;
      if (stats.end === undefined || at > stats.end) stats.end = at;
    }
    const model = isModelMessage(message);
    if (model && !inModelCall) stats.modelCalls++;
    inModelCall = model;
    if (message.role === "user" && item.removedBy) stats.removed = true;
    const usage = message.usage;
    if (usage && typeof usage === "object") {
      stats.inputTokens += Number(usage.inputTokens) || 0;
      stats.outputTokens += Number(usage.outputTokens) || 0;
      stats.cacheReadTokens += Number(usage.cacheReadTokens) || 0;
    }
    if (typeof message.stopReason === "string") {
      stats.stopReason = message.stopReason;
      if (message.stopReason === "aborted") stats.aborted = true;
    }
    if (message.type === "tool_call") {
      stats.toolCalls++;
      if (item.result && item.result.message.isError === true) stats.errors++;
      if (!item.result && message.approval && message.approval.status === "pending") stats.pending++;
    }
  }
  if (stats.start !== undefined) stats.durationMs = stats.end - stats.start;
  return stats;
}

function timeOf(iso) {
  const parsed = typeof iso === "string" ? Date.parse(iso) : NaN;
  return Number.isNaN(parsed) ? undefined : parsed;
}
`;
