import { checkNumber } from "../numeric-options.ts";
import { turnStartBefore } from "../session-turns.ts";
import { isModelMessage, notifySessionChange, type JsonValue, type Message, type Session } from "../session.ts";
import { hasMedia, messageCharacters, withoutMedia } from "./content-size.ts";
import { jsonLength, surelyWithin } from "../shared/json-length.ts";

export type CompactSessionOptions = {
  /** How many assistant replies or model turns must follow a message before it is cut: an integer >= 0 (default 2). */
  keepTurns?: number;
  /**
   * Thinking text longer than this is cut to this length: an integer >= 0 (default 120). A tool-call input whose
   * JSON is longer is replaced by `{ _compacted: <prefix of its JSON this long>... }`.
   */
  maxLength?: number;
  /**
   * In the loop, cut nothing until at least this many messages are due, then all of them at once:
   * each cut changes a message the provider cached, and everything after it is billed again, so
   * cutting in batches keeps the cached prompt prefix for many turns. An integer >= 1; the loop's
   * default is 10 (`createCompactor`'s alone: 1). bench/cost.ts: a 60-turn coding task billed
   * 6.2M input-token equivalents under Anthropic caching cutting every turn, 1.4M in batches of 10.
   */
  batch?: number;
};

/** The loop's `batch` of truncation when none is given (see `CompactSessionOptions.batch`). */
export const defaultTruncationBatch = 10;

/**
 * Truncation compaction: walking back from the end,
 * once `keepTurns` assistant replies (or model turns) have come after a thinking or tool_call
 * message, thinking text longer than `maxLength` is cut to a prefix, a tool-call input whose
 * JSON is longer becomes `{ _compacted: <prefix of that JSON> }`, and the message is marked
 * `compacted: true`. Images and files older than the window (in user messages and tool results)
 * become a short text part each (`[image: image/png, 48 KB, omitted]`); otherwise user messages,
 * assistant text and tool results are never touched. A
 * compacted thinking block keeps its signature for the record; converters do not send it back
 * as signed reasoning. Idempotent. Replaces the cut messages in the session's array with new
 * objects (the originals are not modified) and returns the session.
 */
export function compactSession(session: Session, options: CompactSessionOptions = {}): Session {
  createCompactor({ ...options, protectLastTurn: false })(session);
  return session;
}

/**
 * An incremental compactor for the loop: it remembers how far the session is already compacted,
 * so each call walks only the last turns and the messages that just left them, not the whole
 * session. Returns how many messages it compacted. Use one per session. Unless
 * `protectLastTurn` is false, it never cuts the last model turn: the next request must carry that
 * turn's signed thinking intact (the loop compacts right before each model call).
 */
export function createCompactor(
  options: CompactSessionOptions & { protectLastTurn?: boolean } = {},
): (session: Session) => number {
  const truncation = createTruncation(options);
  return (session) => truncation(session, undefined);
}

/** What a compaction did, added up by the compaction itself: the `compaction` event's count and characters. */
export type CompactionTally = { count: number; characters: number };

/**
 * `createCompactor` as the loop runs it: adds what it cut to `tally` (messages, and the characters
 * of JSON the session is shorter by). Each message is measured once when it leaves the recent
 * turns (without building anything: `jsonLength`) and cut once, when its batch is due.
 */
