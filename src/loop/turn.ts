import type { Message, ToolCallMessage } from "../session.ts";

// The error results the loop writes for tool calls it does not run to the end.

export function notExecuted(call: ToolCallMessage, stopReason: string): Message {
  return {
    type: "tool_result",
    id: call.id,
    output: `Error: not executed: the response stopped with "${stopReason}" instead of asking for tool use, so this call may be incomplete.`,
    isError: true,
  };
}

export function abortedResult(call: ToolCallMessage): Message {
  return { type: "tool_result", id: call.id, output: "Error: aborted before the tool finished", isError: true };
}
