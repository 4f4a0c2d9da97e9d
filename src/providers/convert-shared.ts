import { base64Size, contentText, type ContentPart } from "../content-parts.ts";
import { AgentError } from "../errors.ts";
import {
  isToolResult,
  jsonNestedDeeperThan,
  type JsonObject,
  type JsonValue,
  type Message,
  type StopReason,
  type ThinkingMessage,
  type ToolResultMessage,
  type Usage,
} from "../session.ts";
import { sessionTurns, unansweredCalls } from "../session-turns.ts";

/**
 * Every provider rejects a tool call without a result and a result without its call. The loop
 * never produces either, but a hand-edited or truncated session may: answer orphan calls with an
 * error result (placed with the turn's other results) and drop orphan results. Returns the input
 * array itself when there is nothing to repair.
 */
export function pairToolMessages(messages: readonly Message[]): readonly Message[] {
  const calls = new Set<string>();
  const results = new Set<string>();
  for (const message of messages) {
    if (!("type" in message)) continue;
    if (message.type === "tool_call") calls.add(message.id);
    else if (message.type === "tool_result") results.add(message.id);
  }
  let complete = calls.size === results.size;
  if (complete) for (const id of calls) if (!results.has(id)) complete = false;
  if (complete) return messages;

  const repaired: Message[] = [];
  const answered = new Set<string>();
  for (const turn of sessionTurns(messages)) {
    for (let index = turn.start; index < turn.end; index++) {
      const message = messages[index]!;
      if (isToolResult(message)) {
        if (!calls.has(message.id) || answered.has(message.id)) continue;
        answered.add(message.id);
      }
      repaired.push(message);
    }
    for (const call of unansweredCalls(messages, turn)) {
      if (!answered.has(call.id))
        repaired.push({
          type: "tool_result",
          id: call.id,
          output: "Error: no result was recorded for this tool call.",
          isError: true,
        });
    }
  }
  return repaired;
}

/**
 * A tool-call id that matches `^[a-zA-Z0-9_-]{1,maxLength}$`. The same id always maps to the same
 * result (so a call and its result stay paired), and an id that had to change gets a hash suffix
 * so two different ids never collide.
 */
export function safeToolId(id: string, maxLength = 64): string {
  if (id.length > 0 && id.length <= maxLength && /^[a-zA-Z0-9_-]+$/.test(id)) return id;
  const hash = fnv1a(id);
  const cleaned = id.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, maxLength - hash.length - 1);
  return `${cleaned}_${hash}`;
}

function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(36);
}

/**
 * The text of a message's content for an adapter that takes only text there. Any other part is
 * refused before a request is sent: an `AgentError` naming the part and the adapter.
 */
export function textOnlyContent(content: string | readonly ContentPart[], adapter: string, where: string): string {
  if (typeof content === "string") return content;
  const other = content.find((part) => part.type !== "text");
  if (other !== undefined) throw unsupportedPartError(adapter, other, where);
  return contentText(content);
}

/** A tool result's text for an adapter that takes only text in tool results (refusing other parts, as `textOnlyContent`). */
export function resultText(message: ToolResultMessage, adapter: string): string {
  if (message.content === undefined) return outputText(message.output);
  return textOnlyContent(message.content, adapter, `the result of tool call ${JSON.stringify(message.id)}`);
}

/** The error for a part an adapter cannot send: it names the part, where it was and the adapter; never a silent drop. */
export function unsupportedPartError(adapter: string, part: ContentPart, where: string, reason?: string): AgentError {
  const why = reason === undefined ? "" : `: ${reason}`;
  return new AgentError(`the ${adapter} adapter cannot send ${describePart(part)} in ${where}${why}`);
}

/** A part in a few words for messages: `an image part (image/png, 48 KB)`, `a file part (report.pdf, https://…)`. */
export function describePart(part: ContentPart): string {
  if (part.type === "text") return "a text part";
  const details: string[] = [];
  if (part.type === "file" && part.filename !== undefined) details.push(JSON.stringify(part.filename.slice(0, 80)));
  if (part.mediaType !== undefined) details.push(part.mediaType);
  if ("data" in part) details.push(`${Math.ceil(base64Size(part.data) / 1024)} KB`);
  else details.push(JSON.stringify(part.url.slice(0, 120)));
  return `${part.type === "image" ? "an image" : "a file"} part (${details.join(", ")})`;
}

/** Tool output as the text providers expect: strings as they are, other JSON serialized. */
export function outputText(output: JsonValue): string {
  return typeof output === "string" ? output : JSON.stringify(output);
}

/**
 * Whether a thinking block may go back to `provider` as signed reasoning: it has a signature, was
 * not truncated by compaction, and came from that provider. Untagged blocks count as the
 * provider's own only where `untaggedIsOwn` (sessions written by a hand-made Anthropic invokeModel carry no tag).
 */
export function isOwnSignedThinking(message: ThinkingMessage, provider: string, untaggedIsOwn = false): boolean {
  if (message.signature === undefined || message.signature === "" || message.compacted === true) return false;
  return message.provider === undefined ? untaggedIsOwn : message.provider === provider;
}

/** The deepest nesting of arrays and objects a tool input may have (a deeper one cannot be serialized safely). */
export const maxToolInputDepth = 100;
/** The most characters of JSON a tool input may have. */
export const maxToolInputLength = 16 * 1024 * 1024;

/**
 * A tool call's input as read from the wire: `ok` with a JSON object; `invalid` when it is not
 * complete JSON or not an object (a garbled or cut stream: the turn decides what that means);
 * `refused` when it is valid but too deep or too large to keep in a session, which must survive
 * `JSON.stringify` (the call then gets an invalid-input error result: `reason` says why).
 */