export function createTruncation(
  options: CompactSessionOptions & { protectLastTurn?: boolean } = {},
): (session: Session, tally: CompactionTally | undefined) => number {
  checkCompactOptions(options);
  const keepTurns = options.keepTurns ?? 2;
  const maxLength = options.maxLength ?? 120;
  const batch = options.batch ?? 1;
  const minimumTurns = options.protectLastTurn === false ? 0 : 1;
  // Messages before `scanned` were looked at; the cuts due among them wait in `due` (by index)
  // until there are `batch` of them.
  let scanned = 0;
  const due: number[] = [];
  let seen = 0;
  return (session, tally) => {
    const { messages } = session;
    // Fewer messages than last time: something removed some (a strategy's splice); start over.
    if (messages.length < seen) {
      scanned = 0;
      due.length = 0;
    }
    seen = messages.length;
    const horizon = lastIndexBeforeRecentTurns(messages, keepTurns, scanned, minimumTurns);
    for (let index = scanned; index <= horizon; index++) if (isLong(messages[index]!, maxLength)) due.push(index);
    if (horizon >= scanned) scanned = horizon + 1;
    if (due.length === 0 || due.length < batch) return 0;
    let count = 0;
    for (const index of due) {
      const previous = messages[index]!;
      const cut = truncate(previous, maxLength);
      if (cut === undefined) continue;
      // A new object, not an edit: whoever cached the old one (a converter) sees the change.
      messages[index] = cut;
      notifySessionChange(session, { type: "replace", index, message: cut, previous, reason: "compaction" });
      if (tally !== undefined) tally.characters += messageCharacters(previous) - messageCharacters(cut);
      count++;
    }
    due.length = 0;
    if (tally !== undefined) tally.count += count;
    return count;
  };
}

/** Throws an `AgentError` for options that are not counts (see `CompactSessionOptions`). */
export function checkCompactOptions(options: CompactSessionOptions): void {
  checkNumber("compaction.keepTurns", options.keepTurns, { min: 0, integer: true });
  checkNumber("compaction.maxLength", options.maxLength, { min: 0, integer: true });
  checkNumber("compaction.batch", options.batch, { min: 1, integer: true });
}

// The index of the last message old enough to compact (-1 if none), walking back no further than
// `stop`: `keepTurns` model turns or `keepTurns` assistant replies must have come after it, and
// at least `minimumTurns` whole model turns (1: never a message of the last turn).
// Both counts only grow walking back, so every earlier message qualifies too.
function lastIndexBeforeRecentTurns(
  messages: readonly Message[],
  keepTurns: number,
  stop: number,
  minimumTurns: number,
): number {
  let turns = 0;
  let replies = 0;
  // Turn starts rather than `sessionTurnsBackward`: this runs before every model call, and builds nothing.
  for (let end = messages.length; end > stop;) {
    // Most calls end here: the turn before the recent ones is old enough as a whole.
    if (turns >= minimumTurns && (turns >= keepTurns || replies >= keepTurns)) return end - 1;
    const start = turnStartBefore(messages, end);
    for (let index = end - 1; index >= start && index >= stop; index--) {
      if (turns >= minimumTurns && (turns >= keepTurns || replies >= keepTurns)) return index;
      const message = messages[index]!;
      if ("role" in message && message.role === "assistant") replies++;
    }
    if (isModelMessage(messages[start]!)) turns++;
    end = start;
  }
  return stop - 1;
}

// Whether `truncate` would cut the message: measured, nothing built.
function isLong(message: Message, maxLength: number): boolean {
  if (hasMedia(message)) return true;
  if (!("type" in message) || message.type === "tool_result" || message.compacted === true) return false;
  if (message.type === "thinking") return message.content.length > maxLength;
  return !surelyWithin(message.input, maxLength) && jsonLength(message.input, maxLength) > maxLength;
}

function truncate(message: Message, maxLength: number): Message | undefined {
  // Old images and files: a line saying what was there (the store keeps the bytes).
  const withoutImages = withoutMedia(message);
  if (withoutImages !== undefined) return withoutImages;
  if (!("type" in message) || message.type === "tool_result" || message.compacted === true) return undefined;
  if (message.type === "thinking") {
    if (message.content.length <= maxLength) return undefined;
    return { ...message, content: `${message.content.slice(0, maxLength)}...`, compacted: true };
  }
  // tool_call: the input must stay an object for every provider, so the prefix of its JSON is kept in one.
  if (jsonLength(message.input, maxLength) <= maxLength) return undefined;
  const json = JSON.stringify(message.input);
  return { ...message, input: { _compacted: `${json.slice(0, maxLength)}...` }, compacted: true };
}

// An upper bound of the JSON length, without serializing: small inputs (most of them) are
// known to be short at once.
export function jsonLengthAtMost(value: JsonValue, limit: number): boolean {
  return jsonLength(value, limit) <= limit;
}
