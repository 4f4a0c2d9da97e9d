import type { AgentEvent } from "../loop/events.ts";
import type { JsonValue, Message, Session } from "../session.ts";

/**
 * The parts of the AI SDK's UI message stream protocol (`x-vercel-ai-ui-message-stream: v1`, as
 * `ai` 6 and 7 read it) that a run produces. Plain objects, sent as one `data:` line each.
 */
export type UiMessageChunk =
  | { type: "start"; messageId?: string }
  | { type: "start-step" }
  | { type: "finish-step" }
  | { type: "text-start" | "text-end" | "reasoning-start" | "reasoning-end"; id: string }
  | { type: "text-delta" | "reasoning-delta"; id: string; delta: string }
  | { type: "tool-input-start"; toolCallId: string; toolName: string }
  | { type: "tool-input-delta"; toolCallId: string; inputTextDelta: string }
  | { type: "tool-input-available"; toolCallId: string; toolName: string; input: JsonValue }
  | { type: "tool-approval-request"; approvalId: string; toolCallId: string }
  | { type: "tool-output-available"; toolCallId: string; output: JsonValue }
  | { type: "tool-output-error"; toolCallId: string; errorText: string }
  | { type: "tool-output-denied"; toolCallId: string }
  | { type: "finish"; finishReason: "stop" | "tool-calls" | "content-filter" | "other" }
  /**
   * A guardrail voided text already sent (`text-retract`): `id` is the text part that holds it.
   * The protocol has no retraction; a client that knows this data part removes that text.
   */
  | { type: "data-text-retract"; data: { id: string; text: string } }
  | { type: "abort"; reason?: string }
  | { type: "error"; errorText: string };

/**
 * Turns a run's events into UI message stream chunks, one event at a time. `hold` (the client is
 * behind): a text, reasoning or tool-input delta is not sent, and neither is any later delta of
 * that part; what was held goes out in one delta when the part's message completes it, so the
 * client's text ends whole either way.
 */
export type UiChunkConverter = (event: AgentEvent, hold: boolean) => UiMessageChunk[];

export function createUiChunkConverter(options: { messageId?: string; session?: Session } = {}): UiChunkConverter {
  const state: ConverterState = {
    parts: 0,
    text: undefined,
    reasoning: undefined,
    calls: new Map(),
    available: new Set(),
    waitingApprovals: new Set(),
  };
  return (event, hold) => {
    switch (event.type) {
      case "run-start":
        return [options.messageId === undefined ? { type: "start" } : { type: "start", messageId: options.messageId }];
      case "turn-start":
        return [{ type: "start-step" }];
      case "text-delta":
        return delta(state, "text", event.delta, hold);
      case "thinking-delta":
        return delta(state, "reasoning", event.delta, hold);
      case "tool-call-start":
        state.calls.set(event.id, { started: true, held: false });
        return [{ type: "tool-input-start", toolCallId: event.id, toolName: event.name }];
      case "tool-call-delta":
        return toolInputDelta(state, event.id, event.delta, hold);
      case "message":
        return messageChunks(state, event.message, options.session);
      case "tool-approval-request":
        return approvalRequest(state, event.id);
      case "text-retract":
        return retract(state, event.text);
      case "turn-end":
        return [...closeOpenParts(state), { type: "finish-step" }];
      case "run-end":
        return [...closeOpenParts(state), ...runEndChunks(event)];
      default:
        return [];
    }
  };
}

// A streamed part: its id, the text sent so far, and whether deltas are held back.
type OpenPart = { id: string; sent: string; held: boolean };

type ConverterState = {
  parts: number;
  text: OpenPart | undefined;
  reasoning: OpenPart | undefined;
  calls: Map<string, { started: boolean; held: boolean }>;
  /** Calls whose input is complete on the client (`tool-input-available` sent). */
  available: Set<string>;
  /** Approval requests that came before their call's input was complete on the client. */
  waitingApprovals: Set<string>;
};

// A streamed turn's calls start (and ask for approval) before the turn's messages arrive; the
// client must know the call first, so its request waits for the call's `tool-input-available`.
function approvalRequest(state: ConverterState, id: string): UiMessageChunk[] {
  if (!state.available.has(id)) {
    state.waitingApprovals.add(id);
    return [];
  }
  return [{ type: "tool-approval-request", approvalId: id, toolCallId: id }];
}

function delta(state: ConverterState, kind: "text" | "reasoning", text: string, hold: boolean): UiMessageChunk[] {
  const chunks: UiMessageChunk[] = [];
  let part = state[kind];
  if (part === undefined) {
    part = { id: `${kind}-${++state.parts}`, sent: "", held: false };
    state[kind] = part;
    chunks.push({ type: `${kind}-start`, id: part.id });
  }
  if (hold) part.held = true;
  if (part.held) return chunks;
  part.sent += text;
  chunks.push({ type: `${kind}-delta`, id: part.id, delta: text });
  return chunks;
}

