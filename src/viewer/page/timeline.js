// @ts-check
/**
 * `/assets/timeline.js`: replays a session log's entries as the store does (`replayEntries`), but
 * keeps the whole history for display: messages a compaction removed stay where they were,
 * marked; a replaced message keeps the original. No DOM here.
 *
 * Every entry is untrusted JSON: any field may hold any value. An entry that cannot apply, and a
 * field whose value is not of the kind the session format gives it, become problems naming the
 * line; nothing here throws on a value, and names from the log never key a plain object.
 */
import { timeOf } from "./dom.js";

/** @typedef {{ [key: string]: unknown }} JsonObject */
/** @typedef {{ line: number, message: string }} Problem */
/**
 * A message of the history. `original`: the message before the first `replace`; `result` (on a
 * tool call) and `call` (on its result) pair them; `removedBy`: the compaction that removed it.
 * @typedef {{ kind: "message", line: number, turn: number, message: JsonObject, original?: JsonObject, result?: MessageItem, call?: MessageItem, removedBy?: CompactionItem, insertedBy?: CompactionItem }} MessageItem
 */
/** @typedef {{ kind: "compaction", line: number, turn: number, entry: JsonObject, removed: MessageItem[], inserted: MessageItem[] }} CompactionItem */
/** @typedef {{ kind: "custom" | "other", line: number, turn: number, entry: JsonObject }} EntryItem */
/** @typedef {MessageItem | CompactionItem | EntryItem} Item */
/**
 * The history cut at each user message (a first turn without one, `number` 0, holds what came
 * before: the system prompt). `stats` and `problems` are set when the page draws it.
 * @typedef {{ index: number, number: number, items: Item[], stats?: TurnStats, problems?: Problem[] }} Turn
 */
/**
 * `live`: the session's messages as they are now (what `replace`/`update`/`splice` entries point
 * at, by index); `calls`: tool calls by id; `dirty`: indexes of turns changed since the page drew them.
 * @typedef {{ turns: Turn[], live: MessageItem[], calls: Map<unknown, MessageItem>, problems: Problem[], dirty: Set<number>, userTurns: number }} Timeline
 */
/**
 * What a turn cost and how it ended. `durationMs`: its run time, from its first message to its
 * last less `waitMs`, the time its calls waited for a human's decision.
 * @typedef {{ start: number | undefined, end: number | undefined, durationMs: number | undefined, waitMs: number, inputTokens: number, outputTokens: number,
 *   cacheReadTokens: number, modelCalls: number, toolCalls: number, errors: number, denied: number, pending: number, aborted: boolean,
 *   stopReason: string | undefined, removed: boolean }} TurnStats
 */

/** @returns {Timeline} */
export function createTimeline() {
  return { turns: [], live: [], calls: new Map(), problems: [], dirty: new Set(), userTurns: 0 };
}

/**
 * Applies records in order. An entry that cannot apply becomes a problem naming its line; the rest go on.
 * @param {Timeline} timeline
 * @param {readonly { line: number, entry: JsonObject }[]} records
 */
export function applyRecords(timeline, records) {
  for (const record of records) {
    try {
      applyEntry(timeline, record.line, record.entry);
    } catch (error) {
      problem(timeline, record.line, "could not be read: " + errorText(error));
    }
  }
}

/**
 * @param {Timeline} timeline
 * @param {number} line
 * @param {JsonObject} entry
 */
