import type { CompactionStrategy } from "./compaction-strategy.ts";
import type { CompactionTally } from "./compaction.ts";
import { messageCharacters } from "./content-size.ts";
import { jsonLength } from "../shared/json-length.ts";
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
 * `clearToolResults` as a function of the session: clears the batch once it is due (at once when
 * `reason` is `overflow`). Returns how many results it cleared, and adds them and the characters
 * they freed to `tally`. It follows the session's edits itself (see `clearDue`). Use one per session.
 */
export function createClearer(options: ClearToolResultsOptions = {}): Clearer {
  const scan = newScan(options);
  let followed: { session: Session; edits: SessionEdits } | undefined;
  const release = (): void => {
    if (followed !== undefined) unfollowSessionEdits(followed.session, followed.edits);
    followed = undefined;
  };
  // Where the last `keepLast` results began at the last call: a result replaced there without a
  // notice (a hook filling it in) is read again, as it is when it leaves them (the loop's own
  // clearing is told of every replacement it makes).
  let recentFrom = 0;
  const clearer = (session: Session, reason: "before-call" | "overflow", tally?: CompactionTally): number => {
    if (followed?.session !== session) {
      release();
      restart(scan);
      recentFrom = 0;
      followed = { session, edits: followSessionEdits(session) };
    }
    const { edits } = followed;
    const { messages } = session;
    // Only when nothing moved behind the scan (else `clearDue` reads the session from its start).
    const { scanned } = scan;
    if (!edits.spliced && recentFrom < scanned && scanned <= messages.length && messages[scanned - 1] === scan.last)
      readAgain(scan, messages, recentFrom);
    const count = clearDue(scan, session, reason, edits, tally);
    recentFrom = startOfLastResults(messages, scan.keepLast, 0);
    // What changed is read, its own replacements included: not edits to follow next time.
    if (edits.count > 0) markSessionEdits(edits);
    return count;
  };
  return Object.assign(clearer, { release });
}

/**
 * What a clearer knows of its session: messages before `scanned` were read once, when they entered
 * (or were edited), and the results among them it would clear are listed (oldest first) with the
 * object each was, until they are cleared; `last` is the last message read. A plain record and the
 * functions below: one per run, nothing kept of a result that is not clearable.
 */
export type ClearScan = {
  readonly keepLast: number;
  readonly minChars: number;
  readonly batch: number;
  scanned: number;
  clearable: ReadResult[];
  last: Message | undefined;
};

/** A clearer's state before it read anything; throws an `AgentError` for options that are not counts. */
export function newScan(options: ClearToolResultsOptions): ClearScan {
  checkNumber("clearToolResults: keepLast", options.keepLast, { min: 0, integer: true });
  checkNumber("clearToolResults: minChars", options.minChars, { min: 0, integer: true });
  checkNumber("clearToolResults: batch", options.batch, { min: 1, integer: true });
  return {
    keepLast: options.keepLast ?? 3,
    minChars: options.minChars ?? 2000,
    batch: options.batch ?? 10,
    scanned: 0,
    clearable: [],
    last: undefined,
  };
}

/**
 * The clearer's call as the loop makes it. Incremental: it reads each message once, after it
 * entered, and again only at or after the lowest place `edits` (the session's edit record since the
 * caller last marked it) says was changed; a clearable result replaced without a notice is noticed
 * too. The session is read again from its start only when messages were removed behind it. Until
 * `batch` results are clearable anywhere (or an overflow), nothing more is read: where the last
 * `keepLast` results begin is looked for only then.
 */
export function clearDue(
  scan: ClearScan,
  session: Session,
  reason: "before-call" | "overflow",
  edits: SessionEdits,
  tally: CompactionTally | undefined,
): number {
  const { messages } = session;
  if (!follow(scan, messages, edits)) restart(scan);
  advance(scan, messages, messages.length);
  const { clearable } = scan;
  if (clearable.length === 0 || (clearable.length < scan.batch && reason !== "overflow")) return 0;
  const end = startOfLastResults(messages, scan.keepLast, clearable[0]!.index);
  let due = 0;
  while (due < clearable.length && clearable[due]!.index < end) due++;
  if (due === 0 || (due < scan.batch && reason !== "overflow")) return 0;
  let characters = 0;
  for (let at = 0; at < due; at++) characters += clear(session, clearable[at]!.index, clearable[at]!.toolName);
  clearable.splice(0, due);
  // The last message read may be one it replaced.
  scan.last = messages[scan.scanned - 1];
  if (tally !== undefined) {
    tally.count += due;
    tally.characters += characters;
  }
  return due;
}

