import { tokenCounts } from "../usage.ts";
import { ProviderError } from "../../errors.ts";
import type {
  JsonObject,
  Message,
  ModelMessage,
  Session,
  ThinkingMessage,
  ToolCallMessage,
  ToolResultMessage,
  TurnEndFields,
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
  toolUseWhenCalls,
  answeredBy,
  type StopReasonNames,
  outputText,
} from "../convert-shared.ts";
import type { ModelSettings } from "../../model/model-settings.ts";
import { chosenTool, mergeProviderOptions, unsupportedSetting } from "../request-settings.ts";
import {
  bareMediaType,
  checkImageType,
  dataUrl,
  isDataPart,
  toolAttachmentsText,
  urlNotDownloadedError,
} from "../content-convert.ts";
import { contentText, type ContentPart } from "../../content-parts.ts";

/** Options that shape the request body (the adapter's other options only affect transport). */
export type OpenAIChatRequestOptions = {
  model: string;
  /** The most tokens the reply may use, reasoning included. */
  maxTokens?: number;
  /**
   * The field that carries `maxTokens`: OpenAI's reasoning models accept only
   * `max_completion_tokens`; many compatible servers (Ollama, LM Studio, older llama.cpp) know
   * only `max_tokens`. Default `max_completion_tokens` (the factory picks `max_tokens` for a custom `baseURL`).
   */
  maxTokensField?: "max_completion_tokens" | "max_tokens";
  temperature?: number;
  /** `reasoning_effort` for reasoning models, e.g. `"low"`, `"medium"`, `"high"`. */
  reasoningEffort?: string;
  stream?: boolean;
  /**
   * The run's `output` schema (the loop's `context.output`; the factory passes it on). An object
   * schema goes as `response_format: { type: "json_schema", json_schema: { name: "output", schema,
   * strict: false } }` (not strict: strict mode accepts only a subset of JSON Schema). Any other
   * schema (an array, a string…: `response_format` takes only an object root) is given as the
   * loop's instruction in a leading system message instead.
   */
  output?: { jsonSchema: JsonObject } | undefined;
  /** The call's settings (`context.settings`), over the options above. */
  settings?: ModelSettings | undefined;
};

export type OpenAIChatToolCall = { id: string; type: "function"; function: { name: string; arguments: string } };
/** A part of a user message: text, an image (a data: URL or an https URL), a file (a data: URL). */
export type OpenAIChatUserPart =
  | { type: "text"; text: string }
  | { type: "image_url"; image_url: { url: string } }
  | { type: "file"; file: { file_data: string; filename?: string } };

export type OpenAIChatMessage =
  | { role: "system"; content: string }
  /** Parts where the message has images or files (`image_url`, `file`). */
  | { role: "user"; content: string | OpenAIChatUserPart[] }
  | {
      role: "assistant";
      /** Parts only for reasoning that came as `thinking` parts of the content (Mistral), sent back the same way. */
      content: string | null | OpenAIChatContentPart[];
      tool_calls?: OpenAIChatToolCall[];
      /** Reasoning of compatible servers (DeepSeek, vLLM, llama.cpp), sent back in the field it came in. */
      reasoning_content?: string;
      reasoning?: string;
    }
  | { role: "tool"; tool_call_id: string; content: string };

/** A part of an array `content`: text, or reasoning as Mistral sends it (`thinking` parts). */
export type OpenAIChatContentPart =
  { type: "text"; text: string } | { type: "thinking"; thinking: { type: "text"; text: string }[] };

/** Where a server put its reasoning: sent back in the same place. */
export type ReasoningField = "reasoning_content" | "reasoning" | "content";

export type OpenAIChatRequest = {
  model: string;
  messages: OpenAIChatMessage[];
  tools?: { type: "function"; function: { name: string; description: string; parameters: JsonObject } }[];
  max_completion_tokens?: number;
  max_tokens?: number;
  temperature?: number;
  reasoning_effort?: string;
  top_p?: number;
  stop?: string[];
  tool_choice?: "auto" | "none" | "required" | { type: "function"; function: { name: string } };
  prompt_cache_key?: string;
  prompt_cache_retention?: "24h";
  stream?: true;
  stream_options?: { include_usage: true };
  response_format?: { type: "json_schema"; json_schema: { name: string; schema: JsonObject; strict: false } };
};

