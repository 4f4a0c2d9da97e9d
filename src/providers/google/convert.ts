import { tokenCounts } from "../usage.ts";
import { ProviderError } from "../../errors.ts";
import type {
  AssistantMessage,
  JsonObject,
  ModelMessage,
  Session,
  ThinkingMessage,
  ToolCallMessage,
  ToolResultMessage,
  TurnEndFields,
  Usage,
} from "../../session.ts";
import { outputInstruction } from "../../model/output-instruction.ts";
import type { ToolSchema } from "../../shared/tool-schema.ts";
import {
  isOwnSignedThinking,
  normalizeStopReason,
  pairToolMessages,
  readToolInput,
  refusedInput,
  toolUseWhenCalls,
  answeredBy,
  type StopReasonNames,
} from "../convert-shared.ts";
import type { ModelSettings } from "../../model/model-settings.ts";
import { chosenTool, mergeProviderOptions, unsupportedSetting } from "../request-settings.ts";
import {
  bareMediaType,
  checkImageType,
  isDataPart,
  toolAttachmentsText,
  urlNotDownloadedError,
} from "../content-convert.ts";
import type { ContentPart } from "../../content-parts.ts";

/** Options that shape the request body (the adapter's other options only affect transport). */
export type GeminiRequestOptions = {
  /** e.g. `gemini-2.5-flash`; also decides whether unsigned calls get the validator-skip signature (Gemini 3 and later). */
  model: string;
  maxTokens?: number;
  temperature?: number;
  /**
   * `generationConfig.thinkingConfig`: a budget of reasoning tokens (`0` turns thinking off where
   * the model allows it), a level (Gemini 3), and whether to receive thought summaries, which
   * become `thinking` messages.
   */
  thinking?: { budgetTokens?: number; level?: "minimal" | "low" | "medium" | "high"; includeThoughts?: boolean };
  /**
   * The run's `output` schema (the loop's `context.output`; the factory passes it on). A request
   * without tools gets `generationConfig.responseMimeType: "application/json"` and
   * `responseJsonSchema: schema`. A request with tools gets the loop's instruction first in
   * `systemInstruction` instead: Gemini before 3 answers 400 to function calling together with a
   * JSON response MIME type, and a run's tools are sent on every turn, its final one included.
   */
  output?: { jsonSchema: JsonObject } | undefined;
  /** The call's settings (`context.settings`), over the options above. */
  settings?: ModelSettings | undefined;
};

export const googleProvider = "google";

/**
 * Fields this adapter adds to the messages it creates. `signature` is the `thoughtSignature` of the
 * part the message came from (text or functionCall), sent back on that same part and to Gemini
 * only; `provider: "google"` marks it (and every tool call Gemini made). `generatedId: true` marks
 * a tool call whose id Gemini did not give: that id is ours and is never sent to Gemini.
 */
export type GeminiMessageFields = { signature?: string; provider?: string; generatedId?: true };

export type GeminiPart = {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  functionCall?: { id?: string; name?: string; args?: unknown };
  functionResponse?: { id?: string; name: string; response: JsonObject; parts?: GeminiPart[] };
  inlineData?: { mimeType: string; data: string };
  fileData?: { mimeType?: string; fileUri: string };
  [other: string]: unknown;
};
export type GeminiContent = { role: "user" | "model"; parts: GeminiPart[] };
export type GeminiRequest = {
  contents: GeminiContent[];
  systemInstruction?: { parts: { text: string }[] };
  tools?: { functionDeclarations: { name: string; description: string; parametersJsonSchema: JsonObject }[] }[];
  toolConfig?: { functionCallingConfig: { mode: "AUTO" | "ANY" | "NONE"; allowedFunctionNames?: string[] } };
  generationConfig?: {
    maxOutputTokens?: number;
    temperature?: number;
    topP?: number;
    stopSequences?: string[];
    thinkingConfig?: { thinkingBudget?: number; thinkingLevel?: string; includeThoughts?: boolean };
    responseMimeType?: "application/json";
    responseJsonSchema?: JsonObject;
  };
};
export type GeminiUsage = {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  cachedContentTokenCount?: number;
  thoughtsTokenCount?: number;
  toolUsePromptTokenCount?: number;
  totalTokenCount?: number;
};
export type GeminiResponse = {
  candidates?: { content?: { role?: string; parts?: GeminiPart[] }; finishReason?: string; finishMessage?: string }[];
  promptFeedback?: { blockReason?: string; blockReasonMessage?: string };
  usageMetadata?: GeminiUsage;
  responseId?: string;
  /** The model that answered, e.g. `gemini-2.5-flash`. */
  modelVersion?: string;
};

