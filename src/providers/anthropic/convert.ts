import { tokenCounts } from "../usage.ts";
import type { Message, ModelMessage, Session, StopDetails, TurnEndFields } from "../../session.ts";
import type { ModelSettings } from "../../model/model-settings.ts";
import type { ToolSchema } from "../../shared/tool-schema.ts";
import {
  isOwnSignedThinking,
  normalizeStopReason,
  pairToolMessages,
  readToolInput,
  refusedInput,
  safeToolId,
  usageWithCache,
  answeredBy,
  type StopReasonNames,
  outputText,
  unsupportedPartError,
} from "../convert-shared.ts";
import {
  chosenTool,
  defaultMaxTokens,
  maxTokensAbove,
  mergeProviderOptions,
  thinkingBudget,
  unsupportedSetting,
  checkThinkingSampling,
} from "../request-settings.ts";
import { bareMediaType, checkImageType, isDataPart } from "../content-convert.ts";
import { fromBase64, type ContentPart } from "../../content-parts.ts";

/** Options that shape the request body (the adapter's other options only affect transport). */
export type AnthropicRequestOptions = {
  model: string;
  maxTokens?: number;
  temperature?: number;
  /** Extended thinking with this budget of tokens (`maxTokens` must be larger). */
  thinking?: false | { budgetTokens: number };
  /** Prompt caching breakpoints on the tools, the system prompt and the growing conversation (default true). */
  cache?: boolean;
  stream?: boolean;
  /** The call's settings (`context.settings`), over the options above. */
  settings?: ModelSettings | undefined;
};

type Block = Record<string, unknown>;
type AnthropicMessage = { role: "user" | "assistant"; content: Block[] };
export type AnthropicRequest = {
  model: string;
  max_tokens: number;
  messages: AnthropicMessage[];
  system?: Block[];
  tools?: Block[];
  temperature?: number;
  top_p?: number;
  stop_sequences?: string[];
  tool_choice?: { type: "auto" | "any" | "none" } | { type: "tool"; name: string };
  thinking?: { type: "enabled"; budget_tokens: number };
  stream?: boolean;
};

export const anthropicProvider = "anthropic";

/**
 * The Messages API request for a session: system messages become `system`; runs of
 * thinking/assistant/tool_call become one assistant message (thinking first); runs of tool results
 * become one user message, results first. Thinking goes back only with its own valid signature.
 */
export function toAnthropicRequest(
  session: Session,
  tools: readonly ToolSchema[],
  options: AnthropicRequestOptions,
): AnthropicRequest {
  const system: Block[] = [];
  const messages: AnthropicMessage[] = [];
  for (const message of pairToolMessages(session.messages)) {
    const converted = toBlocks(message);
    if (converted === undefined) continue;
    if (converted.role === "system") {
      system.push(...converted.blocks);
      continue;
    }
    const last = messages[messages.length - 1];
    if (last?.role === converted.role) last.content.push(...converted.blocks);
    else messages.push({ role: converted.role, content: [...converted.blocks] });
  }
  for (const message of messages) {
    // Tool results must open the user message that follows the tool use; reasoning must open the assistant one.
    message.content.sort((a, b) => rank(b) - rank(a));
  }
  const settings = options.settings ?? {};
  const cache = cacheMarkOf(options, settings);
  const request = requestEnvelope(system, tools, options, settings, messages, cache);
  if (cache !== undefined) {
    // The last message, so the cached prefix advances through a tool loop; and the message that
    // ended the previous request (two back: an answer and its results came since), so a turn that
    // added more than the 20 blocks the API looks back still reads what that request wrote.
    // With the tools and the system prompt: four breakpoints, the API's limit.
    for (const back of [1, 3]) {
      const message = messages[messages.length - back];
      markCacheable(message?.content[message.content.length - 1], cache);
    }
  }
  return mergeProviderOptions(request, settings.providerOptions);
}

type CacheMark = { type: "ephemeral"; ttl?: "1h" };

