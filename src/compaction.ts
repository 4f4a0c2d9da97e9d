import { notifySessionChange, type JsonValue, type Message, type Session } from "./session.ts";

export type CompactSessionOptions = {
  /** How many assistant replies or model turns must follow a message before it is cut (default 2). The last turn is never cut. */
  keepTurns?: number;
  /**
   * Thinking text longer than this is cut to this length (default 120). A tool-call input whose
   * JSON is longer has its long string values cut to this length (keeping its shape), or, when
   * no single value is long, is replaced by `{ _truncated: <prefix of its JSON> }`.
   */
  maxLength?: number;
};

/**
 * Truncation compaction (seed 000 §8): walking back from the end, once `keepTurns` assistant
 * replies (or model turns) have come after a thinking or tool_call message of an earlier turn, its
 * long text is cut to a prefix and the message
 * is marked `compacted: true` (a compacted thinking block keeps its signature for the record, but
 * converters must not send it back as signed reasoning). User messages, assistant text and tool
 * results are never touched. Idempotent. Replaces the cut messages in the session's array with
 * new objects (the originals are not modified) and returns the session.
 */
export function compactSession(session: Session, options: CompactSessionOptions = {}): Session {
  createCompactor(options)(session);
  return session;
}

/**
 * An incremental compactor for the loop: it remembers how far the session is already compacted,
 * so each call walks only the last turns and the messages that just left them, not the whole
 * session. Returns how many messages it compacted. Use one per session.
 */
export function createCompactor(options: CompactSessionOptions = {}): (session: Session) => number {
  const keepTurns = options.keepTurns ?? 2;
  const maxLength = options.maxLength ?? 120;
  let settled = 0;

  return (session) => {
    const { messages } = session;
    if (settled > messages.length) settled = 0;
    const horizon = lastIndexBeforeRecentTurns(messages, keepTurns, settled);
    let count = 0;
    for (let index = settled; index <= horizon; index++) {
      const cut = truncate(messages[index]!, maxLength);
      if (cut === undefined) continue;
      // A new object, not an edit: whoever cached the old one (a converter) sees the change.
      const previous = messages[index]!;
      messages[index] = cut;
      notifySessionChange(session, { type: "replace", index, message: cut, previous, reason: "compaction" });
      count++;
    }
    settled = Math.max(settled, horizon + 1);
    return count;
  };
}

// The index of the last message old enough to compact (-1 if none), walking back no further than
// `stop`: it must precede the last model turn (whose signed thinking the next request needs
// intact), and `keepTurns` model turns or `keepTurns` assistant replies must have come after it.
// Both counts only grow walking back, so every earlier message qualifies too.
function lastIndexBeforeRecentTurns(messages: readonly Message[], keepTurns: number, stop: number): number {
  let turns = 0;
  let replies = 0;
  let inModelTurn = false;
  for (let index = messages.length - 1; index >= stop; index--) {
    const message = messages[index]!;
    const model = isModelMessage(message);
    if (!model && inModelTurn) turns++;
    if (turns >= 1 && (turns >= keepTurns || replies >= keepTurns)) return index;
    inModelTurn = model;
    if ("role" in message && message.role === "assistant") replies++;
  }
  return stop - 1;
}

function isModelMessage(message: Message): boolean {
  return "role" in message ? message.role === "assistant" : message.type !== "tool_result";
}

function truncate(message: Message, maxLength: number): Message | undefined {
  if (!("type" in message) || message.type === "tool_result" || message.compacted === true) return undefined;
  if (message.type === "thinking") {
    if (message.content.length <= maxLength) return undefined;
    return { ...message, content: `${message.content.slice(0, maxLength)}...`, compacted: true };
  }
  if (hasLongString(message.input, maxLength)) {
    return { ...message, input: truncateStrings(message.input, maxLength) as typeof message.input, compacted: true };
  }
  // Many short values can add up too: then only a prefix of the JSON is kept.
  const json = JSON.stringify(message.input);
  if (json.length <= maxLength) return undefined;
  return { ...message, input: { _truncated: `${json.slice(0, maxLength)}...` }, compacted: true };
}

// Checked first, without allocating: most inputs have nothing to cut.
function hasLongString(value: JsonValue, maxLength: number): boolean {
  if (typeof value === "string") return value.length > maxLength;
  if (value === null || typeof value !== "object") return false;
  if (Array.isArray(value)) return value.some((item) => hasLongString(item, maxLength));
  for (const key in value) if (hasLongString(value[key]!, maxLength)) return true;
  return false;
}

function truncateStrings(value: JsonValue, maxLength: number): JsonValue {
  if (typeof value === "string") return value.length > maxLength ? `${value.slice(0, maxLength)}...` : value;
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((item) => truncateStrings(item, maxLength));
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, truncateStrings(item, maxLength)]));
}