/**
 * The generateContent request for a session: system messages become `systemInstruction`; a run
 * of thinking/assistant/tool_call messages becomes one `model` content, parts in session order;
 * a turn's tool results become one `user` content of `functionResponse` parts in call order
 * (user text after them). A tool result goes as `{ output }`, or `{ error }` when `isError`, the
 * keys Gemini documents. Signatures go back only on the part they came with, and only Gemini's own.
 */
export function toGeminiRequest(
  session: Session,
  tools: readonly ToolSchema[],
  options: GeminiRequestOptions,
): GeminiRequest {
  const output = options.output;
  const native = output !== undefined && tools.length === 0;
  const system: { text: string }[] =
    output !== undefined && !native ? [{ text: outputInstruction(output.jsonSchema) }] : [];
  const contents: GeminiContent[] = [];
  // A functionResponse must name its function, and results go in the order of their calls.
  const calls = new Map<string, { name: string; position: number; wireId: string | undefined }>();
  const responsePositions = new Map<GeminiPart, number>();
  const push = (role: GeminiContent["role"], part: GeminiPart): void => {
    const last = contents[contents.length - 1];
    if (last?.role === role) last.parts.push(part);
    else contents.push({ role, parts: [part] });
  };
  // Gemini before 3 takes a result's images and files in a user content right after the turn's
  // function responses; Gemini 3 takes them inside each functionResponse.
  const nestsParts = needsValidatorSkip(options.settings?.model ?? options.model);
  let attachments: GeminiPart[] = [];
  const flushAttachments = (): void => {
    if (attachments.length > 0) contents.push({ role: "user", parts: attachments });
    attachments = [];
  };
  for (const message of pairToolMessages(session.messages)) {
    if (!("type" in message && message.type === "tool_result")) flushAttachments();
    if ("role" in message) {
      if (message.role === "system") system.push({ text: message.content });
      else if (message.role === "user") {
        if (typeof message.content === "string") push("user", { text: message.content });
        else for (const part of geminiParts(message.content, "a user message")) push("user", part);
      } else {
        const signature = ownSignature(message);
        if (message.content !== "" || signature !== undefined)
          push("model", signed({ text: message.content }, signature));
      }
      continue;
    }
    if (message.type === "thinking") {
      // Gemini reads nothing from unsigned thought text, and a foreign or truncated one would be rejected.
      if (isOwnSignedThinking(message, googleProvider))
        push("model", { text: message.content, thought: true, thoughtSignature: message.signature! });
    } else if (message.type === "tool_call") {
      const own = message;
      const wireId =
        own.provider === googleProvider && own.generatedId !== true ? (message.wireId ?? message.id) : undefined;
      calls.set(message.id, { name: message.name, position: calls.size, wireId });
      const args =
        typeof message.input === "object" && message.input !== null && !Array.isArray(message.input)
          ? message.input
          : {};
      push(
        "model",
        signed(
          { functionCall: { ...(wireId === undefined ? {} : { id: wireId }), name: message.name, args } },
          ownSignature(message),
        ),
      );
    } else {
      const call = calls.get(message.id);
      const part = functionResponsePart(message, call, nestsParts, attachments);
      responsePositions.set(part, call?.position ?? calls.size);
      push("user", part);
    }
  }
  flushAttachments();
  for (const content of contents) {
    if (content.role === "user") orderResponses(content, responsePositions);
    else if (needsValidatorSkip(options.settings?.model ?? options.model)) addValidatorSkip(content);
  }
  const request: GeminiRequest = { contents };
  if (system.length > 0) request.systemInstruction = { parts: system };
  if (tools.length > 0) {
    request.tools = [
      {
        functionDeclarations: tools.map((schema) => ({
          name: schema.name,
          description: schema.description,
          parametersJsonSchema: schema.input_schema,
        })),
      },
    ];
  }
  const settings = options.settings ?? {};
  if (settings.cache?.retention === "long")
    throw unsupportedSetting(googleProvider, "cache.retention", "Gemini's implicit cache has no retention to choose");
  const toolConfig = geminiToolConfig(settings, tools);
  if (toolConfig !== undefined) request.toolConfig = toolConfig;
  const generationConfig = generationConfigOf(options, settings, native ? output.jsonSchema : undefined);
  if (generationConfig !== undefined) request.generationConfig = generationConfig;
  return mergeProviderOptions(request, settings.providerOptions);
}

