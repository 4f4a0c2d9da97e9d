import type { Message, UserMessage } from "../session.ts";

/**
 * The user messages a run starting on `messages` has to check with its input guardrails: those
 * after the last final answer (any agent's) and after the last message `agent` produced (any
 * model message or tool result when `agent` is undefined), not already marked by a guardrail. So a
 * new message is checked once; a resumed run (after a pause, a crash) does not check again what
 * its agent already acted on; and the target of a handoff checks the input that reached it.
 */
export function newInput(messages: readonly Message[], agent: string | undefined): UserMessage[] {
  const input: UserMessage[] = [];
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index]!;
    if ("role" in message) {
      if (message.role === "system") continue;
      if (message.role === "user") {
        if (message.guardrail === undefined) input.unshift(message);
        continue;
      }
    }
    if (agent === undefined || message.agent === agent || isFinalAnswer(messages, index)) break;
  }
  return input;
}

// An assistant text that ended its model turn: no tool call or reasoning of the same turn after it.
function isFinalAnswer(messages: readonly Message[], index: number): boolean {
  const message = messages[index]!;
  if (!("role" in message) || message.role !== "assistant") return false;
  const next = messages[index + 1];
  return next === undefined || "role" in next || next.type === "tool_result";
}
