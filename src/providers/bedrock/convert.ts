import { tokenCounts } from "../usage.ts";
import type { JsonObject, ModelMessage, Session, StopReason, ToolResultMessage, Usage } from "../../session.ts";
import type { ToolSchema } from "../../tools/tool.ts";
import {
  isOwnSignedThinking,
  normalizeStopReason,
  pairToolMessages,
  readToolInput,
  refusedInput,
  safeToolId,
  toolUseWhenCalls,
  usageWithCache,
  type StopReasonNames,
  textOnlyContent,
  resultText,
} from "../convert-shared.ts";

/** Options that shape the request body (the model goes in the URL; the adapter's other options only affect transport). */
export type BedrockRequestOptions = {
  maxTokens?: number;
  temperature?: number;
  /**
   * Extended thinking with this budget of tokens, in the form Anthropic models on Bedrock take.
   * Other models' reasoning switches go in `additionalModelRequestFields`.
   */
  thinking?: false | { budgetTokens: number };
  /** Cache points after the tools, the system prompt and the last message (default false: not every model accepts them). */
  cache?: boolean;
  /** Model-specific request fields, sent as they are (`thinking` is added to them). */
  additionalModelRequestFields?: JsonObject;
};

type Block = Record<string, unknown>;
type BedrockMessage = { role: "user" | "assistant"; content: Block[] };

/** The body of a Converse or ConverseStream request (the same for both). */
export type BedrockRequest = {
  messages: BedrockMessage[];
  system?: Block[];
  inferenceConfig?: { maxTokens?: number; temperature?: number };
  toolConfig?: { tools: Block[] };
  additionalModelRequestFields?: JsonObject;
};

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
  for (const message of pairToolMessages(session.messages)) {
    if ("role" in message) {
      const text =
        message.role === "user" ? textOnlyContent(message.content, bedrockProvider, "a user message") : message.content;
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
      push("user", toolResultBlock(message));
    }
  }
  const messages = answerEveryToolUse(merged);
  // Reasoning must open the assistant message it belongs to.
  for (const message of messages)
    if (message.role === "assistant")
      message.content.sort((a, b) => Number("reasoningContent" in b) - Number("reasoningContent" in a));

  const request: BedrockRequest = { messages };
  if (system.length > 0) request.system = system;
  const inferenceConfig: { maxTokens?: number; temperature?: number } = {};
  if (options.maxTokens !== undefined) inferenceConfig.maxTokens = options.maxTokens;
  if (options.temperature !== undefined) inferenceConfig.temperature = options.temperature;
  if (Object.keys(inferenceConfig).length > 0) request.inferenceConfig = inferenceConfig;
  const toolSpecs = tools.length > 0 ? tools.map(toolSpec) : historyToolSpecs(messages);
  if (toolSpecs.length > 0) request.toolConfig = { tools: toolSpecs };
  const additional: JsonObject = { ...options.additionalModelRequestFields };
  if (options.thinking !== undefined && options.thinking !== false)
    additional.thinking = { type: "enabled", budget_tokens: options.thinking.budgetTokens };
  if (Object.keys(additional).length > 0) request.additionalModelRequestFields = additional;
  if (options.cache === true) addCachePoints(request);
  return request;
}

function jsonObject(value: unknown): JsonObject | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as JsonObject) : undefined;
}

// An object goes as a `json` block, which models read as structured data; anything else as text.
// Bedrock refuses a blank text block, and a result with none at all when its status is error.
function toolResultBlock(message: ToolResultMessage): Block {
  const object = jsonObject(message.output);
  const text = resultText(message, bedrockProvider);
  const content = object !== undefined ? [{ json: object }] : [{ text: text.trim() === "" ? "(no output)" : text }];
  const result: Block = { toolUseId: safeToolId(message.id, 64), content };
  if (message.isError === true) result.status = "error";
  return { toolResult: result };
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
// each, and on the last message, lets each turn reuse the previous turn's prefix.
function addCachePoints(request: BedrockRequest): void {
  const cachePoint = (): Block => ({ cachePoint: { type: "default" } });
  request.toolConfig?.tools.push(cachePoint());
  request.system?.push(cachePoint());
  request.messages[request.messages.length - 1]?.content.push(cachePoint());
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
export function fromBedrockResponse(body: BedrockResponse): ModelMessage[] {
  const messages: ModelMessage[] = [];
  for (const block of body.output?.message?.content ?? []) {
    const message = fromContentBlock(block);
    if (message !== undefined) messages.push(message);
  }
  const hasToolCalls = messages.some((message) => "type" in message && message.type === "tool_call");
  if (messages.length === 0) messages.push({ role: "assistant", content: "" });
  Object.assign(messages[messages.length - 1]!, stopFieldsOf(body.stopReason, body.usage, hasToolCalls));
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