export const openaiChatProvider = "openai-chat";

// OpenAI rejects a tool call id longer than 40 characters (ids from other APIs can be longer).
const maxToolIdLength = 40;

/**
 * The Chat Completions request for a session: system and user messages keep their place; a run
 * of thinking/assistant/tool_call messages becomes one assistant message (text joined, `content:
 * null` when it only calls tools), followed at once by one `role: tool` message per call, in call
 * order. Reasoning goes back only when it is this adapter's own and was not compacted.
 */
export function toOpenAIChatRequest(
  session: Session,
  tools: readonly ToolSchema[],
  options: OpenAIChatRequestOptions,
): OpenAIChatRequest {
  const output = options.output;
  const instructed = output !== undefined && !hasObjectRoot(output.jsonSchema);
  const sessionMessages = instructed
    ? [{ role: "system", content: outputInstruction(output.jsonSchema) } as const, ...session.messages]
    : session.messages;
  const messages: OpenAIChatMessage[] = [];
  for (const item of groupTurns(sessionMessages)) {
    if ("role" in item) messages.push(item);
    else messages.push(...assistantMessages(item));
  }
  const settings = options.settings ?? {};
  const request: OpenAIChatRequest = { model: settings.model ?? options.model, messages };
  if (tools.length > 0) {
    request.tools = tools.map((schema) => ({
      type: "function",
      function: { name: schema.name, description: schema.description, parameters: schema.input_schema },
    }));
  }
  const maxTokens = settings.maxTokens ?? options.maxTokens;
  if (maxTokens !== undefined) request[options.maxTokensField ?? "max_completion_tokens"] = maxTokens;
  const temperature = settings.temperature ?? options.temperature;
  if (temperature !== undefined) request.temperature = temperature;
  if (settings.topP !== undefined) request.top_p = settings.topP;
  if (settings.stopSequences !== undefined) request.stop = [...settings.stopSequences];
  const effort = reasoningEffortOf(openaiChatProvider, settings) ?? options.reasoningEffort;
  if (effort !== undefined) request.reasoning_effort = effort;
  const choice = openaiToolChoice(openaiChatProvider, settings, tools);
  if (choice !== undefined)
    request.tool_choice = typeof choice === "string" ? choice : { type: "function", function: choice };
  if (settings.cache?.key !== undefined) request.prompt_cache_key = settings.cache.key;
  if (settings.cache?.retention === "long") request.prompt_cache_retention = "24h";
  if (output !== undefined && !instructed)
    request.response_format = {
      type: "json_schema",
      json_schema: { name: "output", schema: output.jsonSchema, strict: false },
    };
  if (options.stream !== false) {
    request.stream = true;
    request.stream_options = { include_usage: true };
  }
  return mergeProviderOptions(request, settings.providerOptions);
}

/** OpenAI takes a reasoning level (`reasoning_effort`, `reasoning.effort`), not a budget of tokens. */
export function reasoningEffortOf(provider: string, settings: ModelSettings): string | undefined {
  if (settings.reasoning?.budgetTokens !== undefined)
    throw unsupportedSetting(provider, "reasoning.budgetTokens", "OpenAI takes a level: give reasoning.effort");
  return settings.reasoning?.effort;
}

/** A `toolChoice` as OpenAI's two APIs name it: the same words, and a named tool as `{ name }`. */
export function openaiToolChoice(
  provider: string,
  settings: ModelSettings,
  tools: readonly ToolSchema[],
): "auto" | "none" | "required" | { name: string } | undefined {
  const choice = settings.toolChoice;
  if (choice === undefined || (tools.length === 0 && (choice === "auto" || choice === "none"))) return undefined;
  if (tools.length === 0) throw unsupportedSetting(provider, "toolChoice", "this call offers no tools to call");
  if (typeof choice === "string") return choice;
  return {
    name: chosenTool(
      provider,
      choice,
      tools.map((schema) => schema.name),
    )!,
  };
}

