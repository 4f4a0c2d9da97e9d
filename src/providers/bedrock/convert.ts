import { tokenCounts } from "../usage.ts";
import type { JsonObject, ModelMessage, Session, StopReason, ToolResultMessage, Usage } from "../../session.ts";
import type { ToolSchema } from "../../shared/tool-schema.ts";
import {
  isOwnSignedThinking,
  normalizeStopReason,
  pairToolMessages,
  readToolInput,
  refusedInput,
  safeToolId,
  toolUseWhenCalls,
  usageWithCache,
  answeredBy,
  type StopReasonNames,
  outputText,
  unsupportedPartError,
} from "../convert-shared.ts";
import type { ModelSettings } from "../../model/model-settings.ts";
import {
  chosenTool,
  maxTokensAbove,
  mergeProviderOptions,
  thinkingBudget,
  unsupportedSetting,
  checkThinkingSampling,
} from "../request-settings.ts";
import { bareMediaType, checkImageType, isDataPart, urlNotDownloadedError } from "../content-convert.ts";
import type { ContentPart } from "../../content-parts.ts";

/** Options that shape the request body (the model goes in the URL; the adapter's other options only affect transport). */
export type BedrockRequestOptions = {
  maxTokens?: number;
  temperature?: number;
  /**
   * Extended thinking with this budget of tokens, in the form Anthropic models on Bedrock take.
   * Other models' reasoning switches go in `additionalModelRequestFields`.
   */
  thinking?: false | { budgetTokens: number };
  /**
   * Cache points after the tools, the system prompt and the last message. Default: on for Claude
   * models (a model id naming `anthropic.claude`), off for others (not every model accepts them).
   */
  cache?: boolean;
  /** The model id (it goes in the URL): decides whether the request is a Claude request. */
  model?: string;
  /** The call's settings (`context.settings`), over the options above. */
  settings?: ModelSettings | undefined;
  /** Model-specific request fields, sent as they are (`thinking` is added to them). */
  additionalModelRequestFields?: JsonObject;
};

type Block = Record<string, unknown>;
type BedrockMessage = { role: "user" | "assistant"; content: Block[] };

/** The body of a Converse or ConverseStream request (the same for both). */
export type BedrockRequest = {
  messages: BedrockMessage[];
  system?: Block[];
  inferenceConfig?: InferenceConfig;
  toolConfig?: { tools: Block[]; toolChoice?: JsonObject };
  additionalModelRequestFields?: JsonObject;
};

type InferenceConfig = { maxTokens?: number; temperature?: number; topP?: number; stopSequences?: string[] };

export const bedrockProvider = "bedrock";

/**
 * The Converse request for a session. System messages become `system`; the conversation strictly
 * alternates user and assistant (consecutive messages of one role are merged, blank text is left
 * out, as Bedrock refuses it); each assistant message's tool uses are answered in the next user
 * message, one result per use, in call order, before anything else in it. Reasoning goes back
 * only with a Bedrock signature; tool-call ids are normalized with `safeToolId`, identically on
 * both sides. Blobs (redacted reasoning) are base64 strings, as in the HTTP API; an AWS SDK client
 * takes them as bytes.
 */
