import { tokenCounts } from "../usage.ts";
import { ProviderError } from "../../errors.ts";
import type {
  JsonObject,
  ModelMessage,
  Session,
  ThinkingMessage,
  TurnEndFields,
  ToolCallMessage,
  Usage,
} from "../../session.ts";
import { hasObjectRoot, outputInstruction } from "../../model/output-instruction.ts";
import type { ToolSchema } from "../../shared/tool-schema.ts";
import {
  isOwnSignedThinking,
  normalizeStopReason,
  pairToolMessages,
  readToolInput,
  refusedInput,
  safeToolId,
  answeredBy,
  type StopReasonNames,
  outputText,
} from "../convert-shared.ts";
import type { ModelSettings } from "../../model/model-settings.ts";
import { mergeProviderOptions, unsupportedSetting } from "../request-settings.ts";
import { openaiToolChoice, reasoningEffortOf } from "./chat-convert.ts";
import { bareMediaType, checkImageType, dataUrl, isDataPart } from "../content-convert.ts";
import type { ContentPart } from "../../content-parts.ts";
import { providerError, type ErrorShape } from "../provider-error.ts";

/** Options that shape the request body (the adapter's other options only affect transport). */
export type OpenAIResponsesRequestOptions = {
  model: string;
  /** `max_output_tokens`: the cap includes reasoning tokens. */
  maxTokens?: number;
  temperature?: number;
  /** `reasoning.effort` for reasoning models: "none", "minimal", "low", "medium", "high", "xhigh" (model-dependent). */
  reasoningEffort?: string;
  /**
   * `reasoning.summary`: "auto", "concise" or "detailed". Without it the API returns reasoning
   * without readable text (thinking messages with empty content, still sent back).
   */
  reasoningSummary?: string;
  stream?: boolean;
  /**
   * The run's `output` schema (the loop's `context.output`; the factory passes it on). An object
   * schema goes as `text: { format: { type: "json_schema", name: "output", schema, strict: false } }`
   * (not strict: strict mode accepts only a subset of JSON Schema). Any other schema (the format
   * takes only an object root) is given as the loop's instruction, first in `instructions`, instead.
   */
  output?: { jsonSchema: JsonObject } | undefined;
  /** The call's settings (`context.settings`), over the options above. */
  settings?: ModelSettings | undefined;
};

/** A part of user input or of a function's output: text, an image (a data: or https URL), a file (data or URL). */
export type OpenAIResponsesInputPart =
  | { type: "input_text"; text: string }
  | { type: "input_image"; image_url: string; detail: "auto" }
  | { type: "input_file"; file_data: string; filename: string }
  | { type: "input_file"; file_url: string; filename?: string };

export type OpenAIResponsesInputItem =
  | { role: "user"; content: string | OpenAIResponsesInputPart[] }
  | { role: "assistant"; content: { type: "output_text"; text: string }[] }
  | { type: "reasoning"; id?: string; summary: { type: "summary_text"; text: string }[]; encrypted_content: string }
  | { type: "function_call"; call_id: string; name: string; arguments: string }
  | { type: "function_call_output"; call_id: string; output: string | OpenAIResponsesInputPart[] };

export type OpenAIResponsesTool = {
  type: "function";
  name: string;
  description: string;
  parameters: JsonObject;
  strict: false;
};

export type OpenAIResponsesRequest = {
  model: string;
  input: OpenAIResponsesInputItem[];
  instructions?: string;
  tools?: OpenAIResponsesTool[];
  /** Always false: the session is the state, so nothing is kept server-side and every call sends the full input. */
  store: false;
  /** Always asks for `reasoning.encrypted_content`, the only way to send reasoning back without stored items. */
  include: string[];
  max_output_tokens?: number;
  temperature?: number;
  reasoning?: { effort?: string; summary?: string };
  top_p?: number;
  tool_choice?: "auto" | "none" | "required" | { type: "function"; name: string };
  prompt_cache_key?: string;
  prompt_cache_retention?: "24h";
  text?: { format: { type: "json_schema"; name: string; schema: JsonObject; strict: false } };
  stream?: boolean;
};

export const openaiResponsesProvider = "openai-responses";