// Non-assistant messages as they are; each run of model messages as one assistant turn holding
// its calls' results, in call order.
function groupTurns(sessionMessages: readonly Message[]): (OpenAIChatMessage | AssistantTurn)[] {
  const items: (OpenAIChatMessage | AssistantTurn)[] = [];
  // Each call waits for its result in the turn that made it; an id reused in a later turn (some
  // servers number their calls per response) then still pairs with its own result.
  const awaiting = new Map<string, AssistantTurn>();
  let open: AssistantTurn | undefined;
  for (const message of pairToolMessages(sessionMessages)) {
    if ("role" in message && message.role !== "assistant") {
      open = undefined;
      items.push(
        message.role === "user"
          ? { role: "user", content: userContent(message.content, "a user message") }
          : { role: message.role, content: message.content },
      );
      continue;
    }
    if ("type" in message && message.type === "tool_result") {
      open = undefined;
      const turn = awaiting.get(message.id);
      if (turn === undefined) continue;
      awaiting.delete(message.id);
      turn.results.set(message.id, toolResultContent(message));
      continue;
    }
    if (open === undefined || open.ended) {
      open = {
        text: [],
        reasoning: [],
        reasoningField: "reasoning_content",
        calls: [],
        results: new Map(),
        ended: false,
      };
      items.push(open);
    }
    if ("role" in message) {
      if (message.content !== "") open.text.push(message.content);
    } else if (message.type === "thinking") {
      if (isOwnSignedThinking(message, openaiChatProvider) && message.redacted !== true) {
        open.reasoning.push(message.content);
        if (message.signature === "reasoning" || message.signature === "content")
          open.reasoningField = message.signature;
      }
    } else {
      open.calls.push(message);
      awaiting.set(message.id, open);
    }
    // A message that ended a turn closes it: the next model message is another reply.
    if (message.stopReason !== undefined) open.ended = true;
  }
  return items;
}

type AssistantTurn = {
  text: string[];
  reasoning: string[];
  reasoningField: ReasoningField;
  calls: ToolCallMessage[];
  /** Tool output by call id: its text, and the images and files that follow the turn's results in a user message. */
  results: Map<string, { text: string; attachments: OpenAIChatUserPart[] }>;
  ended: boolean;
};

// The assistant message, then the answer to each of its calls, in call order, before anything else.
function assistantMessages(turn: AssistantTurn): OpenAIChatMessage[] {
  if (turn.text.length === 0 && turn.reasoning.length === 0 && turn.calls.length === 0) return [];
  const assistant: OpenAIChatMessage = {
    role: "assistant",
    content: turn.text.length > 0 ? turn.text.join("\n\n") : turn.calls.length > 0 ? null : "",
  };
  if (turn.reasoning.length > 0 && turn.reasoningField === "content") {
    const thinking = {
      type: "thinking" as const,
      thinking: [{ type: "text" as const, text: turn.reasoning.join("\n\n") }],
    };
    assistant.content = [
      thinking,
      ...(turn.text.length > 0 ? [{ type: "text" as const, text: turn.text.join("\n\n") }] : []),
    ];
  } else if (turn.reasoning.length > 0) assistant[turn.reasoningField] = turn.reasoning.join("\n\n");
  if (turn.calls.length === 0) return [assistant];
  assistant.tool_calls = turn.calls.map((call) => ({
    id: wireToolId(call),
    type: "function",
    function: { name: call.name, arguments: JSON.stringify(isJsonObject(call.input) ? call.input : {}) },
  }));
  const results: OpenAIChatMessage[] = turn.calls.map((call) => ({
    role: "tool",
    tool_call_id: wireToolId(call),
    content: turn.results.get(call.id)?.text ?? "Error: no result was recorded for this tool call.",
  }));
  // A tool message takes only text: images and files follow all of the turn's results, in a
  // user message that names the call each came from.
  const attachments: OpenAIChatUserPart[] = [];
  for (const call of turn.calls) {
    const parts = turn.results.get(call.id)?.attachments ?? [];
    if (parts.length > 0)
      attachments.push({ type: "text", text: toolAttachmentsText(wireToolId(call), call.name) }, ...parts);
  }
  if (attachments.length > 0) results.push({ role: "user", content: attachments });
  return [assistant, ...results];
}