export function toBedrockRequest(
  session: Session,
  tools: readonly ToolSchema[],
  options: BedrockRequestOptions = {},
): BedrockRequest {
  const system: Block[] = [];
  const merged: BedrockMessage[] = [];
  const push = (role: "user" | "assistant", block: Block): void => {
    const last = merged[merged.length - 1];
    if (last?.role === role) last.content.push(block);
    else merged.push({ role, content: [block] });
  };
  // Document names must be unique within a request.
  const documentNames = new Set<string>();
  for (const message of pairToolMessages(session.messages)) {
    if ("role" in message && message.role === "user" && typeof message.content !== "string") {
      for (const block of converseBlocks(message.content, "a user message", documentNames)) push("user", block);
      continue;
    }
    if ("role" in message) {
      const text = message.content as string;
      if (text.trim() === "") continue;
      if (message.role === "system") system.push({ text });
      else push(message.role, { text });
      continue;
    }
    if (message.type === "thinking") {
      if (!isOwnSignedThinking(message, bedrockProvider)) continue;
      push("assistant", {
        reasoningContent:
          message.redacted === true
            ? { redactedContent: message.signature }
            : { reasoningText: { text: message.content, signature: message.signature } },
      });
    } else if (message.type === "tool_call") {
      push("assistant", {
        toolUse: { toolUseId: safeToolId(message.id, 64), name: message.name, input: jsonObject(message.input) ?? {} },
      });
    } else {
      push("user", toolResultBlock(message, documentNames));
    }
  }
  const messages = answerEveryToolUse(merged);
  // Reasoning must open the assistant message it belongs to.
  for (const message of messages)
    if (message.role === "assistant")
      message.content.sort((a, b) => Number("reasoningContent" in b) - Number("reasoningContent" in a));

  const settings = options.settings ?? {};
  const claude = isClaude(settings.model ?? options.model);
  const request: BedrockRequest = { messages };
  if (system.length > 0) request.system = system;
  const additional: JsonObject = { ...options.additionalModelRequestFields };
  const inferenceConfig = inferenceConfigOf(options, settings, claude, additional);
  if (Object.keys(inferenceConfig).length > 0) request.inferenceConfig = inferenceConfig;
  const toolConfig = toolConfigOf(tools, messages, settings);
  // Claude refuses a forced tool call together with extended thinking, on Bedrock as on its own API.
  const forced = toolConfig?.toolChoice !== undefined && !("auto" in toolConfig.toolChoice);
  if (forced && additional.thinking !== undefined)
    throw unsupportedSetting(bedrockProvider, "toolChoice", "Claude cannot be made to call a tool while it thinks");
  if (toolConfig !== undefined) request.toolConfig = toolConfig;
  if (Object.keys(additional).length > 0) request.additionalModelRequestFields = additional;
  const cache = options.cache ?? claude;
  if (cache && settings.cache?.breakpoints !== "off") addCachePoints(request, settings.cache?.retention === "long");
  return mergeProviderOptions(request, settings.providerOptions);
}

// Bedrock serves Claude under ids like `anthropic.claude-sonnet-4-5-…`, with a region prefix.
function isClaude(model: string | undefined): boolean {
  return model !== undefined && /anthropic\.claude/.test(model);
}

// `thinking` goes to Claude in `additionalModelRequestFields`, with maxTokens above its budget.
function inferenceConfigOf(
  options: BedrockRequestOptions,
  settings: ModelSettings,
  claude: boolean,
  additional: JsonObject,
): InferenceConfig {
  const config: InferenceConfig = {};
  const maxTokens = settings.maxTokens ?? options.maxTokens;
  if (maxTokens !== undefined) config.maxTokens = maxTokens;
  const temperature = settings.temperature ?? options.temperature;
  if (temperature !== undefined) config.temperature = temperature;
  if (settings.topP !== undefined) config.topP = settings.topP;
  if (settings.stopSequences !== undefined) config.stopSequences = [...settings.stopSequences];
  if (settings.reasoning !== undefined && !claude)
    throw unsupportedSetting(
      bedrockProvider,
      "reasoning",
      "only Claude's thinking is modelled on Bedrock; send another model's switch in providerOptions.additionalModelRequestFields",
    );
  const budget = thinkingBudget(bedrockProvider, options.thinking, settings);
  checkThinkingSampling(bedrockProvider, budget, temperature, settings.topP);
  if (budget !== undefined) {
    additional.thinking = { type: "enabled", budget_tokens: budget };
    config.maxTokens = maxTokensAbove(bedrockProvider, budget, maxTokens);
  }
  return config;
}