function applyEntry(timeline, line, entry) {
  if (entry.type !== "message") checkEntry(timeline, line, entry);
  switch (entry.type) {
    case "message": {
      const message = entry.message;
      if (!isMessage(message)) return problem(timeline, line, 'a "message" entry needs a message object (with a "role" or a "type")');
      checkMessage(timeline, line, message);
      return addMessage(timeline, line, message);
    }
    case "replace":
    case "update": {
      const index = entry.index;
      const message = entry.message;
      const item = isIndex(index) ? timeline.live[index] : undefined;
      if (item === undefined || !isMessage(message)) {
        return problem(timeline, line, '"' + entry.type + '" of message ' + describe(index) + ", but the session has " + timeline.live.length + " messages here");
      }
      checkMessage(timeline, line, message);
      if (entry.type === "replace" && item.original === undefined) item.original = isMessage(entry.previous) ? entry.previous : item.message;
      item.message = message;
      return touch(timeline, item);
    }
    case "splice": {
      const index = entry.index;
      const removedCount = Array.isArray(entry.removed) ? entry.removed.length : -1;
      const inserted = Array.isArray(entry.inserted) ? entry.inserted : undefined;
      if (!isIndex(index) || removedCount < 0 || inserted === undefined || !inserted.every(isMessage) || index + removedCount > timeline.live.length) {
        return problem(timeline, line, '"splice" of ' + removedCount + " messages at " + describe(index) + ", but the session has " + timeline.live.length + " messages here");
      }
      /** @type {CompactionItem} */
      const compaction = { kind: "compaction", line, turn: -1, entry, removed: [], inserted: [] };
      place(timeline, compaction);
      compaction.inserted = inserted.map((message) => /** @type {MessageItem} */ ({ kind: "message", line, message, turn: compaction.turn, insertedBy: compaction }));
      compaction.removed = timeline.live.splice(index, removedCount, ...compaction.inserted);
      for (const item of compaction.removed) {
        item.removedBy = compaction;
        touch(timeline, item);
      }
      return;
    }
    case "custom":
      if (typeof entry.customType !== "string") problem(timeline, line, 'a "custom" entry needs a string "customType", not ' + describe(entry.customType));
      return place(timeline, { kind: "custom", line, turn: -1, entry });
    default:
      return place(timeline, { kind: "other", line, turn: -1, entry });
  }
}

/**
 * The kind of value a field has in the session format ("?": it may be absent), as `[path, kind]`
 * with a path of keys ("usage.*": every key of usage). Maps: a kind read from the log never reaches
 * a prototype. Compiled once: they are checked for every entry of logs of hundreds of megabytes.
 * @typedef {"text" | "time" | "count" | "boolean" | "object" | "text?" | "time?" | "count?" | "boolean?" | "object?"} FieldKind
 * @typedef {{ parents: string[], prefix: string, key: string, kind: string, optional: boolean }} FieldRule
 */
const messageFields = compileFields(new Map([
  ["user", [["content", "text"]]],
  ["system", [["content", "text"]]],
  ["assistant", [["content", "text"], ["usage", "object?"], ["usage.*", "count?"], ["stopReason", "text?"]]],
  ["thinking", [["content", "text"], ["redacted", "boolean?"]]],
  ["tool_call", [["id", "text"], ["name", "text"], ["input", "object"], ["approval", "object?"], ["approval.status", "text"], ["approval.reason", "text?"]]],
  ["tool_result", [["id", "text"], ["isError", "boolean?"], ["waitMs", "count?"]]],
  // A message of a kind this page does not know: only its time.
  ["", []],
]), [["ts", "time?"]]);

const entryFields = compileFields(new Map([
  ["splice", [["reason", "text?"], ["details", "object?"], ["details.summary", "text?"], ["details.strategy", "text?"], ["details.tokensBefore", "count?"], ["details.tokensAfter", "count?"]]],
  ["replace", [["reason", "text?"]]],
  ["update", [["reason", "text?"]]],
  ["custom", []],
]), [["ts", "time?"]]);

/**
 * @param {ReadonlyMap<string, ReadonlyArray<readonly [path: string, kind: FieldKind]>>} fieldsByKind
 * @param {ReadonlyArray<readonly [path: string, kind: FieldKind]>} common fields of every kind
 * @returns {ReadonlyMap<string, readonly FieldRule[]>}
 */
function compileFields(fieldsByKind, common) {
  return new Map([...fieldsByKind].map(([kind, fields]) => [kind, [...fields, ...common].map(([path, expected]) => {
    const parents = path.split(".");
    const key = parents.pop() ?? "";
    const optional = expected.endsWith("?");
    return { parents, prefix: parents.length > 0 ? parents.join(".") + "." : "", key, kind: optional ? expected.slice(0, -1) : expected, optional };
  })]));
}

/**
 * Lists, as one problem of the line, the fields of a message whose values are not what the session
 * format says (the message is still drawn, each such value shown as text).
 * @param {Timeline} timeline
 * @param {number} line
 * @param {JsonObject} message
 */
function checkMessage(timeline, line, message) {
  const kind = typeof message.role === "string" ? message.role : typeof message.type === "string" ? message.type : "";
  const wrong = wrongFields(message, messageFields.get(kind) ?? messageFields.get("") ?? []);
  if (wrong.length > 0) problem(timeline, line, article(kind) + " " + kind + " message whose " + wrong.join("; ") + " (shown as it is)");
}