// A user message's content: text as it is, parts as Chat Completions parts.
function userContent(content: string | readonly ContentPart[], where: string): string | OpenAIChatUserPart[] {
  if (typeof content === "string") return content;
  return content.map((part) => userPart(part, where));
}

function userPart(part: ContentPart, where: string): OpenAIChatUserPart {
  if (part.type === "text") return { type: "text", text: part.text };
  if (part.type === "image") {
    checkImageType(part, openaiChatProvider, where);
    return { type: "image_url", image_url: { url: isDataPart(part) ? dataUrl(part) : part.url } };
  }
  // Chat Completions takes a file's bytes (or an uploaded file's id), never a URL.
  if (!isDataPart(part)) throw urlNotDownloadedError(openaiChatProvider, part, where);
  const file: { file_data: string; filename?: string } = { file_data: dataUrl(part) };
  file.filename = part.filename ?? defaultFilename(part.mediaType);
  return { type: "file", file };
}

// A tool result's text for its tool message, and its other parts for the user message after the turn's results.
function toolResultContent(message: ToolResultMessage): { text: string; attachments: OpenAIChatUserPart[] } {
  if (message.content === undefined) return { text: outputText(message.output), attachments: [] };
  const where = `the result of tool call ${JSON.stringify(message.id)}`;
  const attachments = message.content.filter((part) => part.type !== "text").map((part) => userPart(part, where));
  return { text: contentText(message.content), attachments };
}

// OpenAI requires a file name with file data.
function defaultFilename(mediaType: string): string {
  return bareMediaType(mediaType) === "application/pdf" ? "document.pdf" : "document";
}

// The server's own id for its own call, which it may insist on (Mistral takes only its 9-character
// ids); any other id made safe for OpenAI.
function wireToolId(call: ToolCallMessage): string {
  return call.provider === openaiChatProvider && call.wireId !== undefined
    ? call.wireId
    : safeToolId(call.id, maxToolIdLength);
}

function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export type OpenAIChatUsage = {
  prompt_tokens?: number | null;
  completion_tokens?: number | null;
  total_tokens?: number | null;
  prompt_tokens_details?: { cached_tokens?: number | null } | null;
  completion_tokens_details?: { reasoning_tokens?: number | null } | null;
  /** DeepSeek's own name for cached prompt tokens. */
  prompt_cache_hit_tokens?: number | null;
};

export type OpenAIChatResponseToolCall = {
  id?: string | null;
  function?: { name?: string | null; arguments?: unknown } | null;
};

export type OpenAIChatResponse = {
  choices?: {
    message?: {
      /** A string, or an array of `text` and `thinking` parts (Mistral). */
      content?: unknown;
      reasoning_content?: string | null;
      reasoning?: string | null;
      reasoning_details?: unknown;
      refusal?: string | null;
      tool_calls?: OpenAIChatResponseToolCall[] | null;
    } | null;
    finish_reason?: string | null;
  }[];
  usage?: OpenAIChatUsage | null;
  id?: string;
  model?: string;
};

/**
 * A non-streaming Chat Completions response as generic messages (reasoning, text, tool calls),
 * `stopReason`/`usage` on the last. Throws a retryable `ProviderError` for a tool call whose
 * arguments are not a JSON object, unless the reply was cut by the token limit.
 */