// Converse has no "none" choice: a call that may use no tool is sent none, which it accepts only
// while the history holds no tool blocks.
function toolConfigOf(
  tools: readonly ToolSchema[],
  messages: readonly BedrockMessage[],
  settings: ModelSettings,
): BedrockRequest["toolConfig"] {
  const choice = settings.toolChoice;
  const history = historyToolSpecs(messages);
  if (choice === "none") {
    if (history.length === 0) return undefined;
    throw unsupportedSetting(
      bedrockProvider,
      "toolChoice",
      'Converse has no "none" choice, and a history with tool calls must be sent with tools',
    );
  }
  const toolSpecs = tools.length > 0 ? tools.map(toolSpec) : history;
  if (toolSpecs.length === 0) {
    if (choice === undefined || choice === "auto") return undefined;
    throw unsupportedSetting(bedrockProvider, "toolChoice", "this call offers no tools to call");
  }
  const config: NonNullable<BedrockRequest["toolConfig"]> = { tools: toolSpecs };
  if (choice === "auto") config.toolChoice = { auto: {} };
  else if (choice === "required") config.toolChoice = { any: {} };
  else if (choice !== undefined)
    config.toolChoice = {
      tool: {
        name: chosenTool(
          bedrockProvider,
          choice,
          tools.map((schema) => schema.name),
        )!,
      },
    };
  return config;
}

function jsonObject(value: unknown): JsonObject | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as JsonObject) : undefined;
}

// An object goes as a `json` block, which models read as structured data; anything else as text.
// Bedrock refuses a blank text block, and a result with none at all when its status is error.
// Content parts go as text, image and document blocks.
function toolResultBlock(message: ToolResultMessage, documentNames: Set<string>): Block {
  const object = jsonObject(message.output);
  const text = outputText(message.output);
  const content =
    message.content !== undefined
      ? converseBlocks(message.content, `the result of tool call ${JSON.stringify(message.id)}`, documentNames)
      : object !== undefined
        ? [{ json: object }]
        : [{ text: text.trim() === "" ? "(no output)" : text }];
  if (content.length === 0) content.push({ text: "(no output)" });
  const result: Block = { toolUseId: safeToolId(message.id, 64), content };
  if (message.isError === true) result.status = "error";
  return { toolResult: result };
}

// Content parts as Converse blocks: bytes as base64 (the HTTP API's form of a blob), blank text left out.
function converseBlocks(parts: readonly ContentPart[], where: string, documentNames: Set<string>): Block[] {
  const blocks: Block[] = [];
  for (const part of parts) {
    if (part.type === "text") {
      if (part.text.trim() !== "") blocks.push({ text: part.text });
      continue;
    }
    // Converse takes bytes or an S3 location, never an https URL.
    if (!isDataPart(part)) throw urlNotDownloadedError(bedrockProvider, part, where);
    const mediaType = bareMediaType(part.mediaType) ?? "";
    if (part.type === "image") {
      checkImageType(part, bedrockProvider, where);
      blocks.push({ image: { format: mediaType.slice("image/".length), source: { bytes: part.data } } });
      continue;
    }
    const format = documentFormats[mediaType];
    if (format === undefined) {
      throw unsupportedPartError(
        bedrockProvider,
        part,
        where,
        `Converse takes documents as ${Object.keys(documentFormats).join(", ")}`,
      );
    }
    const name = documentName(part.filename, documentNames);
    blocks.push({ document: { format, name, source: { bytes: part.data } } });
  }
  return blocks;
}

// The document formats Converse reads, by media type.
const documentFormats: Record<string, string> = {
  "application/pdf": "pdf",
  "text/csv": "csv",
  "application/msword": "doc",
  "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
  "application/vnd.ms-excel": "xls",
  "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
  "text/html": "html",
  "text/plain": "txt",
  "text/markdown": "md",
};

/**
 * A document name Converse accepts, unique in the request: only alphanumerics, single spaces,
 * hyphens, parentheses and square brackets (`report.pdf` is refused for its dot), so the extension
 * goes and every other character becomes a space; a name already taken gets ` (2)`, ` (3)`….
 */
export function documentName(filename: string | undefined, taken: Set<string>): string {
  const stem = (filename ?? "").replace(/\.[A-Za-z0-9]{1,5}$/, "");
  const cleaned = stem
    .replace(/[^A-Za-z0-9 \-()[\]]/g, " ")
    .replace(/\s+/g, " ")
    .trim()
    .slice(0, 100)
    .trim();
  const base = cleaned === "" ? "document" : cleaned;
  let name = base;
  for (let suffix = 2; taken.has(name); suffix++) name = `${base} (${suffix})`;
  taken.add(name);
  return name;
}