// Content parts as Responses input parts: images by data: or https URL, files by data or URL.
function inputParts(parts: readonly ContentPart[], where: string): OpenAIResponsesInputPart[] {
  return parts.map((part): OpenAIResponsesInputPart => {
    if (part.type === "text") return { type: "input_text", text: part.text };
    if (part.type === "image") {
      checkImageType(part, openaiResponsesProvider, where);
      return { type: "input_image", image_url: isDataPart(part) ? dataUrl(part) : part.url, detail: "auto" };
    }
    if (!isDataPart(part)) {
      return part.filename === undefined
        ? { type: "input_file", file_url: part.url }
        : { type: "input_file", file_url: part.url, filename: part.filename };
    }
    const filename =
      part.filename ?? (bareMediaType(part.mediaType) === "application/pdf" ? "document.pdf" : "document");
    return { type: "input_file", file_data: dataUrl(part), filename };
  });
}

/**
 * The Responses API request for a session, stateless (`store: false`, never `previous_response_id`).
 * System messages become `instructions` (joined, in order), the stable prefix the API caches; user
 * and assistant text become message items; each thinking message of this provider goes back as a
 * `reasoning` item with its encrypted content, in session order (so before the calls it led to);
 * tool calls and results become `function_call` / `function_call_output` paired by `call_id`.
 * Foreign, unsigned and compacted thinking is left out, as is reasoning that no longer has an
 * output item after it in its turn (the API rejects such an item).
 */
export function toOpenAIResponsesRequest(
  session: Session,
  tools: readonly ToolSchema[],
  options: OpenAIResponsesRequestOptions,
): OpenAIResponsesRequest {
  const output = options.output;
  const instructed = output !== undefined && !hasObjectRoot(output.jsonSchema);
  const instructions: string[] = instructed ? [outputInstruction(output.jsonSchema)] : [];
  const input: OpenAIResponsesInputItem[] = [];
  for (const message of pairToolMessages(session.messages)) {
    if ("role" in message) {
      if (message.role === "system") instructions.push(message.content);
      else if (message.content === "") continue;
      else if (message.role === "user")
        input.push({
          role: "user",
          content:
            typeof message.content === "string" ? message.content : inputParts(message.content, "a user message"),
        });
      else input.push({ role: "assistant", content: [{ type: "output_text", text: message.content }] });
      continue;
    }
    if (message.type === "thinking") {
      if (isOwnSignedThinking(message, openaiResponsesProvider)) input.push(reasoningItem(message));
    } else if (message.type === "tool_call") {
      const arguments_ =
        typeof message.input === "object" && message.input !== null && !Array.isArray(message.input)
          ? message.input
          : {};
      input.push({
        type: "function_call",
        call_id: safeToolId(message.id),
        name: message.name,
        arguments: JSON.stringify(arguments_),
      });
    } else {
      input.push({
        type: "function_call_output",
        call_id: safeToolId(message.id),
        output:
          message.content === undefined
            ? outputText(message.output)
            : inputParts(message.content, `the result of tool call ${JSON.stringify(message.id)}`),
      });
    }
  }
  const settings = options.settings ?? {};
  // The Responses API has no stop sequences.
  if (settings.stopSequences !== undefined && settings.stopSequences.length > 0)
    throw unsupportedSetting(openaiResponsesProvider, "stopSequences", "the Responses API has no stop sequences");
  const request: OpenAIResponsesRequest = {
    model: settings.model ?? options.model,
    input: withoutDanglingReasoning(input),
    store: false,
    include: ["reasoning.encrypted_content"],
  };
  if (instructions.length > 0) request.instructions = instructions.join("\n\n");
  if (tools.length > 0) {
    // Strict mode would reject the many JSON Schemas that do not list every property as required.
    request.tools = tools.map((schema) => ({
      type: "function",
      name: schema.name,
      description: schema.description,
      parameters: schema.input_schema,
      strict: false,
    }));
  }
  const maxTokens = settings.maxTokens ?? options.maxTokens;
  if (maxTokens !== undefined) request.max_output_tokens = maxTokens;
  const temperature = settings.temperature ?? options.temperature;
  if (temperature !== undefined) request.temperature = temperature;
  if (settings.topP !== undefined) request.top_p = settings.topP;
  const effort = reasoningEffortOf(openaiResponsesProvider, settings) ?? options.reasoningEffort;
  if (effort !== undefined || options.reasoningSummary !== undefined) {
    request.reasoning = {};
    if (effort !== undefined) request.reasoning.effort = effort;
    if (options.reasoningSummary !== undefined) request.reasoning.summary = options.reasoningSummary;
  }
  const choice = openaiToolChoice(openaiResponsesProvider, settings, tools);
  if (choice !== undefined) request.tool_choice = typeof choice === "string" ? choice : { type: "function", ...choice };
  if (settings.cache?.key !== undefined) request.prompt_cache_key = settings.cache.key;
  if (settings.cache?.retention === "long") request.prompt_cache_retention = "24h";
  if (output !== undefined && !instructed)
    request.text = { format: { type: "json_schema", name: "output", schema: output.jsonSchema, strict: false } };
  if (options.stream !== false) request.stream = true;
  return mergeProviderOptions(request, settings.providerOptions);
}

