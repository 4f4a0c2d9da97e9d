import { formatLogLine } from "../logger.ts";
import { turnBefore, unansweredCalls } from "../session-turns.ts";
import { isModelMessage, type Message, type ModelMessage, type ToolCallMessage } from "../session.ts";
import type { ToolOutcome } from "../tools/execute-tool-calls.ts";
import type { AgentEvent } from "./events.ts";

// What the loop knows about the model turn it is answering, and small helpers over it.

export type Turn = {
  toolCalls: ToolCallMessage[];
  last: ModelMessage | undefined;
  started?: ReadonlyMap<string, Promise<ToolOutcome>> | undefined;
  release?: () => void;
};

// The unanswered tool calls of the session's last model turn. Only the end of the session is
// read, so this is cheap on long sessions.
export function lastTurn(messages: readonly Message[]): Turn {
  const turn = turnBefore(messages, messages.length);
  const last = turn === undefined ? undefined : messages[turn.results - 1];
  if (turn?.type !== "model" || last === undefined || !isModelMessage(last)) return { toolCalls: [], last: undefined };
  return { toolCalls: unansweredCalls(messages, turn), last };
}

export function turnEnd(iteration: number, last: ModelMessage | undefined): AgentEvent {
  const event: AgentEvent = { type: "turn-end", iteration };
  if (last?.stopReason !== undefined) event.stopReason = last.stopReason;
  if (last?.usage !== undefined) event.usage = last.usage;
  return event;
}

export function describeAction(toolCalls: readonly ToolCallMessage[], messages: readonly Message[]): string {
  if (toolCalls.length === 0) {
    const last = messages[messages.length - 1];
    return last === undefined ? "none" : formatLogLine(last, undefined, 160).replace(/^\[agent\] /, "");
  }
  return toolCalls.map((call) => `${call.name}(${JSON.stringify(call.input).slice(0, 100)})`).join(", ");
}

export function pick<T extends object, K extends keyof T>(source: T, keys: readonly K[]): Pick<T, K> {
  const picked = {} as Pick<T, K>;
  for (const key of keys) if (source[key] !== undefined) picked[key] = source[key];
  return picked;
}
