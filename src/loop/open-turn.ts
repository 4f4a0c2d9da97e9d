import { isModelMessage, isToolCall, isToolResult, type Message, type ModelMessage, type ToolCallMessage } from "../session.ts";
import type { ToolOutcome } from "../tools/execute-tool-calls.ts";

/**
 * The model turn the loop still has to answer: the tool calls of the session's last model turn
 * that have no result yet. Empty `toolCalls` means nothing is open.
 */
export type OpenTurn = {
  /** The calls without a result, in call order: the session's own objects (approval marks land on them). */
  toolCalls: ToolCallMessage[];
  /** The turn's last message, which carries its `stopReason` and `usage`. */
  last: ModelMessage | undefined;
  /** Results of calls started while the model streamed, by call id (absent when none started). */
  started?: ReadonlyMap<string, Promise<ToolOutcome>> | undefined;
  /** Call once the turn's tools are done: releases what the early starts held. */
  release?: () => void;
};

/**
 * The open turn at the end of `messages` (a crash or a resume leaves one): walk back over the
 * trailing results, then over the turn itself. Only the end of the session is read, so this is
 * cheap on long sessions.
 */
export function findOpenTurn(messages: readonly Message[]): OpenTurn {
  const answered = new Set<string>();
  let index = messages.length - 1;
  for (let message = messages[index]; message !== undefined && isToolResult(message); message = messages[--index]) {
    answered.add(message.id);
  }
  const last = messages[index];
  const toolCalls: ToolCallMessage[] = [];
  for (let message = messages[index]; message !== undefined && isModelMessage(message); message = messages[--index]) {
    if (isToolCall(message) && !answered.has(message.id)) toolCalls.unshift(message);
  }
  return { toolCalls, last: last !== undefined && isModelMessage(last) ? last : undefined };
}
