import {
  notifySessionChange,
  type AssistantMessage,
  type GuardrailMark,
  type Message,
  type ModelMessage,
  type Session,
  type ToolResultMessage,
  type UserMessage,
} from "../session.ts";

/** The content a blocked message is replaced with. */
export function blockedMarker(name: string): string {
  return `[blocked by ${name}]`;
}

/** The text of a user message (its text parts joined) or an answer (its assistant messages joined). */
export function textOf(messages: readonly Message[]): string {
  let text = "";
  for (const message of messages) {
    if (!("role" in message) || message.role === "system") continue;
    if (typeof message.content === "string") text += message.content;
    else for (const part of message.content) if (part.type === "text") text += part.text;
  }
  return text;
}

/** A user message blocked (`[blocked by <name>]`) or redacted, in place of `original`. */
export function guardedUserMessage(original: UserMessage, mark: Required<GuardrailMark>["guardrail"]): UserMessage {
  const content = mark.action === "redact" ? mark.replacement : blockedMarker(mark.name);
  const message: UserMessage = { role: "user", content, guardrail: mark };
  if (original.agent !== undefined) message.agent = original.agent;
  return message;
}

/**
 * A final answer blocked or redacted: one assistant message in place of the turn's (its reasoning
 * dropped: it may hold what was blocked), with the turn's stop reason and usage.
 */
export function guardedAnswer(
  turn: readonly ModelMessage[],
  mark: Required<GuardrailMark>["guardrail"],
): AssistantMessage {
  const last = turn[turn.length - 1];
  const content = mark.action === "redact" ? mark.replacement : blockedMarker(mark.name);
  const message: AssistantMessage = { role: "assistant", content, guardrail: mark };
  if (last === undefined) return message;
  for (const field of ["stopReason", "rawStopReason", "stopDetails", "usage", "model", "responseId"] as const)
    if (last[field] !== undefined) Object.assign(message, { [field]: last[field] });
  return message;
}

/** A tool call's result as a `toolInput` or `toolOutput` guardrail left it: an error carrying its message, or the redacted output. */
export function guardedResult(id: string, mark: Required<GuardrailMark>["guardrail"]): ToolResultMessage {
  if (mark.action === "redact") return { type: "tool_result", id, output: mark.replacement, guardrail: mark };
  const why = mark.action === "block" ? mark.message : mark.action === "retry" ? mark.feedback : "";
  return {
    type: "tool_result",
    id,
    output: `${blockedMarker(mark.name)} ${why}`.trim(),
    isError: true,
    guardrail: mark,
  };
}

/**
 * Puts `message` in the place of `previous` in the session and tells its listeners (`replace`,
 * reason `guardrail`): a bound store's log keeps the original in that entry only, as the audit trail.
 */
export function replaceGuarded(session: Session, previous: Message, message: Message): Message {
  const index = session.messages.lastIndexOf(previous);
  if (index === -1) return previous;
  const stored = { ...message, ts: previous.ts ?? message.ts } as Message;
  if (stored.ts === undefined) delete stored.ts;
  session.messages[index] = stored;
  notifySessionChange(session, { type: "replace", index, message: stored, previous, reason: "guardrail" });
  return stored;
}