function geminiToolConfig(settings: ModelSettings, tools: readonly ToolSchema[]): GeminiRequest["toolConfig"] {
  const choice = settings.toolChoice;
  if (choice === undefined || (tools.length === 0 && (choice === "auto" || choice === "none"))) return undefined;
  if (tools.length === 0) throw unsupportedSetting(googleProvider, "toolChoice", "this call offers no tools to call");
  if (choice === "auto") return { functionCallingConfig: { mode: "AUTO" } };
  if (choice === "none") return { functionCallingConfig: { mode: "NONE" } };
  if (choice === "required") return { functionCallingConfig: { mode: "ANY" } };
  const name = chosenTool(
    googleProvider,
    choice,
    tools.map((schema) => schema.name),
  )!;
  return { functionCallingConfig: { mode: "ANY", allowedFunctionNames: [name] } };
}

/**
 * Whether Gemini fetches a URL itself (`fileData`): only its own uploaded files (the Files API's
 * URIs) and YouTube videos. Any other URL part is downloaded by the adapter, or refused.
 */
export function geminiFetchesUrl(url: string): boolean {
  return /^https:\/\/(?:generativelanguage\.googleapis\.com\/|(?:www\.)?youtube\.com\/|youtu\.be\/)/.test(url);
}

// A tool result as a functionResponse part; its images and files nested in it (Gemini 3), or
// added to `attachments` for the user content after the turn's responses (earlier models).
function functionResponsePart(
  message: ToolResultMessage,
  call: { name: string; wireId: string | undefined } | undefined,
  nestsParts: boolean,
  attachments: GeminiPart[],
): GeminiPart {
  const response: JsonObject = message.isError === true ? { error: message.output } : { output: message.output };
  const functionResponse: NonNullable<GeminiPart["functionResponse"]> = {
    ...(call?.wireId === undefined ? {} : { id: call.wireId }),
    name: call?.name ?? "",
    response,
  };
  const media = geminiParts(
    (message.content ?? []).filter((content) => content.type !== "text"),
    `the result of tool call ${JSON.stringify(message.id)}`,
  );
  if (media.length > 0 && nestsParts) functionResponse.parts = media;
  else if (media.length > 0)
    attachments.push({ text: toolAttachmentsText(call?.wireId ?? message.id, call?.name) }, ...media);
  return { functionResponse };
}

// The image types Gemini documents.
const geminiImageTypes = ["image/png", "image/jpeg", "image/webp", "image/heic", "image/heif"];

// Content parts as Gemini parts: text, inline data, or a file URI Gemini can read.
function geminiParts(parts: readonly ContentPart[], where: string): GeminiPart[] {
  return parts.map((part): GeminiPart => {
    if (part.type === "text") return { text: part.text };
    checkImageType(part, googleProvider, where, geminiImageTypes);
    if (isDataPart(part)) return { inlineData: { mimeType: bareMediaType(part.mediaType)!, data: part.data } };
    if (!geminiFetchesUrl(part.url)) throw urlNotDownloadedError(googleProvider, part, where);
    const mediaType = bareMediaType(part.mediaType);
    return { fileData: mediaType === undefined ? { fileUri: part.url } : { mimeType: mediaType, fileUri: part.url } };
  });
}

function ownSignature(message: ModelMessage): string | undefined {
  const fields = message as ModelMessage & GeminiMessageFields & { compacted?: true };
  if (fields.provider !== googleProvider || fields.signature === undefined || fields.signature === "") return undefined;
  // A compacted call's arguments were cut: its signature no longer matches what it signed.
  return fields.compacted === true ? undefined : fields.signature;
}