/**
 * The `signature` of a thinking message from this provider: JSON `{"id","encrypted_content"}` of
 * the reasoning item, both needed to send it back. A signature that is not such JSON (a raw
 * `encrypted_content` string, as a hand-written invokeModel might store it) is sent back as is.
 */
export function reasoningSignature(id: string | undefined, encryptedContent: string): string {
  return JSON.stringify(
    id === undefined ? { encrypted_content: encryptedContent } : { id, encrypted_content: encryptedContent },
  );
}

function reasoningItem(message: ThinkingMessage): OpenAIResponsesInputItem {
  const { id, encryptedContent } = readSignature(message.signature ?? "");
  // The summary is one part: the session keeps the parts joined, and the API reads the reasoning
  // itself from the encrypted content.
  const summary = message.content === "" ? [] : [{ type: "summary_text" as const, text: message.content }];
  return id === undefined
    ? { type: "reasoning", summary, encrypted_content: encryptedContent }
    : { type: "reasoning", id, summary, encrypted_content: encryptedContent };
}

function readSignature(signature: string): { id?: string; encryptedContent: string } {
  if (signature.startsWith("{")) {
    try {
      const parsed = JSON.parse(signature) as { id?: unknown; encrypted_content?: unknown };
      if (typeof parsed.encrypted_content === "string") {
        return typeof parsed.id === "string"
          ? { id: parsed.id, encryptedContent: parsed.encrypted_content }
          : { encryptedContent: parsed.encrypted_content };
      }
    } catch {
      // Not our JSON: the whole string is the encrypted content.
    }
  }
  return { encryptedContent: signature };
}

// "Item 'rs_…' of type 'reasoning' was provided without its required following item": reasoning
// whose turn was cut (an abort) or whose output was dropped must go too.
function withoutDanglingReasoning(input: OpenAIResponsesInputItem[]): OpenAIResponsesInputItem[] {
  const kept: OpenAIResponsesInputItem[] = [];
  for (let index = 0; index < input.length; index++) {
    const item = input[index]!;
    if ("type" in item && item.type === "reasoning") {
      let next = index + 1;
      while (next < input.length && isReasoning(input[next]!)) next++;
      const following = input[next];
      const answered =
        following !== undefined &&
        (("role" in following && following.role === "assistant") ||
          ("type" in following && following.type === "function_call"));
      if (!answered) continue;
    }
    kept.push(item);
  }
  return kept;
}

function isReasoning(item: OpenAIResponsesInputItem): boolean {
  return "type" in item && item.type === "reasoning";
}

