import type { ToolResultMessage } from "../session.ts";
import { visibleText } from "./visible-text.ts";

/** How many lines of a command's output the terminal shows under its summary line. */
export type CommandOutputLimits = {
  /** The last lines of a command that succeeded (default 5). */
  success: number;
  /** The lines of a command that failed: all of them, or the last this many (default 40). */
  failure: number;
};

/**
 * The lines of a `bash` call's output to show the user under its summary line: the last few of
 * a command that succeeded; of one that failed (non-zero exit, signal, timeout, interrupted) all
 * of them up to `limits.failure`, the last ones, after a note saying how many earlier lines are
 * left out. Every line is made visible (control characters escaped) and cut to `width`
 * characters. Empty when the command never ran (denied, invalid input) or printed nothing.
 */
export function commandOutputLines(
  result: ToolResultMessage,
  width: number,
  limits: CommandOutputLimits = { success: 5, failure: 40 },
): string[] {
  const output = typeof result.output === "string" ? result.output : "";
  const failed = result.isError === true;
  const body = failed ? failureOutput(output) : output === "(no output)" ? "" : output;
  if (body.trim() === "") return [];
  const lines = visibleText(body).replace(/\n+$/, "").split("\n");
  const limit = Math.max(1, failed ? limits.failure : limits.success);
  const shown = lines
    .slice(-limit)
    .map((line) => (line.length > width ? `${line.slice(0, Math.max(1, width - 1))}…` : line));
  const hidden = lines.length - shown.length;
  return hidden > 0 ? [`… ${hidden} earlier ${hidden === 1 ? "line" : "lines"}`, ...shown] : shown;
}

// The bash tool fails with a first line saying how the command ended, then what it printed;
// any other error (a denied call, invalid input) means the command never ran.
function failureOutput(output: string): string {
  const ran =
    /^Error: (?:exit code -?\d+|timed out after [^\n]*|terminated by \w+|aborted; the command was killed)\n/.exec(
      output,
    );
  return ran === null ? "" : output.slice(ran[0].length);
}
