import type { CompactionStrategy } from "./compaction-strategy.ts";
import { jsonLengthAtMost } from "./compaction.ts";
import { checkNumber } from "../numeric-options.ts";
import { keepOutput, notifySessionChange, type Message, type Session, type ToolResultMessage } from "../session.ts";
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
 * call reads only the messages that left the last `keepLast` results since the one before
 * (the session is read again from its start only when it changed behind it: messages removed or
 * replaced). Use one per session.
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
  let scan = emptyScan();
  return (session, reason) => {
    const { messages } = session;
    if (!scan.holds(messages)) scan = emptyScan();
    scan.advance(messages, startOfLastResults(messages, keepLast, scan.scanned), minChars);
    const clearable = scan.clearable;
    if (clearable.length === 0 || (clearable.length < batch && reason !== "overflow")) return 0;
    for (const { index, toolName } of clearable) clear(session, index, toolName);
    scan.cleared(messages);
    return clearable.length;
  };
}

const details = { strategy: "clear-tool-results" };

type Clearable = { index: number; toolName: string; message: Message };

// What a clearer has read of a session: messages before `scanned` are classified, the clearable
// ones listed (oldest first, each with the object it saw, to notice a replacement), and the tool
// names of calls whose results are not read yet.
function emptyScan() {
  let scanned = 0;
  let last: Message | undefined;
  let clearable: Clearable[] = [];
  const names = new Map<string, string>();
  return {
    get scanned() {
      return scanned;
    },
    get clearable(): readonly Clearable[] {
      return clearable;
    },
    /** Whether what was read is still the session's: nothing removed or replaced behind the scan. */
    holds(messages: readonly Message[]): boolean {
      if (scanned === 0) return true;
      if (messages.length < scanned || messages[scanned - 1] !== last) return false;
      return clearable.every((entry) => messages[entry.index] === entry.message);
    },
    /** Reads the messages from where it stopped up to `end`. */
    advance(messages: readonly Message[], end: number, minChars: number): void {
      for (let index = scanned; index < end; index++) {
        const message = messages[index]!;
        if (!("type" in message)) continue;
        if (message.type === "tool_call") names.set(message.id, message.name);
        if (message.type !== "tool_result") continue;
        const toolName = names.get(message.id) ?? "a tool";
        names.delete(message.id);
        // Content parts (images, files) are what the model is shown of such a result: not plain output to clear.
        if (message.kept === "cleared" || message.content !== undefined) continue;
        if (toolName === searchToolsName || !longerThan(message, minChars)) continue;
        clearable.push({ index, toolName, message });
      }
      if (end > scanned) {
        scanned = end;
        last = messages[end - 1];
      }
    },
    /** The listed results were cleared (replaced by placeholders): nothing is clearable now. */
    cleared(messages: readonly Message[]): void {
      clearable = [];
      last = messages[scanned - 1];
    },
  };
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