export type ToolInput = { kind: "ok"; input: JsonObject } | { kind: "invalid" } | { kind: "refused"; reason: string };

/**
 * The one reader of tool-call arguments for every adapter: a JSON string as streamed or sent (an
 * empty string is `{}`), or a value the provider sent already parsed (Gemini `args`, Anthropic and
 * Bedrock `input`). Depth and size are checked without recursion, before anything is kept.
 */
export function readToolInput(source: unknown): ToolInput {
  if (typeof source === "string") {
    if (source.length > maxToolInputLength) return { kind: "refused", reason: tooLarge(source.length) };
    if (source.trim() === "") return { kind: "ok", input: {} };
    if (jsonNestedDeeperThan(source, maxToolInputDepth)) return { kind: "refused", reason: tooDeep };
    let value: unknown;
    try {
      value = JSON.parse(source);
    } catch {
      return { kind: "invalid" };
    }
    return isJsonObject(value) ? { kind: "ok", input: value } : { kind: "invalid" };
  }
  if (source === undefined || source === null) return { kind: "ok", input: {} };
  if (!isJsonObject(source)) return { kind: "invalid" };
  const size = valueSize(source);
  if (size === "too-deep") return { kind: "refused", reason: tooDeep };
  if (size > maxToolInputLength) return { kind: "refused", reason: tooLarge(size) };
  return { kind: "ok", input: source };
}

/** A tool call's JSON arguments as an object; `undefined` when they are not one (see `readToolInput`). */
export function parseToolInput(text: string): JsonObject | undefined {
  const read = readToolInput(text);
  return read.kind === "ok" ? read.input : undefined;
}

/** The tool-call fields for a refused input: `{}` and the error the loop answers the call with. */
export function refusedInput(read: ToolInput): { input: JsonObject; inputError?: string } {
  return read.kind === "refused"
    ? { input: {}, inputError: read.reason }
    : { input: read.kind === "ok" ? read.input : {} };
}

const tooDeep = `the arguments are nested more than ${maxToolInputDepth} levels deep`;

function tooLarge(length: number): string {
  return `the arguments are ${length} characters long, more than the ${maxToolInputLength} allowed`;
}

function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

// About the JSON length of a parsed value, or `too-deep`; walks with its own stack, not recursion.
function valueSize(root: JsonObject): number | "too-deep" {
  const stack: { value: unknown; depth: number }[] = [{ value: root, depth: 1 }];
  let size = 0;
  while (stack.length > 0) {
    const { value, depth } = stack.pop()!;
    if (typeof value === "string") size += value.length + 2;
    else if (typeof value !== "object" || value === null) size += 5;
    else {
      if (depth > maxToolInputDepth) return "too-deep";
      size += 2;
      if (Array.isArray(value)) for (const item of value as unknown[]) stack.push({ value: item, depth: depth + 1 });
      else {
        for (const [key, item] of Object.entries(value)) {
          size += key.length + 4;
          stack.push({ value: item, depth: depth + 1 });
        }
      }
    }
    if (size > maxToolInputLength) return size;
  }
  return size;
}

/**
 * How an adapter names stop reasons: `plain` maps the provider's own name for each normalized
 * reason; `aliases` maps the other values it knows, which share a normalized reason with another.
 */
export type StopReasonNames = {
  plain: Readonly<Record<string, StopReason>>;
  aliases?: Readonly<Record<string, StopReason>>;
};

/**
 * A provider's stop reason, normalized, with the one rule for `rawStopReason` every adapter
 * follows: the raw value is kept whenever `stopReason` alone does not tell what it was (an unknown
 * value, an alias, or a reason `correct` changed, e.g. `stop` with tool calls is `tool_use`), and
 * left out when it is the provider's plain name for `stopReason`.
 */
export function normalizeStopReason(
  raw: string | null | undefined,
  names: StopReasonNames,
  correct: (stopReason: StopReason) => StopReason = (stopReason) => stopReason,
): { stopReason?: StopReason; rawStopReason?: string } {
  if (raw === null || raw === undefined) return {};
  const mapped = Object.hasOwn(names.plain, raw)
    ? names.plain[raw]!
    : names.aliases !== undefined && Object.hasOwn(names.aliases, raw)
      ? names.aliases[raw]!
      : "other";
  const stopReason = correct(mapped);
  const plain = Object.hasOwn(names.plain, raw) && names.plain[raw] === stopReason;
  return plain ? { stopReason } : { stopReason, rawStopReason: raw };
}

/** `end_turn` with tool calls is `tool_use`: several servers say "stop" for a turn that calls tools. */
export function toolUseWhenCalls(hasToolCalls: boolean): (stopReason: StopReason) => StopReason {
  return (stopReason) => (stopReason === "end_turn" && hasToolCalls ? "tool_use" : stopReason);
}

/** Usage where the provider counts cached input apart: the generic `inputTokens` includes it. */
export function usageWithCache(input: number, output: number, cacheRead: number, cacheWrite: number): Usage {
  const usage: Usage = { inputTokens: input + cacheRead + cacheWrite, outputTokens: output };
  if (cacheRead > 0) usage.cacheReadTokens = cacheRead;
  if (cacheWrite > 0) usage.cacheWriteTokens = cacheWrite;
  return usage;
}

/**
 * Who answered: the response's model id (else the model that was asked, where the response names
 * none) and the response's id, as the turn-end fields `model` and `responseId`.
 */
export function answeredBy(
  model: unknown,
  responseId: unknown,
  asked?: string,
): { model?: string; responseId?: string } {
  const fields: { model?: string; responseId?: string } = {};
  if (typeof model === "string" && model !== "") fields.model = model;
  else if (asked !== undefined) fields.model = asked;
  if (typeof responseId === "string" && responseId !== "") fields.responseId = responseId;
  return fields;
}