const missingResult = "Error: no result was recorded for this tool call.";

/**
 * Bedrock checks each user message against the assistant message before it: exactly one result
 * per tool use, none for another turn's calls. `pairToolMessages` repairs the session as a whole;
 * this enforces the rule turn by turn, in the wire messages, and puts the results in call order.
 */
function answerEveryToolUse(merged: readonly BedrockMessage[]): BedrockMessage[] {
  const messages: BedrockMessage[] = [];
  let uses: string[] = [];
  for (const message of merged) {
    if (message.role === "assistant") {
      if (uses.length > 0) messages.push({ role: "user", content: uses.map(errorResult) });
      const last = messages[messages.length - 1];
      // A dropped user message (only stray results) leaves two assistant messages side by side.
      if (last?.role === "assistant") last.content.push(...message.content);
      else messages.push(message);
      uses = toolUseIds(messages[messages.length - 1]!);
      continue;
    }
    const results = new Map<string, Block>();
    const others: Block[] = [];
    for (const block of message.content) {
      const id = (block.toolResult as { toolUseId?: string } | undefined)?.toolUseId;
      if (id === undefined) others.push(block);
      else if (uses.includes(id) && !results.has(id)) results.set(id, block);
    }
    const content = [...uses.map((id) => results.get(id) ?? errorResult(id)), ...others];
    uses = [];
    if (content.length > 0) messages.push({ role: "user", content });
  }
  if (uses.length > 0) messages.push({ role: "user", content: uses.map(errorResult) });
  return messages;
}

function toolUseIds(message: BedrockMessage): string[] {
  return message.content.flatMap((block) => {
    const id = (block.toolUse as { toolUseId?: string } | undefined)?.toolUseId;
    return id === undefined ? [] : [id];
  });
}

function errorResult(id: string): Block {
  return { toolResult: { toolUseId: id, content: [{ text: missingResult }], status: "error" } };
}

function toolSpec(schema: ToolSchema): Block {
  const spec: Block = { name: schema.name, inputSchema: { json: schema.input_schema } };
  if (schema.description !== "") spec.description = schema.description;
  return { toolSpec: spec };
}

// Bedrock refuses toolUse and toolResult blocks in a request without a toolConfig (a session that
// used tools, continued without them): declare the tools the history names, so it stays valid.
function historyToolSpecs(messages: readonly BedrockMessage[]): Block[] {
  const names = new Set<string>();
  for (const message of messages)
    for (const block of message.content) {
      const name = (block.toolUse as { name?: string } | undefined)?.name;
      if (name !== undefined) names.add(name);
    }
  return [...names].map((name) => ({
    toolSpec: {
      name,
      description: "Used earlier in this conversation; not available now.",
      inputSchema: { json: { type: "object" } },
    },
  }));
}

// Caching reads the longest cached prefix: tools, then system, then messages. A cache point after
// each, and on the last message, lets each turn reuse the previous turn's prefix; one more on the
// message that ended the previous request (two back: an answer and its results came since), so a
// turn that added more blocks than the cache looks back still reads what that request wrote. Four
// in all, the limit.
function addCachePoints(request: BedrockRequest, long: boolean): void {
  const cachePoint = (): Block => ({ cachePoint: long ? { type: "default", ttl: "1h" } : { type: "default" } });
  request.toolConfig?.tools.push(cachePoint());
  request.system?.push(cachePoint());
  const { messages } = request;
  for (const back of [3, 1]) messages[messages.length - back]?.content.push(cachePoint());
}

