import type { CompactionStrategy } from "./compaction-strategy.ts";
import { jsonLengthAtMost } from "./compaction.ts";
import { checkNumber } from "../numeric-options.ts";
import {
  keepOutput,
  notifySessionChange,
  onSessionChange,
  type Message,
  type Session,
  type SessionChange,
  type ToolResultMessage,
} from "../session.ts";
import { clearedPlaceholder, outputText } from "../tools/recall-output.ts";
import { searchToolsName } from "../tools/search-tools.ts";

export type ClearToolResultsOptions = {
  /** The most recent tool results never cleared: an integer >= 0 (default 3). */
  keepLast?: number;
  /** Only outputs longer than this many characters are cleared: an integer >= 0 (default 2,000). */
  minChars?: number;
  /** Nothing is cleared until at least this many results are clearable, then all of them at once: an integer >= 1 (default 10). */
  batch?: number;
};

/**
 * Clears old tool output: a tool result is clearable when it is not among the session's last
 * `keepLast` tool results and its output is longer than `minChars`. Once `batch` results are
 * clearable (or at once after a context overflow), every clearable output becomes a one-line
 * placeholder naming the tool, the call and the size, and saying how to read it again
 * (`recall_output`, which the loop then offers). Until then the session is left as it is, so the
 * prefix a provider cached survives many turns. Each result is replaced through a recorded
 * `replace` change (`details: { strategy: "clear-tool-results" }`) whose `previous` keeps the
 * output in the store's log; in memory it is kept beside the session (`keptOutput`). The results
 * of `search_tools` are never cleared (the tools they loaded stay loaded), nor results with content
 * parts (`content`: what the model is shown of them is not their `output`).
 */
export function clearToolResults(options: ClearToolResultsOptions = {}): CompactionStrategy {
  const clearer = createClearer(options);
  return (session, context) => {
    clearer(session, context.reason);
  };
}

/**
 * `clearToolResults` as the loop runs it by default, synchronously before each call: clears the
 * batch once it is due (at once when `reason` is `overflow`). Returns how many results it cleared.
 * Incremental: it remembers how far it has looked and which results it found clearable, so each
 * call reads only the messages that left the last `keepLast` results since the one before, and
 * the results the session's change notices say were replaced (as a store learns of them); a
 * clearable result replaced without a notice is noticed too. The session is read again from its
 * start only when messages were removed behind it. Use one per session.
 */
export function createClearer(
  options: ClearToolResultsOptions = {},
): (session: Session, reason: "before-call" | "overflow") => number {
  checkNumber("clearToolResults: keepLast", options.keepLast, { min: 0, integer: true });
  checkNumber("clearToolResults: minChars", options.minChars, { min: 0, integer: true });
  checkNumber("clearToolResults: batch", options.batch, { min: 1, integer: true });
  const keepLast = options.keepLast ?? 3;
  const minChars = options.minChars ?? 2000;
  const batch = options.batch ?? 10;
  let scan = emptyScan(minChars);
  let followed: { session: Session; stop: () => void } | undefined;
  return (session, reason) => {
    if (followed?.session !== session) {
      followed?.stop();
      scan = emptyScan(minChars);
      followed = { session, stop: onSessionChange(session, (change) => scan.notice(change)) };
    }
    const { messages } = session;
    if (!scan.follow(messages)) scan = emptyScan(minChars);
    scan.advance(messages, startOfLastResults(messages, keepLast, scan.scanned));
    const clearable = scan.clearable;
    if (clearable.length === 0 || (clearable.length < batch && reason !== "overflow")) return 0;
    for (const { index, toolName } of clearable) clear(session, index, toolName);
    scan.cleared(messages);
    return clearable.length;
  };
}

const details = { strategy: "clear-tool-results" };

type ReadResult = { index: number; message: Message; toolName: string };