const details = { strategy: "clear-tool-results" };

// Forgets what was read: the session is read from its start.
function restart(scan: ClearScan): void {
  scan.scanned = 0;
  scan.clearable = [];
  scan.last = undefined;
}

type ReadResult = { index: number; message: Message; toolName: string };

/**
 * Takes in what changed behind the scan: the messages at or after the lowest place edited since the
 * last call, and any clearable result replaced without a notice, are read again; false when what was
 * read is no longer the session's (messages removed or moved): then read it from the start.
 */
function follow(scan: ClearScan, messages: readonly Message[], edits: SessionEdits): boolean {
  const { scanned, clearable } = scan;
  if (scanned === 0) return true;
  if (edits.spliced || messages.length < scanned) return false;
  // The last message read is not where it was, and no notice says it was replaced: messages moved.
  if (messages[scanned - 1] !== scan.last && edits.lowest >= scanned) return false;
  let from = edits.lowest < scanned ? edits.lowest : scanned;
  for (const entry of clearable) if (entry.index < from && messages[entry.index] !== entry.message) from = entry.index;
  if (from < scanned) readAgain(scan, messages, from);
  return true;
}

// Reads the messages from `from` to where the scan stopped again, as if never read.
function readAgain(scan: ClearScan, messages: readonly Message[], from: number): void {
  const { clearable } = scan;
  let kept = clearable.length;
  while (kept > 0 && clearable[kept - 1]!.index >= from) kept--;
  clearable.length = kept;
  const end = scan.scanned;
  scan.scanned = from;
  advance(scan, messages, end);
}

/** Reads the messages from where it stopped up to `end`. */
function advance(scan: ClearScan, messages: readonly Message[], end: number): void {
  for (let index = scan.scanned; index < end; index++) {
    const message = messages[index]!;
    // The tool's name is looked up only for a result that may be cleared: most are short.
    if (!("type" in message) || message.type !== "tool_result" || !mayClear(scan, message)) continue;
    const toolName = toolNameOf(messages, index, message.id);
    if (toolName !== searchToolsName) scan.clearable.push({ index, message, toolName });
  }
  if (end > scan.scanned) {
    scan.scanned = end;
    scan.last = messages[end - 1];
  }
}

// The name of the call a result answers: the latest call with its id before it.
function toolNameOf(messages: readonly Message[], index: number, id: string): string {
  for (let at = index - 1; at >= 0; at--) {
    const message = messages[at]!;
    if ("type" in message && message.type === "tool_call" && message.id === id) return message.name;
  }
  return "a tool";
}

// Content parts (images, files) are what the model is shown of such a result: not plain output to
// clear. (Nor is what `search_tools` answered: the tools it loaded stay loaded; see `advance`.)
function mayClear(scan: ClearScan, message: ToolResultMessage): boolean {
  return message.kept !== "cleared" && message.content === undefined && longerThan(message, scan.minChars);
}

// The index of the first of the last `keepLast` tool results (the length when `keepLast` is 0),
// looking back no further than `stop` (`stop` when fewer results come after it).
function startOfLastResults(messages: readonly Message[], keepLast: number, stop: number): number {
  let seen = 0;
  for (let index = messages.length - 1; index >= stop; index--) {
    const message = messages[index]!;
    if ("type" in message && message.type === "tool_result" && ++seen > keepLast) return index + 1;
  }
  return stop;
}

// As `outputText` shows it: a string as it is, anything else as indented JSON (measured, not built).
function longerThan(result: ToolResultMessage, minChars: number): boolean {
  const { output } = result;
  return typeof output === "string" ? output.length > minChars : jsonLength(output, minChars, 2) > minChars;
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
