import { describeError } from "../errors.ts";
import type { ToolResultMessage } from "../session.ts";
import type { ExecutorSetup, ToolCallRun } from "./executor-setup.ts";
import { toJsonOutput } from "./json-output.ts";
import { contentResult, isToolContent } from "./tool-content.ts";
import { afterHookFailedResult } from "./tool-errors.ts";

export type AfterToolCall = NonNullable<NonNullable<ExecutorSetup["hooks"]>["afterToolCall"]>;

/**
 * Runs the `afterToolCall` hook on a call's result (a direct call's, or a background task's outcome).
 * The hook may replace the result: `{ output, isError? }`, or the new output itself. A hook that
 * throws replaces it with an error (fail closed), reported as `hook-error`.
 */
export async function afterToolCall(
  { call, setup, abortRace }: ToolCallRun,
  hook: AfterToolCall,
  result: ToolResultMessage,
): Promise<ToolResultMessage> {
  try {
    const replaced = await abortRace.race(Promise.resolve(hook({ call, result, session: setup.session })));
    if (replaced === undefined) return result;
    if (isToolContent(replaced)) return contentResult(call.id, replaced);
    const shaped =
      typeof replaced === "object" && replaced !== null && !Array.isArray(replaced) && "output" in replaced;
    const next: ToolResultMessage = {
      type: "tool_result",
      id: call.id,
      output: toJsonOutput(shaped ? replaced.output : replaced),
    };
    if (shaped && replaced.isError === true) next.isError = true;
    return next;
  } catch (error) {
    setup.onEvent?.({ type: "hook-error", hook: "afterToolCall", id: call.id, error: describeError(error) });
    return afterHookFailedResult(call, error);
  }
}
