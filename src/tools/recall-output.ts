import { jsonLength } from "../shared/json-length.ts";
import { keptOutput, type JsonValue, type ToolResultMessage } from "../session.ts";
import type { Tool } from "./tool.ts";

/** The name of the tool that reads a cleared or offloaded output back. */
export const recallOutputName = "recall_output";

/** What `recall_output` takes: the call's id, and the lines to read (from 1, `endLine` included). */
export type RecallOutputInput = { id: string; startLine?: number; endLine?: number };

/**
 * The `recall_output` tool: answers with lines `startLine`..`endLine` (default: all) of the whole
 * output kept for a call whose result was cleared or offloaded, at most `maxChars` characters of
 * them; when more was asked for, the answer ends with a line saying which lines it shows and how
 * to read on. An id with nothing kept, or lines past the end, answer an error.
 */
export function recallOutputTool(maxChars: number): Tool<RecallOutputInput> {
  return {
    name: recallOutputName,
    description:
      "Read back a tool output that was cleared or shortened in this conversation, by the id of its call. Give startLine and endLine (counted from 1, end included) to read part of it.",
    input_schema: {
      type: "object",
      properties: {
        id: { type: "string", description: "The id of the tool call whose output to read." },
        startLine: { type: "integer", minimum: 1, description: "The first line to read (default 1)." },
        endLine: { type: "integer", minimum: 1, description: "The last line to read, included (default: the last)." },
      },
      required: ["id"],
      additionalProperties: false,
    },
    handler: async (input: RecallOutputInput, context) => {
      const output = await keptOutput(context.session, input.id);
      if (output === undefined)
        throw new Error(
          `no output is kept for call id ${JSON.stringify(input.id)}: only outputs that were cleared or shortened can be read back, by the id their placeholder names`,
        );
      return readLines(outputText(output), input.startLine ?? 1, input.endLine, maxChars);
    },
  };
}

/** A tool output as text: a string as it is, any other JSON value pretty-printed (so it has lines to read). */
export function outputText(output: JsonValue): string {
  return typeof output === "string" ? output : JSON.stringify(output, null, 2);
}

/**
 * The one line a cleared output leaves in the session: which tool, which call, how large, and how
 * to read it again.
 */
export function clearedPlaceholder(toolName: string, id: string, characters: number): string {
  return `[output of ${toolName} cleared: ${formatSize(characters)}; ${recallOutputName} with id ${id} shows it again]`;
}

/**
 * The result as it enters the session when its output is longer than `maxChars`: its head and tail,
 * `maxChars` characters at most in all, around a marker saying what was left out and how to read
 * it; cut at line ends where one is near. `undefined` when the output is short enough.
 */
export function offloadedResult(result: ToolResultMessage, maxChars: number): ToolResultMessage | undefined {
  // The model is shown a result's content parts (images, files), not its output: those stay as they are.
  if (result.content !== undefined) return undefined;
  // Measured first, built only when it is cut: most outputs are short and enter as they are.
  const whole = result.output;
  if (typeof whole === "string" ? whole.length <= maxChars : jsonLength(whole, maxChars, 2) <= maxChars)
    return undefined;
  const text = outputText(whole);
  const totalLines = countLines(text, 0, text.length) + 1;
  // The marker's length depends on the numbers in it: size it with the largest they can be.
  const room = Math.max(0, maxChars - marker(result.id, text.length, totalLines, totalLines, totalLines).length);
  // The marker's own line ends stand for the line ends the cuts fall on.
  const headEnd = lineEndNear(text, Math.ceil(room / 2), true);
  const head = text.slice(0, headEnd);
  const tailFrom = Math.max(lineEndNear(text, text.length - Math.floor(room / 2), false), headEnd);
  const tail = text.slice(tailFrom);
  const headCutAtLine = text[headEnd] === "\n";
  const tailCutAtLine = tailFrom > headEnd + (headCutAtLine ? 1 : 0) && text[tailFrom - 1] === "\n";
  const firstOmitted = countLines(head, 0, head.length) + (headCutAtLine ? 2 : 1);
  const tailLine = totalLines - countLines(tail, 0, tail.length);
  const lastOmitted = tailCutAtLine ? tailLine - 1 : tailLine;
  const omitted = tailFrom - headEnd - (headCutAtLine ? 1 : 0) - (tailCutAtLine ? 1 : 0);
  const output = `${head}${marker(result.id, omitted, firstOmitted, lastOmitted, totalLines)}${tail}`;
  return { ...result, output, kept: "offloaded" };
}

function marker(id: string, omitted: number, firstLine: number, lastLine: number, totalLines: number): string {
  const lines = `lines ${format(firstLine)}–${format(lastLine)} of ${format(totalLines)}`;
  return `\n[… ${format(omitted)} characters omitted (${lines}); ${recallOutputName} with id ${id} and startLine/endLine reads them …]\n`;
}

// Where to cut near `at`: the head ends at a line end (the newline left out) within a tenth of the
// way back, the tail starts right after one within a tenth of the way forward; else at `at` itself.
function lineEndNear(text: string, at: number, head: boolean): number {
  const reach = Math.max(1, Math.floor(at / 10));
  if (head) {
    const newline = text.lastIndexOf("\n", at);
    return newline >= 0 && at - newline <= reach ? newline : at;
  }
  const newline = text.indexOf("\n", at);
  return newline >= 0 && newline + 1 - at <= Math.max(1, Math.floor((text.length - at) / 10)) ? newline + 1 : at;
}

function countLines(text: string, from: number, to: number): number {
  let count = 0;
  for (let index = text.indexOf("\n", from); index !== -1 && index < to; index = text.indexOf("\n", index + 1)) count++;
  return count;
}

// Lines `start`..`end` (from 1, end included), as many whole lines as fit in `maxChars`; a line
// longer than that alone is cut.
function readLines(text: string, start: number, end: number | undefined, maxChars: number): string {
  const lines = text.split("\n");
  const last = Math.min(end ?? lines.length, lines.length);
  if (start > lines.length) throw new Error(`startLine ${start} is past the end: the output has ${lines.length} lines`);
  if (last < start) throw new Error(`endLine ${last} is before startLine ${start}`);
  // Room for the note that says the answer was cut.
  const budget = Math.max(0, maxChars - 200);
  let answer = "";
  let shown = start - 1;
  let lineCut = false;
  for (let line = start; line <= last; line++) {
    const piece = (line === start ? "" : "\n") + lines[line - 1]!;
    if (answer.length + piece.length > budget) {
      if (line === start) {
        answer = piece.slice(0, budget);
        shown = line;
        lineCut = true;
      }
      break;
    }
    answer += piece;
    shown = line;
  }
  if (shown === last && !lineCut) return answer;
  const readOn = shown < last ? `; read on with startLine ${shown + 1}` : "";
  const cut = lineCut ? " (that line cut)" : "";
  return `${answer}\n[cut at ${format(maxChars)} characters: lines ${format(start)}–${format(shown)} of ${format(lines.length)} shown${cut}${readOn}]`;
}

function format(count: number): string {
  return count.toLocaleString("en-US");
}

/** A size in characters as people read it: `812 B`, `48.2 KB`, `1.3 MB`. */
export function formatSize(characters: number): string {
  if (characters < 1000) return `${characters} B`;
  if (characters < 1_000_000) return `${(characters / 1000).toFixed(1)} KB`;
  return `${(characters / 1_000_000).toFixed(1)} MB`;
}
