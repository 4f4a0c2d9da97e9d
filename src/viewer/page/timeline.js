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
import { errorText } from "./dom.js";
import { addMessage as countMessage, emptyParts } from "./context-usage.js";
import { describe, entryProblem, isObject, messageProblem } from "./entry-check.js";

/** @typedef {import("./entry-check.js").JsonObject} JsonObject */
/** @typedef {{ line: number, message: string }} Problem */
/**
 * A message of the history. `original`: the message before the first `replace`; `result` (on a
 * tool call) and `call` (on its result) pair them; `removedBy`: the compaction that removed it;
 * `delivered` (on a call whose result started a background task): a message gave the model its outcome.
 * @typedef {{ kind: "message", line: number, turn: number, message: JsonObject, original?: JsonObject, result?: MessageItem, call?: MessageItem, removedBy?: CompactionItem, insertedBy?: CompactionItem, delivered?: boolean }} MessageItem
 */
/** @typedef {{ kind: "compaction", line: number, turn: number, entry: JsonObject, removed: MessageItem[], inserted: MessageItem[] }} CompactionItem */
/** @typedef {{ kind: "custom" | "other", line: number, turn: number, entry: JsonObject }} EntryItem */
/** @typedef {MessageItem | CompactionItem | EntryItem} Item */
/**
 * The history cut at each user message (a first turn without one, `number` 0, holds what came
 * before: the system prompt). `stats` and `problems` are set when the page draws it. `context`:
 * the session's estimated tokens by part (see context-usage.js) once the turn's last entry applied.
 * @typedef {{ index: number, number: number, items: Item[], stats?: TurnStats, problems?: Problem[], context?: number[] }} Turn
 */
/**
 * What a turn cost and how it ended. `durationMs`: its run time, from its first message to its
 * last less `waitMs`, the time its calls waited for a human's decision. `costUsd`: its model calls'
 * cost where their model's price is known (undefined when none is).
 * @typedef {{ start: number | undefined, end: number | undefined, durationMs: number | undefined, waitMs: number, inputTokens: number, outputTokens: number,
 *   cacheReadTokens: number, modelCalls: number, toolCalls: number, errors: number, denied: number, pending: number, aborted: boolean,
 *   stopReason: string | undefined, removed: boolean, costUsd: number | undefined }} TurnStats
 */
/**
 * `live`: the session's messages as they are now (what `replace`/`update`/`splice` entries point
 * at, by index); `calls`: tool calls by id; `dirty`: indexes of turns changed since the page drew
 * them; `context`: the live messages' estimated tokens by part.
 * @typedef {{ turns: Turn[], live: MessageItem[], calls: Map<unknown, MessageItem>, problems: Problem[], dirty: Set<number>, userTurns: number, context: number[] }} Timeline
 */

/** @returns {Timeline} */
export function createTimeline() {
  return { turns: [], live: [], calls: new Map(), problems: [], dirty: new Set(), userTurns: 0, context: emptyParts() };
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
    // The context as the session stood after this entry: the latest turn's, until another entry.
    const turn = timeline.turns[timeline.turns.length - 1];
    if (turn !== undefined) turn.context = timeline.context.slice();
  }
}

/**
 * @param {Timeline} timeline
 * @param {number} line
 * @param {JsonObject} entry
 */
function applyEntry(timeline, line, entry) {
  const wrong = entry.type === "message" ? undefined : entryProblem(entry);
  if (wrong !== undefined) problem(timeline, line, wrong);
  switch (entry.type) {
    case "message": {
      const message = entry.message;
      if (!isMessage(message))
        return problem(timeline, line, 'a "message" entry needs a message object (with a "role" or a "type")');
      const wrongMessage = messageProblem(message);
      if (wrongMessage !== undefined) problem(timeline, line, wrongMessage);
      return addMessage(timeline, line, message);
    }
    case "replace":
    case "update": {
      const index = entry.index;
      const message = entry.message;
      const item = isIndex(index) ? timeline.live[index] : undefined;
      if (item === undefined || !isMessage(message)) {
        return problem(
          timeline,
          line,
          '"' +
            entry.type +
            '" of message ' +
            describe(index) +
            ", but the session has " +
            timeline.live.length +
            " messages here",
        );
      }
      const wrongMessage = messageProblem(message);
      if (wrongMessage !== undefined) problem(timeline, line, wrongMessage);
      if (entry.type === "replace" && item.original === undefined)
        item.original = isMessage(entry.previous) ? entry.previous : item.message;
      countMessage(timeline.context, item.message, -1);
      countMessage(timeline.context, message, 1);
      item.message = message;
      return touch(timeline, item);
    }
    case "splice": {
      const index = entry.index;
      const removedCount = Array.isArray(entry.removed) ? entry.removed.length : -1;
      const inserted = Array.isArray(entry.inserted) ? entry.inserted : undefined;
      if (
        !isIndex(index) ||
        removedCount < 0 ||
        inserted === undefined ||
        !inserted.every(isMessage) ||
        index + removedCount > timeline.live.length
      ) {
        return problem(
          timeline,
          line,
          '"splice" of ' +
            removedCount +
            " messages at " +
            describe(index) +
            ", but the session has " +
            timeline.live.length +
            " messages here",
        );
      }
      /** @type {CompactionItem} */
      const compaction = { kind: "compaction", line, turn: -1, entry, removed: [], inserted: [] };
      place(timeline, compaction);
      compaction.inserted = inserted.map(
        (message) =>
          /** @type {MessageItem} */ ({
            kind: "message",
            line,
            message,
            turn: compaction.turn,
            insertedBy: compaction,
          }),
      );
      compaction.removed = timeline.live.splice(index, removedCount, ...compaction.inserted);
      for (const item of compaction.inserted) countMessage(timeline.context, item.message, 1);
      for (const item of compaction.removed) {
        countMessage(timeline.context, item.message, -1);
        item.removedBy = compaction;
        touch(timeline, item);
      }
      return;
    }
    case "custom":
      if (typeof entry.customType !== "string")
        problem(timeline, line, 'a "custom" entry needs a string "customType", not ' + describe(entry.customType));
      return place(timeline, { kind: "custom", line, turn: -1, entry });
    default:
      return place(timeline, { kind: "other", line, turn: -1, entry });
  }
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
  countMessage(timeline.context, message, 1);
  if (message.type === "tool_call") timeline.calls.set(message.id, item);
  if (message.type === "tool_result") {
    const call = timeline.calls.get(message.id);
    if (call !== undefined && call.result === undefined) {
      call.result = item;
      item.call = call;
      touch(timeline, call);
    }
  }
  if (typeof message.deliversTask === "string") markDelivered(timeline, message.deliversTask);
  place(timeline, item);
}

/**
 * Marks the call whose result started task `id` as delivered (its outcome reached the model).
 * @param {Timeline} timeline
 * @param {string} id
 */
function markDelivered(timeline, id) {
  for (const call of timeline.calls.values()) {
    const task = call.result && call.result.message.task;
    if (isObject(task) && task.id === id) {
      call.delivered = true;
      return touch(timeline, call);
    }
  }
}

/**
 * @param {Timeline} timeline
 * @param {Item} item
 */
function place(timeline, item) {
  // A background task's outcome comes as a user message, but the user did not write it: no new turn.
  const startsTurn =
    item.kind === "message" && item.message.role === "user" && typeof item.message.deliversTask !== "string";
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
export function isMessage(value) {
  return isObject(value) && (typeof value.role === "string" || typeof value.type === "string");
}
