// How the loop's data maps onto GenAI semantic-convention attributes. Types only from
// `@opentelemetry/api`, like the observer: it is an optional peer dependency.
import type { Span } from "@opentelemetry/api";
import { base64Size, type ContentPart } from "../content-parts.ts";
import type { ModelMessage, StopReason, ToolResultMessage, Usage, UserMessage } from "../session.ts";

const STATUS_ERROR = 2;

/** Sets the `gen_ai.usage.*` attributes; cache counts only when the provider reported them. */
export function setUsage(span: Span, usage: Usage): void {
  span.setAttribute("gen_ai.usage.input_tokens", usage.inputTokens);
  span.setAttribute("gen_ai.usage.output_tokens", usage.outputTokens);
  if (usage.cacheReadTokens !== undefined)
    span.setAttribute("gen_ai.usage.cache_read.input_tokens", usage.cacheReadTokens);
  if (usage.cacheWriteTokens !== undefined)
    span.setAttribute("gen_ai.usage.cache_creation.input_tokens", usage.cacheWriteTokens);
}

/** `total` plus `usage`, keeping a cache count undefined until some call reports it. */
export function addUsage(total: Usage | undefined, usage: Usage): Usage {
  const sum: Usage = {
    inputTokens: (total?.inputTokens ?? 0) + usage.inputTokens,
    outputTokens: (total?.outputTokens ?? 0) + usage.outputTokens,
  };
  const cacheRead = addOptional(total?.cacheReadTokens, usage.cacheReadTokens);
  const cacheWrite = addOptional(total?.cacheWriteTokens, usage.cacheWriteTokens);
  if (cacheRead !== undefined) sum.cacheReadTokens = cacheRead;
  if (cacheWrite !== undefined) sum.cacheWriteTokens = cacheWrite;
  return sum;
}

function addOptional(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined && b === undefined ? undefined : (a ?? 0) + (b ?? 0);
}

/** Marks the span failed: `error.type` (low cardinality) and status ERROR with the message. */
export function fail(span: Span, errorType: string, message: string): void {
  span.setAttribute("error.type", errorType);
  span.setStatus({
    code: STATUS_ERROR,
    message:
      message.length > maxStatusLength
        ? `${message.slice(0, maxStatusLength)}… (${message.length} characters)`
        : message,
  });
}

// A status message is for a person scanning traces; a tool's whole output belongs in the result attribute.
const maxStatusLength = 1000;

/**
 * `gen_ai.output.messages` of one model call, as the conventions' output-messages JSON schema
 * wants it: the turn is one choice, so one assistant message whose parts are its messages in order.
 */
export function outputMessages(messages: readonly ModelMessage[]): string {
  const parts = messages.map((message) => {
    if ("role" in message) return { type: "text", content: message.content };
    if (message.type === "thinking") return { type: "reasoning", content: message.content };
    return { type: "tool_call", id: message.id, name: message.name, arguments: message.input };
  });
  const last = messages[messages.length - 1];
  const hasToolCalls = messages.some((message) => "type" in message && message.type === "tool_call");
  return JSON.stringify([{ role: "assistant", parts, finish_reason: finishReason(last?.stopReason, hasToolCalls) }]);
}

// The schema's own values where one fits; otherwise the loop's stop reason as it is.
function finishReason(stopReason: StopReason | undefined, hasToolCalls: boolean): string {
  switch (stopReason) {
    case undefined:
      return hasToolCalls ? "tool_call" : "stop";
    case "end_turn":
    case "stop_sequence":
      return "stop";
    case "tool_use":
      return "tool_call";
    case "max_tokens":
      return "length";
    case "refusal":
    case "content_filter":
      return "content_filter";
    default:
      return stopReason;
  }
}

/**
 * `gen_ai.input.messages` of user messages, as the conventions' input-messages JSON schema wants
 * them: each a `user` message of parts, text as one `text` part, content parts as `genAiParts`
 * (images and files by the same rules as a tool result's).
 */
export function inputMessages(messages: readonly UserMessage[], mediaData: boolean): string {
  return JSON.stringify(
    messages.map((message) => ({
      role: "user",
      parts:
        typeof message.content === "string"
          ? [{ type: "text", content: message.content }]
          : genAiParts(message.content, mediaData),
    })),
  );
}

/**
 * `gen_ai.tool.call.result` of a tool call: its output as text, or, for a result with content
 * parts, the parts as the conventions' message parts (`genAiParts`).
 */
export function toolCallResult(result: ToolResultMessage, mediaData: boolean): string {
  if (result.content !== undefined) return JSON.stringify(genAiParts(result.content, mediaData));
  return typeof result.output === "string" ? result.output : JSON.stringify(result.output);
}

/** A part as the GenAI conventions' input/output message schemas shape it. */
export type GenAiPart =
  | { type: "text"; content: string }
  | { type: "blob"; modality: string; mime_type: string; content: string; size?: number }
  | { type: "uri"; modality: string; mime_type?: string; uri: string };

/**
 * Content parts as the conventions' message parts: text as `text`, inline data as `blob`
 * (`modality` `image`, or `document` for files, which the conventions' list leaves open) and a URL
 * as `uri`. A blob's base64 is kept only with `mediaData`: otherwise `content` is empty and `size`
 * says how many bytes were left out, so a trace never carries megabytes of screenshots.
 */
export function genAiParts(parts: readonly ContentPart[], mediaData: boolean): GenAiPart[] {
  return parts.map((part): GenAiPart => {
    if (part.type === "text") return { type: "text", content: part.text };
    const modality = part.type === "image" ? "image" : "document";
    if ("url" in part) {
      const uri: GenAiPart = { type: "uri", modality, uri: part.url };
      if (part.mediaType !== undefined) uri.mime_type = part.mediaType;
      return uri;
    }
    return mediaData
      ? { type: "blob", modality, mime_type: part.mediaType, content: part.data }
      : { type: "blob", modality, mime_type: part.mediaType, content: "", size: base64Size(part.data) };
  });
}
