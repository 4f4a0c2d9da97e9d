import type { CompactionStrategy } from "./compaction-strategy.ts";
import type { CompactionTally } from "./compaction.ts";
import { messageCharacters } from "./content-size.ts";
import { jsonLength } from "./json-length.ts";
import { checkNumber } from "../numeric-options.ts";
import {
  followSessionEdits,
  keepOutput,
  markSessionEdits,
  notifySessionChange,
  unfollowSessionEdits,
  type Message,
  type Session,
  type SessionEdits,
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
  const strategy: CompactionStrategy = (session, context) => {
    clearer(session, context.reason);
  };
  strategyEnds.set(strategy, clearer.release);
  return strategy;
}

// What a strategy follows of a session, to let go when a run using it ends: a strategy made for
// each run of a long-lived session (the CLI's) must not leave a reader on the session per run.
const strategyEnds = new WeakMap<CompactionStrategy, () => void>();

/** Ends what the run's strategies follow of its session (the run ended); a later run follows it again. */
export function releaseStrategies(strategies: readonly CompactionStrategy[] | undefined): void {
  if (strategies === undefined) return;
  for (const strategy of strategies) strategyEnds.get(strategy)?.();
}

/** The loop's clearer: clears what is due, adding what it did to `tally`; `release` stops its following of the session. */
export type Clearer = ((session: Session, reason: "before-call" | "overflow", tally?: CompactionTally) => number) & {
  release: () => void;
};

/**
 * `clearToolResults` as the loop runs it by default, synchronously before each call: clears the
 * batch once it is due (at once when `reason` is `overflow`). Returns how many results it cleared,
 * and adds them and the characters they freed to `tally`.
 * Incremental: it remembers how far it has looked and which results it found clearable, so each
 * call reads only the messages that left the last `keepLast` results since the one before, and
 * the results at or after the lowest place the session's edit record says was changed since (as a
 * store learns of them); a clearable result replaced without a notice is noticed too. The session
 * is read again from its start only when messages were removed behind it. Use one per session.
 */
export function createClearer(options: ClearToolResultsOptions = {}): Clearer {
  checkNumber("clearToolResults: keepLast", options.keepLast, { min: 0, integer: true });
  checkNumber("clearToolResults: minChars", options.minChars, { min: 0, integer: true });
  checkNumber("clearToolResults: batch", options.batch, { min: 1, integer: true });
  const keepLast = options.keepLast ?? 3;
  const minChars = options.minChars ?? 2000;
  const batch = options.batch ?? 10;
  let scan = newScan(minChars);
  let followed: { session: Session; edits: SessionEdits } | undefined;
  const release = (): void => {
    if (followed !== undefined) unfollowSessionEdits(followed.session, followed.edits);
    followed = undefined;
  };
  const clearer = (session: Session, reason: "before-call" | "overflow", tally?: CompactionTally): number => {
    if (followed?.session !== session) {
      release();
      scan = newScan(minChars);
      followed = { session, edits: followSessionEdits(session) };
    }
    const { messages } = session;
    const { edits } = followed;
    if (!follow(scan, messages, edits)) scan = newScan(minChars);
    markSessionEdits(edits);
    advance(scan, messages, startOfLastResults(messages, keepLast, scan.scanned));
    const clearable = scan.clearable;
    if (clearable.length === 0 || (clearable.length < batch && reason !== "overflow")) return 0;
    let characters = 0;
    for (const { index, toolName } of clearable) characters += clear(session, index, toolName);
    const count = clearable.length;
    cleared(scan, messages);
    // Its own replacements are known: not edits to follow next time.
    markSessionEdits(edits);
    if (tally !== undefined) {
      tally.count += count;
      tally.characters += characters;
    }
    return count;
  };
  return Object.assign(clearer, { release });
}

const details = { strategy: "clear-tool-results" };

type ReadResult = { index: number; message: Message; toolName: string };

// What a clearer has read of a session: messages before `scanned` are classified, every result
// read kept with the object it saw and the clearable ones listed (oldest first), and the tool
// names of calls whose results are not read yet. A plain record and the functions below: one per
// run, nothing made per call.
type Scan = {
  scanned: number;
  clearable: ReadResult[];
  last: Message | undefined;
  readonly read: ReadResult[];
  readonly names: Map<string, string>;
  readonly minChars: number;
};