function signed(part: GeminiPart, signature: string | undefined): GeminiPart {
  return signature === undefined ? part : { ...part, thoughtSignature: signature };
}

// The loop writes results in call order; a hand-edited session may not, and without ids Gemini
// pairs calls and responses by position. User text goes after the responses.
function orderResponses(content: GeminiContent, positions: ReadonlyMap<GeminiPart, number>): void {
  const ranked = content.parts.map((part, index) => ({
    part,
    index,
    rank: positions.get(part) ?? Number.POSITIVE_INFINITY,
  }));
  ranked.sort((a, b) => a.rank - b.rank || a.index - b.index);
  content.parts = ranked.map((entry) => entry.part);
}

// Gemini 3 answers 400 when the first functionCall of a model step has no signature: history it
// did not produce (another provider's calls, a compacted call) gets the skip value Google
// documents for that case. Gemini 1 and 2 neither need nor expect it.
function needsValidatorSkip(model: string): boolean {
  return !/gemini-[12](?:[.-]|$)/.test(model);
}

const validatorSkip = "skip_thought_signature_validator";

function addValidatorSkip(content: GeminiContent): void {
  const first = content.parts.find((part) => part.functionCall !== undefined);
  if (first !== undefined && first.thoughtSignature === undefined) first.thoughtSignature = validatorSkip;
}

function generationConfigOf(
  options: GeminiRequestOptions,
  settings: ModelSettings,
  outputSchema: JsonObject | undefined,
): GeminiRequest["generationConfig"] {
  const config: NonNullable<GeminiRequest["generationConfig"]> = {};
  const maxTokens = settings.maxTokens ?? options.maxTokens;
  if (maxTokens !== undefined) config.maxOutputTokens = maxTokens;
  const temperature = settings.temperature ?? options.temperature;
  if (temperature !== undefined) config.temperature = temperature;
  if (settings.topP !== undefined) config.topP = settings.topP;
  if (settings.stopSequences !== undefined) config.stopSequences = [...settings.stopSequences];
  // A level (Gemini 3) or a budget (Gemini 2.5) from the settings replaces the option's.
  const reasoning = settings.reasoning;
  const thinking =
    reasoning === undefined
      ? options.thinking
      : {
          ...options.thinking,
          ...(reasoning.budgetTokens === undefined ? {} : { budgetTokens: reasoning.budgetTokens }),
          ...(reasoning.effort === undefined ? {} : { level: reasoning.effort }),
        };
  if (thinking !== undefined) {
    const thinkingConfig: NonNullable<typeof config.thinkingConfig> = {};
    if (thinking.budgetTokens !== undefined) thinkingConfig.thinkingBudget = thinking.budgetTokens;
    if (thinking.level !== undefined) thinkingConfig.thinkingLevel = thinking.level;
    if (thinking.includeThoughts !== undefined) thinkingConfig.includeThoughts = thinking.includeThoughts;
    config.thinkingConfig = thinkingConfig;
  }
  if (outputSchema !== undefined) {
    config.responseMimeType = "application/json";
    config.responseJsonSchema = outputSchema;
  }
  return Object.keys(config).length > 0 ? config : undefined;
}

/**
 * A non-streaming generateContent response as generic messages, `stopReason`/`usage` on the last.
 * Throws a retryable `ProviderError` for a tool call whose arguments are not an object, unless the
 * turn was cut by MAX_TOKENS (then the loop will not run it).
 */
export function fromGeminiResponse(body: GeminiResponse, asked?: string): ModelMessage[] {
  const candidate = body.candidates?.[0];
  const reader = partReader(responseIdSuffix(body.responseId));
  const messages: ModelMessage[] = [];
  for (const part of candidate?.content?.parts ?? []) messages.push(...reader.add(part));
  messages.push(...reader.finish(candidate?.finishReason), ...reader.cut());
  if (messages.length === 0) messages.push({ role: "assistant", content: "" });
  const explanation = candidate?.finishMessage ?? body.promptFeedback?.blockReasonMessage;
  Object.assign(
    messages[messages.length - 1]!,
    stopFieldsOf(
      candidate?.finishReason,
      body.promptFeedback?.blockReason,
      body.usageMetadata,
      reader.toolCalls(),
      explanation,
    ),
    answeredBy(body.modelVersion, body.responseId, asked),
  );
  return messages;
}