/** A content block of a Converse response (the fields this adapter reads). */
export type BedrockContentBlock = {
  text?: string;
  toolUse?: { toolUseId?: string; name?: string; input?: unknown };
  reasoningContent?: { reasoningText?: { text?: string; signature?: string }; redactedContent?: string | Uint8Array };
};
/** Token counts as Bedrock reports them: `inputTokens` does not include the cached ones. */
export type BedrockUsage = {
  inputTokens?: number;
  outputTokens?: number;
  cacheReadInputTokens?: number | null;
  cacheWriteInputTokens?: number | null;
};
export type BedrockResponse = {
  output?: { message?: { role?: string; content?: BedrockContentBlock[] } };
  stopReason?: string;
  usage?: BedrockUsage;
};

/** A Converse response as generic messages, `stopReason`/`usage` on the last. */
export function fromBedrockResponse(body: BedrockResponse, model?: string): ModelMessage[] {
  const messages: ModelMessage[] = [];
  for (const block of body.output?.message?.content ?? []) {
    const message = fromContentBlock(block);
    if (message !== undefined) messages.push(message);
  }
  const hasToolCalls = messages.some((message) => "type" in message && message.type === "tool_call");
  if (messages.length === 0) messages.push({ role: "assistant", content: "" });
  Object.assign(
    messages[messages.length - 1]!,
    stopFieldsOf(body.stopReason, body.usage, hasToolCalls),
    answeredBy(undefined, undefined, model),
  );
  return messages;
}

/**
 * One content block as a generic message (`undefined` for empty text and blocks the session has no
 * kind for). A tool input nested too deep or too large becomes `{}` with `inputError`.
 */
export function fromContentBlock(block: BedrockContentBlock): ModelMessage | undefined {
  if (block.text !== undefined) return block.text === "" ? undefined : { role: "assistant", content: block.text };
  if (block.toolUse !== undefined) {
    return {
      type: "tool_call",
      id: block.toolUse.toolUseId ?? "",
      name: block.toolUse.name ?? "",
      ...refusedInput(readToolInput(block.toolUse.input)),
    };
  }
  const reasoning = block.reasoningContent;
  if (reasoning?.redactedContent !== undefined) {
    const data =
      typeof reasoning.redactedContent === "string" ? reasoning.redactedContent : base64(reasoning.redactedContent);
    return { type: "thinking", content: "", signature: data, redacted: true, provider: bedrockProvider };
  }
  if (reasoning?.reasoningText !== undefined) {
    const message: ModelMessage = {
      type: "thinking",
      content: reasoning.reasoningText.text ?? "",
      provider: bedrockProvider,
    };
    if (reasoning.reasoningText.signature !== undefined && reasoning.reasoningText.signature !== "")
      message.signature = reasoning.reasoningText.signature;
    return message;
  }
  return undefined;
}

function base64(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/**
 * Normalized stop reason, the raw one when it differs, and usage in the generic shape. Some models
 * on Bedrock say `end_turn` while asking for tools: with tool calls, that is `tool_use`.
 */
export function stopFieldsOf(
  rawStopReason: string | undefined,
  usage: BedrockUsage | undefined,
  hasToolCalls: boolean,
): { stopReason?: StopReason; rawStopReason?: string; usage?: Usage } {
  const fields: { stopReason?: StopReason; rawStopReason?: string; usage?: Usage } = normalizeStopReason(
    rawStopReason,
    stopReasons,
    toolUseWhenCalls(hasToolCalls),
  );
  // Bedrock's inputTokens excludes cached tokens; the generic count includes them.
  if (usage !== undefined) {
    usage = tokenCounts(usage);
    fields.usage = usageWithCache(
      usage.inputTokens ?? 0,
      usage.outputTokens ?? 0,
      usage.cacheReadInputTokens ?? 0,
      usage.cacheWriteInputTokens ?? 0,
    );
  }
  return fields;
}

const stopReasons: StopReasonNames = {
  plain: { end_turn: "end_turn", tool_use: "tool_use", max_tokens: "max_tokens", stop_sequence: "stop_sequence" },
  // Two kinds of filter, and a limit that is not max_tokens: the normalized reason alone loses which.
  aliases: {
    guardrail_intervened: "content_filter",
    content_filtered: "content_filter",
    model_context_window_exceeded: "max_tokens",
  },
};