function newScan(minChars: number): Scan {
  return { scanned: 0, clearable: [], last: undefined, read: [], names: new Map(), minChars };
}

/**
 * Takes in the results replaced behind the scan (at or after the lowest place edited since the
 * last call); false when what was read is no longer the session's (messages removed, or a result
 * replaced by another kind of message): then read it from the start.
 */
function follow(scan: Scan, messages: readonly Message[], edits: SessionEdits): boolean {
  const { scanned, read, clearable } = scan;
  if (scanned === 0) return true;
  if (edits.spliced || messages.length < scanned) return false;
  if (edits.lowest < scanned)
    for (let at = firstReadFrom(read, edits.lowest); at < read.length; at++) {
      const entry = read[at]!;
      if (messages[entry.index] !== entry.message && !reclassify(scan, entry, messages[entry.index]!)) return false;
    }
  // Backwards: a result that stops being clearable leaves the list behind the walk.
  for (let at = clearable.length - 1; at >= 0; at--) {
    const entry = clearable[at]!;
    if (messages[entry.index] !== entry.message && !reclassify(scan, entry, messages[entry.index]!)) return false;
  }
  if (messages[scanned - 1] === scan.last) return true;
  // The last message read was a result replaced above, or messages moved.
  const final = read.at(-1);
  if (final?.index !== scanned - 1 || final.message !== messages[scanned - 1]) return false;
  scan.last = final.message;
  return true;
}

/** Reads the messages from where it stopped up to `end`. */
function advance(scan: Scan, messages: readonly Message[], end: number): void {
  const { names } = scan;
  for (let index = scan.scanned; index < end; index++) {
    const message = messages[index]!;
    if (!("type" in message)) continue;
    if (message.type === "tool_call") names.set(message.id, message.name);
    if (message.type !== "tool_result") continue;
    const toolName = names.get(message.id) ?? "a tool";
    names.delete(message.id);
    const entry = { index, message, toolName };
    scan.read.push(entry);
    if (isClearable(scan, message, toolName)) scan.clearable.push(entry);
  }
  if (end > scan.scanned) {
    scan.scanned = end;
    scan.last = messages[end - 1];
  }
}

/** The listed results were cleared (replaced by placeholders): nothing is clearable now. */
function cleared(scan: Scan, messages: readonly Message[]): void {
  for (const entry of scan.clearable) entry.message = messages[entry.index]!;
  scan.clearable = [];
  scan.last = messages[scan.scanned - 1];
}

// Content parts (images, files) are what the model is shown of such a result: not plain output to clear.
function isClearable(scan: Scan, message: Message, toolName: string): boolean {
  return (
    "type" in message &&
    message.type === "tool_result" &&
    message.kept !== "cleared" &&
    message.content === undefined &&
    toolName !== searchToolsName &&
    longerThan(message, scan.minChars)
  );
}

// Takes in the result now at `entry`'s place; false when it is another kind of message.
function reclassify(scan: Scan, entry: ReadResult, now: Message): boolean {
  if (!("type" in now) || now.type !== "tool_result") return false;
  const { clearable } = scan;
  entry.message = now;
  const listed = clearable.indexOf(entry);
  const clears = isClearable(scan, now, entry.toolName);
  if (listed >= 0 && !clears) clearable.splice(listed, 1);
  if (listed < 0 && clears) {
    const after = clearable.findIndex((item) => item.index > entry.index);
    clearable.splice(after < 0 ? clearable.length : after, 0, entry);
  }
  return true;
}

// Where in `read` (results in order of place) the first result at or after `index` is.
function firstReadFrom(read: readonly ReadResult[], index: number): number {
  let low = 0;
  let high = read.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (read[middle]!.index < index) low = middle + 1;
    else high = middle;
  }
  return low;
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

// As `outputText` shows it: a string as it is, anything else as indented JSON, never shorter than its JSON.
function longerThan(result: ToolResultMessage, minChars: number): boolean {
  const { output } = result;
  if (typeof output === "string") return output.length > minChars;
  if (jsonLength(output, minChars) > minChars) return true;
  return typeof output === "object" && output !== null && outputText(output).length > minChars;
}

// Clears the result at `index`; returns the characters of JSON it freed.
function clear(session: Session, index: number, toolName: string): number {
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
  return messageCharacters(previous) - messageCharacters(cleared);
}