/**
 * @param {Timeline} timeline
 * @param {number} line
 * @param {JsonObject} entry
 */
function checkEntry(timeline, line, entry) {
  const rules = typeof entry.type === "string" ? entryFields.get(entry.type) : undefined;
  const wrong = rules === undefined ? [] : wrongFields(entry, rules);
  if (wrong.length > 0) problem(timeline, line, article(String(entry.type)) + ' "' + String(entry.type) + '" entry whose ' + wrong.join("; ") + " (shown as it is)");
}

/**
 * What is wrong with the fields of value, as "path is …, not …".
 * @param {JsonObject} value
 * @param {readonly FieldRule[]} rules
 * @returns {string[]}
 */
function wrongFields(value, rules) {
  /** @type {string[]} */
  const wrong = [];
  for (const rule of rules) {
    /** @type {JsonObject | undefined} */
    let parent = value;
    for (const key of rule.parents) {
      /** @type {unknown} */
      const next = Object.hasOwn(parent, key) ? parent[key] : undefined;
      // A parent missing, or of another kind, is reported for itself (its own rule).
      parent = isObject(next) ? next : undefined;
      if (parent === undefined) break;
    }
    if (parent === undefined) continue;
    if (rule.key === "*") {
      for (const key of Object.keys(parent)) checkField(parent[key], rule, key, wrong);
    } else {
      checkField(Object.hasOwn(parent, rule.key) ? parent[rule.key] : undefined, rule, rule.key, wrong);
    }
  }
  return wrong;
}

/**
 * @param {unknown} field
 * @param {FieldRule} rule
 * @param {string} key
 * @param {string[]} wrong
 */
function checkField(field, rule, key, wrong) {
  if (field === undefined && rule.optional) return;
  if (!isKind(field, rule.kind)) wrong.push(rule.prefix + key + " is " + describe(field) + ", not " + kindName(rule.kind));
}

/** @param {string} kind */
function kindName(kind) {
  return kind === "text" ? "text" : kind === "time" ? "a time (ISO 8601)" : kind === "count" ? "a count (a number, not negative)" : article(kind) + " " + kind;
}

/** @param {string} word */
function article(word) {
  return /^[aeiou]/i.test(word) ? "an" : "a";
}

/**
 * @param {unknown} value
 * @param {string} kind
 */
function isKind(value, kind) {
  if (kind === "text") return typeof value === "string";
  if (kind === "time") return timeOf(value) !== undefined;
  if (kind === "count") return isCount(value);
  if (kind === "boolean") return typeof value === "boolean";
  return isObject(value);
}

/**
 * @param {Timeline} timeline
 * @param {number} line
 * @param {JsonObject} message
 */