export type OpenAIResponsesOutputItem = {
  type: string;
  id?: string;
  /** `message`: output_text and refusal parts; `reasoning`: the reasoning itself as reasoning_text parts (open models). */
  content?: { type?: string; text?: string; refusal?: string }[] | null;
  /** `reasoning`: the readable summary parts and the opaque reasoning. */
  summary?: { type?: string; text?: string }[] | null;
  encrypted_content?: string | null;
  /** `function_call`: arguments are a JSON string. */
  call_id?: string;
  name?: string;
  arguments?: string;
  status?: string;
};
export type OpenAIResponsesUsage = {
  input_tokens?: number;
  input_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number } | null;
  output_tokens?: number;
  output_tokens_details?: { reasoning_tokens?: number } | null;
  total_tokens?: number;
};
export type OpenAIResponsesResponse = {
  id?: string;
  model?: string;
  status?: string;
  output?: OpenAIResponsesOutputItem[];
  incomplete_details?: { reason?: string } | null;
  usage?: OpenAIResponsesUsage | null;
  error?: { code?: string | null; message?: string } | null;
};

/**
 * A non-streaming Responses API response as generic messages, `stopReason`/`usage` on the last.
 * Throws a `ProviderError` for a failed response, and a retryable one for a completed response
 * with a tool call whose arguments are not a JSON object (never run a garbled call).
 */
export function fromOpenAIResponsesResponse(body: OpenAIResponsesResponse, asked?: string): ModelMessage[] {
  if (body.status === "failed" || (body.error !== null && body.error !== undefined)) {
    throw providerError(
      openaiResponsesProvider,
      undefined,
      undefined,
      JSON.stringify({ error: body.error ?? { message: "the response failed" } }),
      openaiResponsesErrors,
    );
  }
  const cut = body.status === "incomplete";
  const messages: ModelMessage[] = [];
  for (const item of body.output ?? []) {
    const message = fromOutputItem(item);
    if (message !== undefined) messages.push(message);
    else if (item.type === "function_call") {
      if (!cut) throw invalidArgumentsError(item);
      messages.push(toolCall(item, {}));
    }
  }
  if (messages.length === 0) messages.push({ role: "assistant", content: "" });
  const last = messages[messages.length - 1]!;
  Object.assign(last, stopFieldsOf(body, messages));
  if (last.model === undefined && asked !== undefined) last.model = asked;
  return messages;
}

/**
 * OpenAI error bodies: `{error:{message, type, code}}` over HTTP, an `error` stream event (with the
 * fields nested under `error` or at the top), or a failed response's `response.error`.
 */
export const openaiResponsesErrors: ErrorShape = {
  describe: (body) => {
    const record = body as { error?: ErrorFields | null; response?: { error?: ErrorFields | null } } & ErrorFields;
    const nested = record.error ?? record.response?.error ?? undefined;
    const error = nested ?? record;
    // At the top level of a stream event, `type` is the event's ("error"), not an error code.
    const code = error.code ?? (nested === undefined ? undefined : error.type);
    const retryAfterMs = typeof error.message === "string" ? retryAfterInMessage(error.message) : undefined;
    return {
      ...(typeof error.message === "string" ? { message: error.message } : {}),
      ...(typeof code === "string" ? { code } : {}),
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    };
  },
  retryableCodes: ["server_error", "rate_limit_exceeded"],
  // An exhausted quota comes as HTTP 429; waiting does not refill it.
  fatalCodes: ["insufficient_quota"],
};

type ErrorFields = { message?: unknown; code?: unknown; type?: unknown };

// Rate-limit messages say "Please try again in 1.5s" (or "in 20ms"); inside a stream there is no
// retry-after header to read instead.
function retryAfterInMessage(message: string): number | undefined {
  const match = /try again in (\d+(?:\.\d+)?)\s*(ms|s)\b/i.exec(message);
  if (match === null) return undefined;
  const amount = Number(match[1]);
  return match[2]!.toLowerCase() === "ms" ? amount : amount * 1000;
}

/**
 * One output item as a generic message. `undefined` for empty text, reasoning with nothing to keep,
 * server-side items (web search…), and a function call whose arguments are not a JSON object:
 * the caller decides what a cut call means. Arguments nested too deep or too large become `{}`
 * with `inputError` (see `readToolInput`).
 */
