import { turnBefore, unansweredCalls } from "../session-turns.ts";
import { isModelMessage, type Message, type ModelMessage, type ToolCallMessage } from "../session.ts";
import type { ToolOutcome } from "../tools/tool-outcome.ts";

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
  /**
   * The turn was found in the session (a resume, a crash): calls of it answered earlier (a
   * verbatim answer among them) are not in `toolCalls`.
   */
  resumed?: true;
};

/**
 * The open turn at the end of `messages` (a crash or a resume leaves one): the session's last turn,
 * read by the session's turn walk, and its calls without a result. Only the end of the session is
 * read, so this is cheap on long sessions.
 */
export function findOpenTurn(messages: readonly Message[]): OpenTurn {
  const turn = turnBefore(messages, messages.length);
  const last = turn === undefined ? undefined : messages[turn.results - 1];
  if (turn?.type !== "model" || last === undefined || !isModelMessage(last)) return { toolCalls: [], last: undefined };
  return { toolCalls: unansweredCalls(messages, turn), last, resumed: true };
}