function cacheMarkOf(options: AnthropicRequestOptions, settings: ModelSettings): CacheMark | undefined {
  if (options.cache === false || settings.cache?.breakpoints === "off") return undefined;
  return settings.cache?.retention === "long" ? { type: "ephemeral", ttl: "1h" } : { type: "ephemeral" };
}

type Converted = { role: "user" | "assistant" | "system"; blocks: Block[] };

// One session message as Messages API blocks (undefined: nothing to send).
function toBlocks(message: Message): Converted | undefined {
  if ("role" in message) {
    if (message.role === "system") return { role: "system", blocks: [{ type: "text", text: message.content }] };
    if (message.role === "user" && typeof message.content !== "string") {
      const blocks = partBlocks(message.content, "a user message");
      return blocks.length === 0 ? undefined : { role: "user", blocks };
    }
    const text = message.content as string;
    return text === "" ? undefined : { role: message.role, blocks: [{ type: "text", text }] };
  }
  if (message.type === "thinking") {
    if (!isOwnSignedThinking(message, anthropicProvider, true)) return undefined;
    return {
      role: "assistant",
      blocks: [
        message.redacted === true
          ? { type: "redacted_thinking", data: message.signature }
          : { type: "thinking", thinking: message.content, signature: message.signature },
      ],
    };
  }
  if (message.type === "tool_call") {
    const input =
      typeof message.input === "object" && message.input !== null && !Array.isArray(message.input) ? message.input : {};
    return {
      role: "assistant",
      blocks: [{ type: "tool_use", id: safeToolId(message.id), name: message.name, input }],
    };
  }
  const block: Block = {
    type: "tool_result",
    tool_use_id: safeToolId(message.id),
    // Images and documents go inside the result itself.
    content:
      message.content === undefined
        ? outputText(message.output)
        : partBlocks(message.content, `the result of tool call ${JSON.stringify(message.id)}`),
  };
  if (message.isError === true) block.is_error = true;
  return { role: "user", blocks: [block] };
}

// Content parts as text, image and document blocks; an empty text part is left out (the API refuses it).
function partBlocks(parts: readonly ContentPart[], where: string): Block[] {
  const blocks: Block[] = [];
  for (const part of parts) {
    if (part.type === "text") {
      if (part.text !== "") blocks.push({ type: "text", text: part.text });
      continue;
    }
    if (part.type === "image") {
      checkImageType(part, anthropicProvider, where);
      blocks.push({
        type: "image",
        source: isDataPart(part)
          ? { type: "base64", media_type: bareMediaType(part.mediaType), data: part.data }
          : { type: "url", url: part.url },
      });
      continue;
    }
    blocks.push(documentBlock(part, where));
  }
  return blocks;
}

// PDFs by data or URL, plain text as text; other documents are refused, naming the part.
function documentBlock(part: Extract<ContentPart, { type: "file" }>, where: string): Block {
  const mediaType = bareMediaType(part.mediaType);
  let source: Block;
  if (!isDataPart(part) && (mediaType === undefined || mediaType === "application/pdf")) {
    source = { type: "url", url: part.url };
  } else if (isDataPart(part) && mediaType === "application/pdf") {
    source = { type: "base64", media_type: "application/pdf", data: part.data };
  } else if (isDataPart(part) && mediaType === "text/plain") {
    source = { type: "text", media_type: "text/plain", data: new TextDecoder().decode(fromBase64(part.data)) };
  } else {
    throw unsupportedPartError(
      anthropicProvider,
      part,
      where,
      "the Messages API takes documents as PDF (data or URL) or plain text",
    );
  }
  const block: Block = { type: "document", source };
  if (part.filename !== undefined) block.title = part.filename;
  return block;
}