function addMessage(timeline, line, message) {
  /** @type {MessageItem} */
  const item = { kind: "message", line, turn: -1, message };
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

/**
 * @param {Timeline} timeline
 * @param {Item} item
 */
function place(timeline, item) {
  const startsTurn = item.kind === "message" && item.message.role === "user";
  if (startsTurn) timeline.userTurns++;
  let turn = timeline.turns[timeline.turns.length - 1];
  if (startsTurn || turn === undefined) {
    turn = { index: timeline.turns.length, number: startsTurn ? timeline.userTurns : 0, items: [] };
    timeline.turns.push(turn);
  }
  item.turn = turn.index;
  turn.items.push(item);
  timeline.dirty.add(turn.index);
}

/**
 * @param {Timeline} timeline
 * @param {Item} item
 */
function touch(timeline, item) {
  timeline.dirty.add(item.turn);
}

/**
 * @param {Timeline} timeline
 * @param {number} line
 * @param {string} message
 */
function problem(timeline, line, message) {
  timeline.problems.push({ line, message });
}

/**
 * @param {unknown} value
 * @returns {value is number}
 */
function isIndex(value) {
  return Number.isInteger(value) && /** @type {number} */ (value) >= 0;
}

/**
 * @param {unknown} value
 * @returns {value is JsonObject}
 */
export function isObject(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * @param {unknown} value
 * @returns {value is JsonObject}
 */
export function isMessage(value) {
  return isObject(value) && (typeof value.role === "string" || typeof value.type === "string");
}

/**
 * Model output: assistant text, thinking, a tool call.
 * @param {JsonObject} message
 */
export function isModelMessage(message) {
  return message.role === "assistant" || message.type === "thinking" || message.type === "tool_call";
}

/**
 * A finite number, not negative: a count of tokens, a duration.
 * @param {unknown} value
 * @returns {value is number}
 */
export function isCount(value) {
  return typeof value === "number" && Number.isFinite(value) && value >= 0;
}

/**
 * How long a tool result says its call waited for a human's decision (ms), or 0.
 * @param {JsonObject | undefined} result
 */
export function waitOf(result) {
  return result !== undefined && isCount(result.waitMs) ? result.waitMs : 0;
}

/**
 * Whether a call was denied, and why: by `resolveApproval` (its approval says so), or by the
 * CLI's prompt (an error result saying "the user denied this call", with the user's reason).
 * @param {JsonObject} call
 * @param {JsonObject | undefined} result
 * @returns {{ reason: string } | undefined}
 */
export function denialOf(call, result) {
  const approval = call.approval;
  if (isObject(approval) && approval.status === "denied") return { reason: typeof approval.reason === "string" ? approval.reason : "" };
  if (result === undefined || result.isError !== true || typeof result.output !== "string") return undefined;
  // The loop gives a hook's denial as "Denied: " and the hook's words.
  const said = /^(?:Denied: )?the user denied this call(?:: |\s*)/.exec(result.output);
  if (said === null) return undefined;
  const reason = result.output.slice(said[0].length).trim();
  return { reason: reason === "(no reason given)" ? "" : reason };
}

/**
 * What a turn cost and how it ended: tokens summed over its model calls (a model call: a run of
 * model messages), tool calls and their errors, calls waiting for approval, time from its first
 * message to its last, less the time calls waited for approval. Removed (compacted) history
 * counts: it happened.
 * @param {Turn} turn
 * @returns {TurnStats}
 */
export function turnStats(turn) {
  /** @type {TurnStats} */
  const stats = { start: undefined, end: undefined, durationMs: undefined, waitMs: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0,
    modelCalls: 0, toolCalls: 0, errors: 0, denied: 0, pending: 0, aborted: false, stopReason: undefined, removed: false };
  let inModelCall = false;
  for (const item of turn.items) {
    if (item.kind !== "message") {
      inModelCall = false;
      continue;
    }
    const message = item.message;
    const result = item.result && item.result.message;
    for (const at of [timeOf(message.ts), result && timeOf(result.ts)]) {
      if (at === undefined) continue;
      if (stats.start === undefined || at < stats.start) stats.start = at;
      if (stats.end === undefined || at > stats.end) stats.end = at;
    }
    const model = isModelMessage(message);
    if (model && !inModelCall) stats.modelCalls++;
    inModelCall = model;
    if (message.role === "user" && item.removedBy) stats.removed = true;
    const usage = message.usage;
    if (isObject(usage)) {
      stats.inputTokens += isCount(usage.inputTokens) ? usage.inputTokens : 0;
      stats.outputTokens += isCount(usage.outputTokens) ? usage.outputTokens : 0;
      stats.cacheReadTokens += isCount(usage.cacheReadTokens) ? usage.cacheReadTokens : 0;
    }
    if (typeof message.stopReason === "string") {
      stats.stopReason = message.stopReason;
      if (message.stopReason === "aborted") stats.aborted = true;
    }
    if (message.type === "tool_call") {
      stats.toolCalls++;
      stats.waitMs += waitOf(result);
      if (denialOf(message, result)) stats.denied++;
      else if (result && result.isError === true) stats.errors++;
      const approval = message.approval;
      if (!result && isObject(approval) && approval.status === "pending") stats.pending++;
    }
  }
  if (stats.start !== undefined && stats.end !== undefined) stats.durationMs = Math.max(0, stats.end - stats.start - stats.waitMs);
  return stats;
}

/**
 * A value named in a problem: its JSON, cut short, or its type.
 * @param {unknown} value
 * @returns {string}
 */
export function describe(value) {
  if (value === undefined) return "missing";
  if (Array.isArray(value)) return "an array";
  if (value === null) return "null";
  if (typeof value === "object") return "an object";
  if (typeof value === "string") return JSON.stringify(value.length > 40 ? value.slice(0, 40) + "…" : value);
  return typeof value === "number" || typeof value === "boolean" ? String(value) : typeof value;
}

/**
 * @param {unknown} error
 * @returns {string}
 */
export function errorText(error) {
  return error instanceof Error ? error.message : typeof error === "string" ? error : "an unknown error";
}