export type PartReader = {
  /** Reads the next part; returns the messages it completed, in order. */
  add: (part: GeminiPart) => ModelMessage[];
  /** The end of the response: returns what is still open. */
  finish: (finishReason: string | undefined) => ModelMessage[];
  /** After `finish`: a call the MAX_TOKENS limit cut off (input `{}`), if any. */
  cut: () => ModelMessage[];
  /** How many tool calls the response had. */
  toolCalls: () => number;
};

/**
 * Turns a response's parts, in order, into generic messages; a stream feeds it part by part.
 * Text parts of one kind (answer or thought) join into one message, as streamed pieces of it do,
 * until another kind of part comes or a second signature would have to share the message. A
 * functionCall part is complete on arrival: Gemini never splits one.
 */
export function partReader(idSuffix: () => string): PartReader {
  let open: ((AssistantMessage | ThinkingMessage) & GeminiMessageFields) | undefined;
  let calls = 0;
  let malformed: ToolCallMessage | undefined;
  const close = (): ModelMessage[] => {
    const done = open;
    open = undefined;
    return done === undefined ? [] : [done];
  };
  return {
    add: (part) => {
      if (part.functionCall !== undefined) {
        const done = close();
        const { message, valid } = toolCallOf(part, calls++, idSuffix);
        if (valid) done.push(message);
        else malformed ??= message;
        return done;
      }
      const text = partText(part);
      const signature =
        part.thoughtSignature === undefined || part.thoughtSignature === "" ? undefined : part.thoughtSignature;
      // Inline data, code execution and other parts have no generic message; an empty text part is nothing.
      if ((text === undefined && !isSignatureOnly(part)) || ((text ?? "") === "" && signature === undefined)) return [];
      const thought = part.thought === true;
      const done =
        open !== undefined && ("type" in open !== thought || (signature !== undefined && open.signature !== undefined))
          ? close()
          : [];
      open ??= thought
        ? { type: "thinking", content: "", provider: googleProvider }
        : { role: "assistant", content: "" };
      open.content += text ?? "";
      if (signature !== undefined) {
        open.signature = signature;
        open.provider = googleProvider;
      }
      return done;
    },
    finish: (finishReason) => {
      const done = close();
      if (malformed !== undefined) {
        if (finishReason !== "MAX_TOKENS") {
          throw new ProviderError(
            `google: tool call "${malformed.name}" arrived with arguments that are not a JSON object`,
            { provider: googleProvider, retryable: true },
          );
        }
      }
      return done;
    },
    // A call cut off by MAX_TOKENS, with `{}` input: streamed after response-end, so the loop
    // never starts it early.
    cut: () => (malformed === undefined ? [] : [malformed]),
    toolCalls: () => calls,
  };
}

/** The text a part shows: its text, or executed code and its result as fenced text. */
export function partText(part: GeminiPart): string | undefined {
  return typeof part.text === "string" ? part.text : codeText(part);
}

// Code the model ran with Gemini's code execution, and its result, are part of the answer: kept as
// text (fenced), so nothing the model showed is lost.
function codeText(part: GeminiPart): string | undefined {
  const code = part.executableCode as { language?: unknown; code?: unknown } | undefined;
  if (code !== undefined && typeof code.code === "string") {
    const language =
      typeof code.language === "string" && code.language !== "LANGUAGE_UNSPECIFIED" ? code.language.toLowerCase() : "";
    return `\n\`\`\`${language}\n${code.code}\n\`\`\`\n`;
  }
  const result = part.codeExecutionResult as { outcome?: unknown; output?: unknown } | undefined;
  if (result !== undefined) {
    const failed = typeof result.outcome === "string" && result.outcome !== "OUTCOME_OK" ? ` (${result.outcome})` : "";
    return `\nOutput${failed}:\n\`\`\`\n${typeof result.output === "string" ? result.output : ""}\n\`\`\`\n`;
  }
  return undefined;
}

