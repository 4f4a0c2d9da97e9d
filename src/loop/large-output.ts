import { checkNumber } from "../numeric-options.ts";
import { keepOutput, type Session, type ToolResultMessage } from "../session.ts";
import { offloadedResult } from "../tools/recall-output.ts";

/** The `largeOutput` run option: `false`, or how long a tool output may be before it is offloaded. */
export type LargeOutputOption = false | { maxChars?: number };

/** How many characters of a tool's output enter the session by default before the rest is offloaded. */
export const defaultLargeOutputChars = 40_000;

/** The `maxChars` the option sets (`undefined` when offloading is off); throws an `AgentError` for one that is not a count >= 256. */
export function largeOutputChars(option: LargeOutputOption | undefined): number | undefined {
  if (option === false) return undefined;
  checkNumber("largeOutput.maxChars", option?.maxChars, { min: 256, integer: true });
  return option?.maxChars ?? defaultLargeOutputChars;
}

/**
 * A tool result as it enters the session: as it is when its output is at most `maxChars` long;
 * else its head and tail around a marker (`kept: "offloaded"`), the whole output kept beside the
 * session first (a store records it before the result that refers to it), for `recall_output`.
 */
export function offload(session: Session, result: ToolResultMessage, maxChars: number): ToolResultMessage {
  const shorter = offloadedResult(result, maxChars);
  if (shorter === undefined) return result;
  keepOutput(session, result.id, result.output);
  return shorter;
}