function toolInputDelta(state: ConverterState, id: string, text: string, hold: boolean): UiMessageChunk[] {
  const call = state.calls.get(id);
  if (call === undefined) return [];
  if (hold) call.held = true;
  return call.held ? [] : [{ type: "tool-input-delta", toolCallId: id, inputTextDelta: text }];
}

function messageChunks(state: ConverterState, message: Message, session: Session | undefined): UiMessageChunk[] {
  if ("role" in message) return message.role === "assistant" ? completePart(state, "text", message.content) : [];
  switch (message.type) {
    case "thinking":
      return completePart(state, "reasoning", message.content);
    case "tool_call": {
      const chunks: UiMessageChunk[] = state.calls.get(message.id)?.started
        ? []
        : [{ type: "tool-input-start", toolCallId: message.id, toolName: message.name }];
      state.calls.set(message.id, { started: true, held: false });
      chunks.push({
        type: "tool-input-available",
        toolCallId: message.id,
        toolName: message.name,
        input: message.input,
      });
      state.available.add(message.id);
      if (state.waitingApprovals.delete(message.id)) chunks.push(...approvalRequest(state, message.id));
      return chunks;
    }
    case "tool_result":
      if (session !== undefined && deniedByHuman(session, message.id))
        return [{ type: "tool-output-denied", toolCallId: message.id }];
      return [resultChunk(message.id, message.output, message.isError === true)];
  }
}

// A call a human denied (`resolveApproval`) carries the decision; its result is the model's
// "Rejected: …" text, but a page shows the denial itself, as the AI SDK does.
function deniedByHuman(session: Session, id: string): boolean {
  for (let index = session.messages.length - 1; index >= 0; index--) {
    const message = session.messages[index]!;
    if (!("role" in message) && message.type === "tool_call" && message.id === id)
      return message.approval?.status === "denied";
  }
  return false;
}

function resultChunk(id: string, output: JsonValue, isError: boolean): UiMessageChunk {
  if (!isError) return { type: "tool-output-available", toolCallId: id, output };
  return {
    type: "tool-output-error",
    toolCallId: id,
    errorText: typeof output === "string" ? output : JSON.stringify(output),
  };
}

// The message is the part's whole text: send what the client has not had (all of it when nothing streamed), then end it.
function completePart(state: ConverterState, kind: "text" | "reasoning", content: string): UiMessageChunk[] {
  const part = state[kind];
  state[kind] = undefined;
  if (part === undefined) {
    if (content === "") return [];
    const id = `${kind}-${++state.parts}`;
    return [
      { type: `${kind}-start`, id },
      { type: `${kind}-delta`, id, delta: content },
      { type: `${kind}-end`, id },
    ];
  }
  const chunks: UiMessageChunk[] = [];
  if (content.length > part.sent.length && content.startsWith(part.sent))
    chunks.push({ type: `${kind}-delta`, id: part.id, delta: content.slice(part.sent.length) });
  chunks.push({ type: `${kind}-end`, id: part.id });
  return chunks;
}

// The text part is closed where it stands, and named in a data part a client can act on; what
// follows (a redaction, a blocked answer's marker) opens a new one.
function retract(state: ConverterState, text: string): UiMessageChunk[] {
  const part = state.text;
  if (part === undefined) return [];
  state.text = undefined;
  return [
    { type: "text-end", id: part.id },
    { type: "data-text-retract", data: { id: part.id, text } },
  ];
}

// A part still open when the turn or run ends (an abort mid-stream) is ended as it is.
function closeOpenParts(state: ConverterState): UiMessageChunk[] {
  const chunks: UiMessageChunk[] = [];
  for (const kind of ["reasoning", "text"] as const) {
    const part = state[kind];
    if (part === undefined) continue;
    chunks.push({ type: `${kind}-end`, id: part.id });
    state[kind] = undefined;
  }
  return chunks;
}

function runEndChunks(event: Extract<AgentEvent, { type: "run-end" }>): UiMessageChunk[] {
  switch (event.outcome) {
    case "done":
      return [{ type: "finish", finishReason: "stop" }];
    case "stopped":
      return [{ type: "finish", finishReason: "other" }];
    case "paused":
      return [{ type: "finish", finishReason: "tool-calls" }];
    case "aborted":
      return [{ type: "abort", reason: "the run was aborted" }];
    case "blocked":
      return [{ type: "finish", finishReason: "content-filter" }];
    default:
      return [{ type: "error", errorText: event.error ?? `the run ended with ${event.outcome}` }];
  }
}