function requestEnvelope(
  system: Block[],
  tools: readonly ToolSchema[],
  options: AnthropicRequestOptions,
  settings: ModelSettings,
  messages: AnthropicMessage[],
  cache: CacheMark | undefined,
): AnthropicRequest {
  const maxTokens = settings.maxTokens ?? options.maxTokens;
  const request: AnthropicRequest = {
    model: settings.model ?? options.model,
    max_tokens: maxTokens ?? defaultMaxTokens,
    messages,
  };
  if (system.length > 0) request.system = [...system];
  if (tools.length > 0) request.tools = tools.map((schema) => ({ ...schema }));
  const temperature = settings.temperature ?? options.temperature;
  if (temperature !== undefined) request.temperature = temperature;
  if (settings.topP !== undefined) request.top_p = settings.topP;
  if (settings.stopSequences !== undefined) request.stop_sequences = [...settings.stopSequences];
  const budget = thinkingBudget(anthropicProvider, options.thinking, settings);
  checkThinkingSampling(anthropicProvider, budget, temperature, settings.topP);
  if (budget !== undefined) {
    request.thinking = { type: "enabled", budget_tokens: budget };
    request.max_tokens = maxTokensAbove(anthropicProvider, budget, maxTokens);
  }
  const choice = anthropicToolChoice(settings, tools, budget !== undefined);
  if (choice !== undefined) request.tool_choice = choice;
  if (options.stream !== false) request.stream = true;
  // Caching reads the longest cached prefix: tools, then system, then messages. A breakpoint after
  // the tools, after the system prompt and on the last message (set by the callers) makes each
  // turn reuse the previous turn's prefix; the API looks back for earlier breakpoints by itself.
  if (cache !== undefined) {
    // Copies: the blocks may be shared (the body cache keeps them across calls).
    if (request.tools !== undefined)
      request.tools[request.tools.length - 1] = withCacheControl(request.tools[request.tools.length - 1]!, cache);
    if (request.system !== undefined)
      request.system[request.system.length - 1] = withCacheControl(request.system[request.system.length - 1]!, cache);
  }
  return request;
}

function anthropicToolChoice(
  settings: ModelSettings,
  tools: readonly ToolSchema[],
  thinking: boolean,
): AnthropicRequest["tool_choice"] {
  const choice = settings.toolChoice;
  if (choice === undefined) return undefined;
  if (tools.length === 0) {
    if (choice === "auto" || choice === "none") return undefined;
    throw unsupportedSetting(anthropicProvider, "toolChoice", "this call offers no tools to call");
  }
  if (choice === "auto" || choice === "none") return { type: choice };
  // The API refuses a forced tool call together with extended thinking.
  if (thinking)
    throw unsupportedSetting(anthropicProvider, "toolChoice", "Claude cannot be made to call a tool while it thinks");
  if (choice === "required") return { type: "any" };
  return {
    type: "tool",
    name: chosenTool(
      anthropicProvider,
      choice,
      tools.map((schema) => schema.name),
    )!,
  };
}

// Reasoning opens an assistant message and tool results open a user message: rank them first.
function rank(block: Block): number {
  return block.type === "thinking" || block.type === "redacted_thinking" || block.type === "tool_result" ? 1 : 0;
}

function isCacheable(block: Block | undefined): block is Block {
  return block !== undefined && block.type !== "thinking" && block.type !== "redacted_thinking";
}

function withCacheControl(block: Block, cache: CacheMark): Block {
  return { ...block, cache_control: { ...cache } };
}

function markCacheable(block: Block | undefined, cache: CacheMark): void {
  if (isCacheable(block)) block.cache_control = { ...cache };
}

/** A non-streaming Messages API response as generic messages, `stopReason`/`usage` on the last. */
export function fromAnthropicResponse(body: AnthropicResponse, asked?: string): ModelMessage[] {
  const messages: ModelMessage[] = [];
  for (const block of body.content ?? []) {
    const message = fromContentBlock(block);
    if (message !== undefined) messages.push(message);
  }
  if (messages.length === 0) messages.push({ role: "assistant", content: "" });
  const last = messages[messages.length - 1]!;
  Object.assign(
    last,
    stopFieldsOf(body.stop_reason, body.usage, body.stop_details),
    answeredBy(body.model, body.id, asked),
  );
  return messages;
}