export function fromOutputItem(item: OpenAIResponsesOutputItem): ModelMessage | undefined {
  if (item.type === "message") {
    const text = (item.content ?? [])
      .map((part) => (part.type === "refusal" ? (part.refusal ?? "") : (part.text ?? "")))
      .join("");
    return text === "" ? undefined : { role: "assistant", content: text };
  }
  if (item.type === "reasoning") {
    // The readable summary; servers that show the reasoning itself (gpt-oss on vLLM or Ollama) put it in `content`.
    const summary = (item.summary ?? [])
      .map((part) => part.text ?? "")
      .filter((text) => text !== "")
      .join("\n\n");
    const content =
      summary !== ""
        ? summary
        : (item.content ?? [])
            .filter((part) => part.type === "reasoning_text")
            .map((part) => part.text ?? "")
            .join("");
    const encrypted = item.encrypted_content ?? "";
    if (content === "" && encrypted === "") return undefined;
    const message: ThinkingMessage = { type: "thinking", content, provider: openaiResponsesProvider };
    if (encrypted !== "") {
      message.signature = reasoningSignature(item.id, encrypted);
      if (content === "") message.redacted = true;
    }
    return message;
  }
  if (item.type === "function_call") {
    const read = readToolInput(item.arguments ?? "");
    return read.kind === "invalid" ? undefined : { ...toolCall(item, {}), ...refusedInput(read) };
  }
  return undefined;
}

export function toolCall(item: OpenAIResponsesOutputItem, input: JsonObject): ToolCallMessage {
  return { type: "tool_call", id: item.call_id ?? item.id ?? "", name: item.name ?? "", input };
}

export function invalidArgumentsError(item: OpenAIResponsesOutputItem): ProviderError {
  return new ProviderError(
    `${openaiResponsesProvider}: tool call "${item.name ?? ""}" arrived with invalid JSON arguments`,
    {
      provider: openaiResponsesProvider,
      retryable: true,
    },
  );
}

/**
 * Normalized stop reason (see `normalizeStopReason` for when `rawStopReason` is kept), and usage in the
 * generic shape. The Responses API has no stop reason for a completed response: it is `tool_use` when the
 * turn has tool calls, `refusal` when the model refused, `end_turn` otherwise.
 */
export function stopFieldsOf(
  response: Pick<OpenAIResponsesResponse, "status" | "incomplete_details" | "usage" | "output" | "model" | "id">,
  messages: readonly ModelMessage[],
): TurnEndFields {
  const fields: TurnEndFields = answeredBy(response.model, response.id);
  if (response.status === "completed") {
    const refused = (response.output ?? []).some(
      (item) => item.type === "message" && (item.content ?? []).some((part) => part.type === "refusal"),
    );
    fields.stopReason = messages.some((message) => "type" in message && message.type === "tool_call")
      ? "tool_use"
      : refused
        ? "refusal"
        : "end_turn";
  } else if (response.status !== undefined) {
    Object.assign(
      fields,
      normalizeStopReason(
        response.status === "incomplete" ? (response.incomplete_details?.reason ?? "incomplete") : response.status,
        incompleteReasons,
      ),
    );
  }
  if (response.usage !== null && response.usage !== undefined) fields.usage = openaiUsage(response.usage);
  return fields;
}

const incompleteReasons: StopReasonNames = {
  plain: { max_output_tokens: "max_tokens", content_filter: "content_filter" },
};

// OpenAI already counts cached tokens in input_tokens and reasoning in output_tokens, as the
// generic usage does; a server whose total is input + output + reasoning (xAI) counts it apart.
function openaiUsage(given: OpenAIResponsesUsage): Usage {
  const usage = tokenCounts(given);
  const input = usage.input_tokens ?? 0;
  const output = usage.output_tokens ?? 0;
  const reasoning = usage.output_tokens_details?.reasoning_tokens ?? 0;
  const reasoningApart = reasoning > output || (reasoning > 0 && usage.total_tokens === input + output + reasoning);
  const result: Usage = { inputTokens: input, outputTokens: reasoningApart ? output + reasoning : output };
  const cacheRead = usage.input_tokens_details?.cached_tokens ?? 0;
  const cacheWrite = usage.input_tokens_details?.cache_write_tokens ?? 0;
  if (cacheRead > 0) result.cacheReadTokens = cacheRead;
  if (cacheWrite > 0) result.cacheWriteTokens = cacheWrite;
  if (reasoning > 0) result.reasoningTokens = reasoning;
  return result;
}