function isSignatureOnly(part: GeminiPart): boolean {
  return Object.keys(part).every((key) => key === "thought" || key === "thoughtSignature");
}

// Gemini 3 gives each call an id; earlier models give none, and the loop needs one. Ours is the
// function name, the call's position and a per-response suffix, so two responses never share one.
function toolCallOf(
  part: GeminiPart,
  index: number,
  idSuffix: () => string,
): { message: ToolCallMessage & GeminiMessageFields; valid: boolean } {
  const call = part.functionCall!;
  const name = call.name ?? "";
  const read = readToolInput(call.args);
  const valid = read.kind !== "invalid";
  const given = typeof call.id === "string" && call.id !== "" ? call.id : undefined;
  const message: ToolCallMessage & GeminiMessageFields = {
    type: "tool_call",
    id: given ?? `${name}_${index}_${idSuffix()}`,
    name,
    ...refusedInput(read),
  };
  if (part.thoughtSignature !== undefined && part.thoughtSignature !== "") message.signature = part.thoughtSignature;
  message.provider = googleProvider;
  if (given === undefined) message.generatedId = true;
  return { message, valid };
}

/** The suffix of generated tool-call ids: the response's id, or a random one when it has none. */
export function responseIdSuffix(responseId: string | undefined): () => string {
  let suffix = responseId === undefined || responseId === "" ? undefined : responseId;
  return () => (suffix ??= Math.random().toString(36).slice(2, 10));
}

/**
 * Normalized stop reason (see `normalizeStopReason` for when `rawStopReason` is kept), usage in the generic
 * shape, and for a turn that did not end normally Gemini's `finishMessage` (or the prompt's
 * `blockReasonMessage`) as `stopDetails.explanation` (a malformed call's message names what went wrong).
 */
export function stopFieldsOf(
  finishReason: string | undefined,
  blockReason: string | undefined,
  usage: GeminiUsage | undefined,
  toolCalls: number,
  explanation?: string,
): TurnEndFields {
  // Gemini says STOP for a turn that calls tools too; a blocked prompt has no candidate at all.
  const fields: TurnEndFields =
    finishReason === undefined && blockReason !== undefined
      ? { stopReason: "content_filter", rawStopReason: blockReason }
      : normalizeStopReason(finishReason, finishReasons, toolUseWhenCalls(toolCalls > 0));
  const normal =
    fields.stopReason === undefined || fields.stopReason === "end_turn" || fields.stopReason === "tool_use";
  if (!normal && explanation !== undefined && explanation !== "") fields.stopDetails = { explanation };
  if (usage !== undefined) fields.usage = geminiUsage(usage);
  return fields;
}

const finishReasons: StopReasonNames = {
  plain: { STOP: "end_turn", MAX_TOKENS: "max_tokens" },
  // Which filter stopped the answer is lost in `content_filter`: the raw reason keeps it.
  aliases: {
    SAFETY: "content_filter",
    RECITATION: "content_filter",
    BLOCKLIST: "content_filter",
    PROHIBITED_CONTENT: "content_filter",
    SPII: "content_filter",
    IMAGE_SAFETY: "content_filter",
    IMAGE_PROHIBITED_CONTENT: "content_filter",
    IMAGE_RECITATION: "content_filter",
  },
};

// Gemini counts the answer and the thoughts apart; the generic output includes reasoning. The
// prompt count already includes cached tokens; tool-use prompt tokens (built-in tools) are input too.
function geminiUsage(given: GeminiUsage): Usage {
  const usage = tokenCounts(given);
  const thoughts = usage.thoughtsTokenCount ?? 0;
  const cached = usage.cachedContentTokenCount ?? 0;
  const result: Usage = {
    inputTokens: (usage.promptTokenCount ?? 0) + (usage.toolUsePromptTokenCount ?? 0),
    outputTokens: (usage.candidatesTokenCount ?? 0) + thoughts,
  };
  if (cached > 0) result.cacheReadTokens = cached;
  if (thoughts > 0) result.reasoningTokens = thoughts;
  return result;
}