export function fromOpenAIChatResponse(body: OpenAIChatResponse, asked?: string): ModelMessage[] {
  const choice = body.choices?.[0];
  const message = choice?.message ?? {};
  const reasoning = readReasoning(message);
  const refusal = typeof message.refusal === "string" && message.refusal !== "" ? message.refusal : undefined;
  const finishReason = choice?.finish_reason ?? undefined;
  const ids = new Set<string>();
  const messages: ModelMessage[] = [];
  if (reasoning !== undefined) messages.push(thinkingMessage(reasoning.text, reasoning.field));
  // Reasoning and text parts of an array content, in order, each run of one kind one message.
  let text = "";
  for (const piece of contentPieces(message.content)) {
    if (piece.kind === "text") text += piece.text;
    else {
      if (text !== "") messages.push({ role: "assistant", content: text });
      text = "";
      const last = messages[messages.length - 1];
      if (last !== undefined && "type" in last && last.type === "thinking" && last.signature === "content")
        last.content += piece.text;
      else messages.push(thinkingMessage(piece.text, "content"));
    }
  }
  if (text !== "" || refusal !== undefined)
    messages.push({ role: "assistant", content: text !== "" ? text : refusal! });
  const toolCalls = message.tool_calls ?? [];
  for (const call of toolCalls) {
    const wireArguments = call.function?.arguments;
    const toolCall = {
      id: uniqueToolId(call.id ?? undefined, ids),
      name: call.function?.name ?? "",
      // A few servers send the arguments already parsed.
      arguments: typeof wireArguments === "string" ? wireArguments : (wireArguments ?? {}),
    };
    messages.push(toolCallMessage(toolCall, finishReason));
  }
  if (messages.length === 0) messages.push({ role: "assistant", content: "" });
  Object.assign(
    messages[messages.length - 1]!,
    stopFieldsOf(finishReason, body.usage ?? undefined, toolCalls.length > 0, refusal !== undefined),
    answeredBy(body.model, body.id, asked),
  );
  return messages;
}

/**
 * The text and reasoning of a `content`, in order: a string is text; an array holds `text` parts
 * and `thinking` parts (Mistral's reasoning, its text a string or an array of text parts).
 * Anything else (null, images, parts added later) is nothing.
 */
export function contentPieces(content: unknown): { kind: "text" | "thinking"; text: string }[] {
  if (typeof content === "string") return content === "" ? [] : [{ kind: "text", text: content }];
  if (!Array.isArray(content)) return [];
  const pieces: { kind: "text" | "thinking"; text: string }[] = [];
  for (const part of content as unknown[]) {
    if (typeof part === "string") {
      if (part !== "") pieces.push({ kind: "text", text: part });
      continue;
    }
    if (typeof part !== "object" || part === null) continue;
    const { type, text, thinking } = part as { type?: unknown; text?: unknown; thinking?: unknown };
    if ((type === "text" || type === "output_text") && typeof text === "string" && text !== "")
      pieces.push({ kind: "text", text });
    else if (type === "thinking") {
      const reasoning = partsText(thinking);
      if (reasoning !== "") pieces.push({ kind: "thinking", text: reasoning });
    }
  }
  return pieces;
}

function partsText(value: unknown): string {
  if (typeof value === "string") return value;
  if (!Array.isArray(value)) return "";
  let text = "";
  for (const part of value as unknown[]) {
    if (typeof part === "string") text += part;
    else if (typeof part === "object" && part !== null && typeof (part as { text?: unknown }).text === "string")
      text += (part as { text: string }).text;
  }
  return text;
}

/**
 * The reasoning text of a message or delta and the field it came in: `reasoning_content`
 * (DeepSeek, vLLM, xAI), `reasoning` (OpenRouter, Groq, Ollama), else the readable parts of
 * OpenRouter's `reasoning_details` (its text and summary entries; encrypted ones have none).
 */
export function readReasoning(source: {
  reasoning_content?: unknown;
  reasoning?: unknown;
  reasoning_details?: unknown;
}): { text: string; field: "reasoning_content" | "reasoning" } | undefined {
  if (typeof source.reasoning_content === "string" && source.reasoning_content !== "")
    return { text: source.reasoning_content, field: "reasoning_content" };
  if (typeof source.reasoning === "string" && source.reasoning !== "")
    return { text: source.reasoning, field: "reasoning" };
  if (Array.isArray(source.reasoning_details)) {
    let text = "";
    for (const detail of source.reasoning_details as unknown[]) {
      if (typeof detail !== "object" || detail === null) continue;
      const { text: detailText, summary } = detail as { text?: unknown; summary?: unknown };
      if (typeof detailText === "string") text += detailText;
      else if (typeof summary === "string") text += summary;
    }
    if (text !== "") return { text, field: "reasoning" };
  }
  return undefined;
}