export type AnthropicContentBlock = {
  type: string;
  text?: string;
  thinking?: string;
  signature?: string;
  data?: string;
  id?: string;
  name?: string;
  input?: unknown;
};
export type AnthropicUsage = {
  input_tokens?: number;
  output_tokens?: number;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  /** `thinking_tokens`: the part of `output_tokens` spent thinking. */
  output_tokens_details?: { thinking_tokens?: number | null } | null;
};
/** `stop_details` of a response: a refusal's `category` and `explanation` (fields may be null). */
export type AnthropicStopDetails = { type?: string | null; category?: string | null; explanation?: string | null };
export type AnthropicResponse = {
  id?: string;
  model?: string;
  content?: AnthropicContentBlock[];
  stop_reason?: string | null;
  stop_details?: AnthropicStopDetails | null;
  usage?: AnthropicUsage;
};

/**
 * One content block as a generic message (`undefined` for empty text and server-side blocks). A
 * tool input nested too deep or too large becomes `{}` with `inputError` (see `readToolInput`).
 */
export function fromContentBlock(block: AnthropicContentBlock): ModelMessage | undefined {
  if (block.type === "text")
    return block.text === undefined || block.text === "" ? undefined : { role: "assistant", content: block.text };
  if (block.type === "thinking") {
    const message: ModelMessage = { type: "thinking", content: block.thinking ?? "", provider: anthropicProvider };
    if (block.signature !== undefined && block.signature !== "") message.signature = block.signature;
    return message;
  }
  if (block.type === "redacted_thinking") {
    return { type: "thinking", content: "", signature: block.data ?? "", redacted: true, provider: anthropicProvider };
  }
  if (block.type === "tool_use") {
    return {
      type: "tool_call",
      id: block.id ?? "",
      name: block.name ?? "",
      ...refusedInput(readToolInput(block.input)),
    };
  }
  return undefined;
}

/** Normalized stop reason (see `normalizeStopReason` for `rawStopReason`), a refusal's details, and usage in the generic shape. */
export function stopFieldsOf(
  rawStopReason: string | null | undefined,
  usage: AnthropicUsage | undefined,
  stopDetails?: AnthropicStopDetails | null,
): TurnEndFields {
  const fields: TurnEndFields = normalizeStopReason(rawStopReason, stopReasons);
  const details = stopDetailsOf(stopDetails);
  if (details !== undefined) fields.stopDetails = details;
  // Anthropic's input_tokens excludes cached tokens; the generic count includes them. Its
  // output_tokens includes thinking, as the generic count does.
  if (usage !== undefined) {
    usage = tokenCounts(usage);
    fields.usage = usageWithCache(
      usage.input_tokens ?? 0,
      usage.output_tokens ?? 0,
      usage.cache_read_input_tokens ?? 0,
      usage.cache_creation_input_tokens ?? 0,
    );
    const thinking = usage.output_tokens_details?.thinking_tokens ?? 0;
    if (thinking > 0) fields.usage.reasoningTokens = thinking;
  }
  return fields;
}

function stopDetailsOf(details: AnthropicStopDetails | null | undefined): StopDetails | undefined {
  if (details === null || details === undefined || typeof details !== "object") return undefined;
  const result: StopDetails = {};
  if (typeof details.type === "string") result.type = details.type;
  if (typeof details.category === "string") result.category = details.category;
  if (typeof details.explanation === "string") result.explanation = details.explanation;
  return Object.keys(result).length > 0 ? result : undefined;
}

const stopReasons: StopReasonNames = {
  plain: {
    end_turn: "end_turn",
    tool_use: "tool_use",
    max_tokens: "max_tokens",
    stop_sequence: "stop_sequence",
    pause_turn: "pause_turn",
    refusal: "refusal",
  },
  aliases: { model_context_window_exceeded: "max_tokens" },
};
