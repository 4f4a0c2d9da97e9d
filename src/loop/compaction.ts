import { checkNumber } from "../numeric-options.ts";
import { turnStartBefore } from "../session-turns.ts";
import {
  isModelMessage,
  notifySessionChange,
  type JsonValue,
  type Message,
  type Session,
  type SessionEdits,
} from "../session.ts";
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
 * so each call reads only the messages that entered since, not the whole session. Returns how
 * many messages it compacted. Use one per session. Unless `protectLastTurn` is false, it never
 * cuts the last model turn: the next request must carry that turn's signed thinking intact (the
 * loop compacts right before each model call).
 */
export function createCompactor(
  options: CompactSessionOptions & { protectLastTurn?: boolean } = {},
): (session: Session) => number {
  const truncation = createTruncation(options);
  // Nobody tells this compactor what changed (the loop's follows the session's edit record): the
  // messages that were among the recent turns at its last call are read again, so one changed
  // while it was recent (in place, or replaced) is measured as it is when it leaves them.
  let recentFrom = 0;
  return (session) => {
    const { messages } = session;
    const count = truncateDue(truncation, session, recentFrom, undefined);
    recentFrom = lastIndexBeforeRecentTurns(messages, truncation.keepTurns, 0, truncation.minimumTurns) + 1;
    return count;
  };
}

/** What a compaction did, added up by the compaction itself: the `compaction` event's count and characters. */
export type CompactionTally = { count: number; characters: number };

/**
 * What an incremental truncation knows of its session: the messages before `seen` were measured
 * once, when they entered (or were edited), and `long` lists those it would cut, oldest first,
 * until they are cut. A call before which no batch can be due reads only what entered since.
 */
export type Truncation = {
  readonly keepTurns: number;
  readonly maxLength: number;
  readonly batch: number;
  readonly minimumTurns: number;
  seen: number;
  /** The message at `seen - 1` when it was read: another object there means messages moved unannounced. */
  last: Message | undefined;
  readonly long: number[];
};

/**
 * The lowest index an edit record says was changed since its mark: 0 after a splice (everything
 * after it moved), `Infinity` when nothing was.
 */
export function editedFrom(edits: SessionEdits): number {
  return edits.spliced ? 0 : edits.lowest;
}

/** `createCompactor`'s state, as the loop keeps it (`truncateDue`). */
export function createTruncation(options: CompactSessionOptions & { protectLastTurn?: boolean } = {}): Truncation {
  checkCompactOptions(options);
  return {
    keepTurns: options.keepTurns ?? 2,
    maxLength: options.maxLength ?? 120,
    batch: options.batch ?? 1,
    minimumTurns: options.protectLastTurn === false ? 0 : 1,
    seen: 0,
    last: undefined,
    long: [],
  };
}

/**
 * `createCompactor`'s call as the loop makes it: cuts the long messages that left the recent turns
 * once there are `batch` of them, adding what it cut to `tally` (messages, and the characters of
 * JSON the session is shorter by). Each message is measured (without building anything:
 * `jsonLength`) when it is first read, and again when it is at or after `changedFrom` (the lowest
 * index changed since the last call: `editedFrom` of the session's edit record in the loop;
 * `Infinity` when nothing was); it is cut once, when its batch is due.
 */
export function truncateDue(
  truncation: Truncation,
  session: Session,
  changedFrom: number,
  tally: CompactionTally | undefined,
): number {
  const { messages } = session;
  const { long, maxLength } = truncation;
  let from = truncation.seen;
  // Fewer messages than were read, or some moved without a notice (the last message read is no
  // longer where it was): read them all again. An announced splice says 0 (`editedFrom`).
  if (messages.length < from || (from > 0 && messages[from - 1] !== truncation.last)) from = 0;
  else if (changedFrom < from) from = changedFrom;
  if (from < truncation.seen) {
    let kept = long.length;
    while (kept > 0 && long[kept - 1]! >= from) kept--;
    long.length = kept;
  }
  for (let index = from; index < messages.length; index++) if (isLong(messages[index]!, maxLength)) long.push(index);
  truncation.seen = messages.length;
  truncation.last = messages[messages.length - 1];
  // Fewer long messages than a batch anywhere: none is due, wherever the recent turns begin.
  if (long.length < truncation.batch) return 0;
  return cutDue(truncation, session, tally);
}

// Cuts the long messages before the recent turns when there are a batch of them.
function cutDue(truncation: Truncation, session: Session, tally: CompactionTally | undefined): number {
  const { messages } = session;
  const { long, maxLength } = truncation;
  const horizon = lastIndexBeforeRecentTurns(messages, truncation.keepTurns, long[0]!, truncation.minimumTurns);
  let due = 0;
  while (due < long.length && long[due]! <= horizon) due++;
  if (due < truncation.batch) return 0;
  let count = 0;
  for (let at = 0; at < due; at++) {
    const index = long[at]!;
    const previous = messages[index]!;
    const cut = truncate(previous, maxLength);
    if (cut === undefined) continue;
    // A new object, not an edit: whoever cached the old one (a converter) sees the change.
    messages[index] = cut;
    if (index === truncation.seen - 1) truncation.last = cut;
    notifySessionChange(session, { type: "replace", index, message: cut, previous, reason: "compaction" });
    if (tally !== undefined) tally.characters += messageCharacters(previous) - messageCharacters(cut);
    count++;
  }
  long.splice(0, due);
  if (tally !== undefined) tally.count += count;
  return count;
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
