import { describeError, describeValue } from "../errors.ts";
import type { ToolCallMessage, ToolResultMessage } from "../session.ts";

// Every error result the executor and the loop write for a tool call, in one place: the model
// reads these texts, so they stay stable and say what happened to the call and why.

/** An `isError` result for the call `id` with this text. */
function errorResult(id: string, output: string): ToolResultMessage {
  return { type: "tool_result", id, output, isError: true };
}

/** The run was aborted before the call had its result (whether or not its handler had started). */
export function abortedResult(call: ToolCallMessage): ToolResultMessage {
  return errorResult(call.id, abortedText);
}

const abortedText = "Error: aborted before the tool finished";

/**
 * The response stopped for another reason than tool use (e.g. `max_tokens`): its calls may be cut
 * off, so they never run.
 */
export function notExecutedResult(call: ToolCallMessage, stopReason: string): ToolResultMessage {
  return errorResult(
    call.id,
    `Error: not executed: the response stopped with "${stopReason}" instead of asking for tool use, so this call may be incomplete.`,
  );
}

/** No tool of that name: the model is told which ones exist. */
export function unknownToolResult(call: ToolCallMessage, available: readonly string[]): ToolResultMessage {
  return errorResult(
    call.id,
    `Error: unknown tool ${describeValue(call.name)}. Available tools: ${available.join(", ") || "none"}.`,
  );
}

/** A deferred tool the session has not loaded yet: the model is told to search for it first. */
export function notLoadedResult(call: ToolCallMessage, searchTool: string): ToolResultMessage {
  return errorResult(
    call.id,
    `Error: tool ${describeValue(call.name)} is not loaded yet: call ${searchTool} with words describing what you need first; it can be called once the search loaded it.`,
  );
}

/** The input failed the tool's schema, or the adapter could not parse it; `problems` is shown as it is. */
export function invalidInputResult(call: ToolCallMessage, problems: string): ToolResultMessage {
  return errorResult(call.id, `Error: invalid input for tool "${call.name}": ${problems}`);
}

/** A human denied the call through `resolveApproval`. */
export function rejectedResult(call: ToolCallMessage, reason: string | undefined): ToolResultMessage {
  return errorResult(call.id, `Rejected: ${reason ?? "the call was not approved"}`);
}

/**
 * A call denied by its recorded decision: the text names who decided and why (a rule's id, a
 * classifier's name; a human's denial reads `Rejected: <reason>`).
 */
export function denialResult(call: ToolCallMessage): ToolResultMessage {
  const approval = call.approval;
  const decidedBy = approval?.decidedBy;
  switch (decidedBy?.by) {
    case "rule":
      return errorResult(
        call.id,
        `Denied by rule ${JSON.stringify(decidedBy.rule)}${decidedBy.reason === undefined ? "" : `: ${decidedBy.reason}`}`,
      );
    case "classifier":
      return errorResult(call.id, `Denied by classifier ${JSON.stringify(decidedBy.name)}: ${decidedBy.reason}`);
    case "hook":
    case "policy":
      return deniedResult(call, decidedBy.reason ?? "the call was not approved");
    default:
      return rejectedResult(call, approval?.reason);
  }
}

/** The `beforeToolCall` hook denied the call. */
export function deniedResult(call: ToolCallMessage, reason: string): ToolResultMessage {
  return errorResult(call.id, `Denied: ${reason}`);
}

/** The `beforeToolCall` hook threw: the call is denied (fail closed). */
export function beforeHookFailedResult(call: ToolCallMessage, error: unknown): ToolResultMessage {
  return errorResult(call.id, `Denied: the beforeToolCall hook failed: ${describeError(error)}`);
}

/** The `afterToolCall` hook threw: its call's result is replaced (fail closed). */
export function afterHookFailedResult(call: ToolCallMessage, error: unknown): ToolResultMessage {
  return errorResult(call.id, `Error: the afterToolCall hook failed: ${describeError(error)}`);
}

/** The handler threw (or anything else failed while answering the call). */
export function thrownResult(call: ToolCallMessage, error: unknown): ToolResultMessage {
  return errorResult(call.id, `Error: ${describeError(error)}`);
}

/** The text of the error a call's timeout raises inside its handler's run. */
export function timedOutText(call: ToolCallMessage, timeout: number): string {
  return `tool "${call.name}" timed out after ${timeout} ms`;
}

/** The call outlived its timeout; `text` is the `timedOutText` it was abandoned with. */
export function timedOutResult(call: ToolCallMessage, text: string): ToolResultMessage {
  return errorResult(call.id, `Error: ${text}`);
}

/** The handler paused for approval (threw `ApprovalPause`) with a session where nothing waits. */
export function emptyPauseResult(call: ToolCallMessage): ToolResultMessage {
  return errorResult(call.id, "Error: the tool paused for approval, but nothing in its session waits for a decision");
}

/** `executeToolCalls` cannot pause a run: a call that needs approval is not run there. */
export function needsLoopForApprovalResult(call: ToolCallMessage): ToolResultMessage {
  return errorResult(call.id, `Error: tool "${call.name}" needs approval; run it through agentLoop to pause for it.`);
}
