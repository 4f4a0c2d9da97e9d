import type { Tool } from "../../tools/tool.ts";

/**
 * A tool that can say, before anything runs, that a call would fail: the permission prompt
 * calls `check` first and does not ask about (nor show a diff for) a call that cannot succeed.
 */
export type CheckedTool = Tool & {
  /**
   * The error the call would get now (the text of its error result, without `Error: `), or
   * `undefined` when it may go ahead. Pure: reads the workspace, changes nothing, never throws.
   * Input the tool's schema rejects gives `undefined` (validation reports it). The call checks
   * again when it runs, since the workspace may change in between.
   */
  check: (input: unknown) => Promise<string | undefined>;
};

/**
 * Runs the pre-check of the tool `call.name` names in `tools`, if it has one: the error text
 * the call would get, or `undefined` (no such tool, no check, or it may go ahead).
 */
export async function checkToolCall(
  tools: readonly Tool[],
  call: { name: string; input: unknown },
): Promise<string | undefined> {
  const found = tools.find((candidate) => candidate.name === call.name);
  if (found === undefined || !isCheckedTool(found)) return undefined;
  try {
    return await found.check(call.input);
  } catch {
    // A check that fails says nothing; the call itself will report what went wrong.
    return undefined;
  }
}

/** Whether `tool` carries a `check` (see `CheckedTool`). */
export function isCheckedTool(tool: Tool): tool is CheckedTool {
  return typeof (tool as Partial<CheckedTool>).check === "function";
}