/**
 * Reasoning as a thinking message. Chat Completions reasoning has no signature: `signature` names
 * the field it came in (`content` for Mistral's thinking parts), which is all that is needed to
 * send it back where it belongs.
 */
export function thinkingMessage(text: string, field: ReasoningField): ThinkingMessage {
  return { type: "thinking", content: text, signature: field, provider: openaiChatProvider };
}

/**
 * A tool call with its parsed arguments (a JSON string, or an object a few servers send parsed).
 * Arguments that are not a JSON object are only acceptable in a reply cut by the token limit (the
 * loop will not run the call): then the input is `{}`. Arguments nested too deep or too large
 * become `{}` with `inputError`: the loop answers that call with an error.
 */
export function toolCallMessage(
  call: { id: string; name: string; arguments: unknown },
  finishReason: string | undefined,
): ToolCallMessage {
  const read = readToolInput(call.arguments);
  if (read.kind === "invalid" && finishReason !== "length") {
    throw new ProviderError(`openai-chat: tool call "${call.name}" arrived with invalid JSON arguments`, {
      provider: openaiChatProvider,
      retryable: true,
    });
  }
  return { type: "tool_call", id: call.id, name: call.name, ...refusedInput(read) };
}

/**
 * The call's own id, or a fresh one when the server sent none or repeated one within the reply
 * (the loop needs ids unique in the turn). Records the id in `used`.
 */
export function uniqueToolId(id: string | undefined, used: Set<string>): string {
  let unique = id !== undefined && id !== "" && !used.has(id) ? id : freshToolId();
  while (used.has(unique)) unique = freshToolId();
  used.add(unique);
  return unique;
}

function freshToolId(): string {
  return `call_${globalThis.crypto.randomUUID().replace(/-/g, "").slice(0, 24)}`;
}

/**
 * Normalized stop reason (see `normalizeStopReason` for when `rawStopReason` is kept: an unknown reason,
 * "stop" with tool calls, a refusal), and usage in the generic shape.
 */
export function stopFieldsOf(
  finishReason: string | undefined,
  usage: OpenAIChatUsage | undefined,
  hasToolCalls: boolean,
  refused = false,
): TurnEndFields {
  const fields: TurnEndFields = normalizeStopReason(finishReason, finishReasons, (stopReason) =>
    refused ? "refusal" : toolUseWhenCalls(hasToolCalls)(stopReason),
  );
  if (usage !== undefined) fields.usage = openaiChatUsage(usage);
  return fields;
}

const finishReasons: StopReasonNames = {
  plain: { stop: "end_turn", tool_calls: "tool_use", length: "max_tokens", content_filter: "content_filter" },
  // The legacy function call, and the names compatible servers use (vLLM and TGI `eos_token`, Mistral `model_length`).
  aliases: {
    function_call: "tool_use",
    eos: "end_turn",
    eos_token: "end_turn",
    end_turn: "end_turn",
    stop_sequence: "stop_sequence",
    model_length: "max_tokens",
    max_tokens: "max_tokens",
    tool_use: "tool_use",
  },
};

// prompt_tokens already includes cached tokens, as the generic count does. completion_tokens
// includes reasoning tokens at OpenAI, not at xAI (there total = prompt + completion + reasoning):
// the generic output always includes them.
function openaiChatUsage(given: OpenAIChatUsage): Usage {
  const usage = tokenCounts(given);
  const prompt = usage.prompt_tokens ?? 0;
  const completion = usage.completion_tokens ?? 0;
  const reasoning = usage.completion_tokens_details?.reasoning_tokens ?? 0;
  const total = usage.total_tokens ?? undefined;
  const reasoningApart =
    reasoning > completion || (total !== undefined && reasoning > 0 && total === prompt + completion + reasoning);
  const result: Usage = { inputTokens: prompt, outputTokens: reasoningApart ? completion + reasoning : completion };
  const cacheRead = usage.prompt_tokens_details?.cached_tokens ?? usage.prompt_cache_hit_tokens ?? 0;
  if (cacheRead > 0) result.cacheReadTokens = cacheRead;
  if (reasoning > 0) result.reasoningTokens = reasoning;
  return result;
}