// What a clearer has read of a session: messages before `scanned` are classified, every result
// read kept with the object it saw and the clearable ones listed (oldest first); the places the
// session's notices said were replaced since (any result's replacement can change what is
// clearable: a short result replaced by a long one); and the tool names of calls whose results
// are not read yet.
function emptyScan(minChars: number) {
  let scanned = 0;
  let last: Message | undefined;
  let clearable: ReadResult[] = [];
  const read: ReadResult[] = [];
  const names = new Map<string, string>();
  let replaced: number[] = [];
  let removed = false;
  // Content parts (images, files) are what the model is shown of such a result: not plain output to clear.
  const isClearable = (message: Message, toolName: string): boolean =>
    "type" in message &&
    message.type === "tool_result" &&
    message.kept !== "cleared" &&
    message.content === undefined &&
    toolName !== searchToolsName &&
    longerThan(message, minChars);
  // Takes in the result now at `entry`'s place; false when it is another kind of message.
  const reclassify = (entry: ReadResult, now: Message): boolean => {
    if (!("type" in now) || now.type !== "tool_result") return false;
    entry.message = now;
    const listed = clearable.indexOf(entry);
    const clears = isClearable(now, entry.toolName);
    if (listed >= 0 && !clears) clearable.splice(listed, 1);
    if (listed < 0 && clears) {
      const after = clearable.findIndex((item) => item.index > entry.index);
      clearable.splice(after < 0 ? clearable.length : after, 0, entry);
    }
    return true;
  };
  return {
    get scanned() {
      return scanned;
    },
    get clearable(): readonly { index: number; toolName: string }[] {
      return clearable;
    },
    notice(change: SessionChange): void {
      if (change.type === "splice") removed = true;
      else if ((change.type === "replace" || change.type === "update") && change.index < scanned)
        replaced.push(change.index);
    },
    /**
     * Takes in the results replaced behind the scan; false when what was read is no longer the
     * session's (messages removed, or a result replaced by another kind of message): then read
     * it from the start.
     */
    follow(messages: readonly Message[]): boolean {
      if (scanned === 0) return true;
      if (removed || messages.length < scanned) return false;
      for (const index of replaced) {
        const entry = readAt(read, index);
        if (entry !== undefined && messages[index] !== entry.message && !reclassify(entry, messages[index]!))
          return false;
      }
      replaced = [];
      for (const entry of [...clearable])
        if (messages[entry.index] !== entry.message && !reclassify(entry, messages[entry.index]!)) return false;
      if (messages[scanned - 1] === last) return true;
      // The last message read was a result replaced above, or messages moved.
      const final = read.at(-1);
      if (final?.index !== scanned - 1 || final.message !== messages[scanned - 1]) return false;
      last = final.message;
      return true;
    },
    /** Reads the messages from where it stopped up to `end`. */
    advance(messages: readonly Message[], end: number): void {
      for (let index = scanned; index < end; index++) {
        const message = messages[index]!;
        if (!("type" in message)) continue;
        if (message.type === "tool_call") names.set(message.id, message.name);
        if (message.type !== "tool_result") continue;
        const toolName = names.get(message.id) ?? "a tool";
        names.delete(message.id);
        const entry = { index, message, toolName };
        read.push(entry);
        if (isClearable(message, toolName)) clearable.push(entry);
      }
      if (end > scanned) {
        scanned = end;
        last = messages[end - 1];
      }
    },
    /** The listed results were cleared (replaced by placeholders): nothing is clearable now. */
    cleared(messages: readonly Message[]): void {
      for (const entry of clearable) entry.message = messages[entry.index]!;
      clearable = [];
      replaced = [];
      last = messages[scanned - 1];
    },
  };
}

// The result read at `index` (results are read in order of place).
function readAt(read: readonly ReadResult[], index: number): ReadResult | undefined {
  let low = 0;
  let high = read.length - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const entry = read[middle]!;
    if (entry.index === index) return entry;
    if (entry.index < index) low = middle + 1;
    else high = middle - 1;
  }
  return undefined;
}

// The index of the first of the last `keepLast` tool results (the length when `keepLast` is 0),
// looking back no further than `stop`: everything before it was read already.
function startOfLastResults(messages: readonly Message[], keepLast: number, stop: number): number {
  let seen = 0;
  for (let index = messages.length - 1; index >= stop; index--) {
    const message = messages[index]!;
    if ("type" in message && message.type === "tool_result" && ++seen > keepLast) return index + 1;
  }
  return stop;
}

function longerThan(result: ToolResultMessage, minChars: number): boolean {
  const { output } = result;
  if (typeof output === "string") return output.length > minChars;
  return !jsonLengthAtMost(output, minChars) && outputText(output).length > minChars;
}

function clear(session: Session, index: number, toolName: string): void {
  const previous = session.messages[index] as ToolResultMessage;
  // An offloaded result's whole output is kept already; its head and tail are not the original.
  if (previous.kept === undefined) keepOutput(session, previous.id, previous.output, { recorded: true });
  const size = outputText(previous.output).length;
  const cleared: ToolResultMessage = {
    ...previous,
    output: clearedPlaceholder(toolName, previous.id, size),
    kept: "cleared",
  };
  session.messages[index] = cleared;
  notifySessionChange(session, { type: "replace", index, message: cleared, previous, reason: "compaction", details });
}
