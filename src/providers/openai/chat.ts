import { shownAsStored } from "../shown-as-stored.ts";
import { ProviderError } from "../../errors.ts";
import type { ModelStreamEvent } from "../../model/model-stream-event.ts";
import type { StructuredOutputModel } from "../../model/invoke-model.ts";
import {
  contentPieces,
  fromOpenAIChatResponse,
  openaiChatProvider,
  readReasoning,
  thinkingMessage,
  toOpenAIChatRequest,
  toolCallMessage,
  stopFieldsOf,
  uniqueToolId,
  type OpenAIChatRequestOptions,
  type OpenAIChatResponse,
  type OpenAIChatUsage,
  type ReasoningField,
} from "./chat-convert.ts";
import {
  checkIdleTimeout,
  parseStreamEvent,
  postJson,
  readJsonAnswer,
  readSseStream,
  type Fetch,
  type PostOptions,
  type CallScope,
  type TransportOptions,
} from "../http.ts";
import { baseUrlOf, missingApiKey, env } from "../environment.ts";
import { providerError, type ErrorShape } from "../provider-error.ts";
import type { ServerSentEvent } from "../sse.ts";
import { withUniqueToolIds } from "../session-tool-ids.ts";
import { callSettings } from "../request-settings.ts";
import { answeredBy } from "../convert-shared.ts";
import { withUrlDownloads } from "../download-parts.ts";

// `output` comes from the run (`context.output`), never from the factory.
export type OpenAIChatOptions = Omit<OpenAIChatRequestOptions, "output"> &
  TransportOptions & {
    /**
     * Defaults to the `OPENAI_API_KEY` environment variable. With a custom `baseURL` (Ollama, vLLM,
     * llama.cpp, LM Studio…) it may be missing: then no `Authorization` header is sent.
     */
    apiKey?: string;
    /** The API root including `/v1`, as in the official SDK (default `OPENAI_BASE_URL`, else `https://api.openai.com/v1`). */
    baseURL?: string;
    /** Extra request headers (e.g. `OpenAI-Organization`). */
    headers?: Record<string, string>;
    fetch?: Fetch;
    /**
     * `false`: do not send a run's `output` schema as `response_format` (for compatible servers that
     * reject `json_schema`); the loop then instructs the model and parses its answer instead.
     * Default `true`.
     */
    nativeOutput?: boolean;
  };

const defaultBaseURL = "https://api.openai.com/v1";

/**
 * An `invokeModel` for OpenAI Chat Completions and the servers that speak it. Streams by default
 * (`stream: false` for one JSON response); failures become `ProviderError`s the loop retries when
 * they are retryable, and a context overflow a `ContextOverflowError`. Native structured output: a
 * run's `output` schema goes as `response_format` (see `OpenAIChatRequestOptions.output`).
 */
export function openaiChat(options: OpenAIChatOptions): StructuredOutputModel {
  const baseURL = baseUrlOf(options.baseURL, "OPENAI_BASE_URL", defaultBaseURL);
  const official = /^https:\/\/api\.openai\.com(?:\/|$)/.test(baseURL);
  const requestOptions: OpenAIChatRequestOptions =
    official || options.maxTokensField !== undefined ? options : { ...options, maxTokensField: "max_tokens" };
  const idleTimeoutMs = checkIdleTimeout(options.idleTimeoutMs);
  const invoke: StructuredOutputModel = (tools, session, context) => {
    const apiKey = options.apiKey ?? env("OPENAI_API_KEY");
    // Servers other than OpenAI's (Ollama, vLLM) often need none.
    if (apiKey === undefined && official) throw missingApiKey(openaiChatProvider, ["OPENAI_API_KEY"]);
    const secrets = apiKey === undefined ? [] : [apiKey];
    const body = toOpenAIChatRequest(
      session,
      tools,
      options.nativeOutput === false
        ? { ...requestOptions, settings: callSettings(context, official) }
        : { ...requestOptions, output: context.output, settings: callSettings(context, official) },
    );
    const request: PostOptions = {
      provider: openaiChatProvider,
      url: `${baseURL}/chat/completions`,
      headers: { ...(apiKey === undefined ? {} : { authorization: `Bearer ${apiKey}` }), ...options.headers },
      body,
      fetch: options.fetch,
      signal: context.signal,
      errors: openaiChatErrors,
      secrets,
      idleTimeoutMs,
      expect: options.stream === false ? "json" : "sse",
    };
    if (options.stream === false) {
      return readJsonAnswer(
        () => postJson(request),
        { provider: openaiChatProvider, secrets, signal: context.signal },
        (answer, response) => fromOpenAIChatResponse(answerOf(answer, response, secrets), body.model),
      );
    }
    return streamOpenAIChat(() => postJson(request), { secrets, signal: context.signal, asked: body.model });
  };
  if (options.nativeOutput !== false) invoke.structuredOutput = "native";
  // Chat Completions fetches image URLs itself, but takes a file's bytes only: file URLs are downloaded here.
  const downloading = withUrlDownloads(invoke, {
    ...options,
    adapter: openaiChatProvider,
    stream: options.stream !== false,
    needsDownload: (part) => part.type === "file",
  });
  return withUniqueToolIds(downloading, openaiChatProvider);
}

/** OpenAI's error bodies (`{error: {message, type, code}}`) and the shapes of compatible servers. */
export const openaiChatErrors: ErrorShape = {
  describe: (body) => {
    const error = (body as { error?: unknown }).error;
    if (typeof error === "string") return { message: error };
    // vLLM once put the fields at the top level; llama.cpp's `code` is the HTTP status, its `type` the reason.
    const details = (typeof error === "object" && error !== null ? error : body) as {
      message?: unknown;
      type?: unknown;
      code?: unknown;
    };
    const code =
      typeof details.code === "string" ? details.code : typeof details.type === "string" ? details.type : undefined;
    return {
      ...(typeof details.message === "string" ? { message: details.message } : {}),
      ...(code === undefined ? {} : { code }),
    };
  },
  retryableCodes: ["server_error", "rate_limit_exceeded"],
  // An exhausted quota comes as HTTP 429; waiting does not refill it.
  fatalCodes: ["insufficient_quota"],
};

function answerOf(body: unknown, response: Response, secrets: readonly string[]): OpenAIChatResponse {
  // Some proxies answer 200 with an error body.
  if (typeof body === "object" && body !== null && "error" in body && !("choices" in body)) {
    throw providerError(
      openaiChatProvider,
      undefined,
      response.headers,
      JSON.stringify(body),
      openaiChatErrors,
      secrets,
    );
  }
  return body as OpenAIChatResponse;
}

/**
 * The SSE stream of one Chat Completions call as model stream events: deltas as they come, each
 * tool call as a message as soon as it is complete (the next call began, or the reply finished),
 * text and reasoning before the first call, the stop reason and usage at the end. A stream that
 * ends before the reply finished is a retryable error, never a turn.
 */
export function streamOpenAIChat(
  open: () => Promise<Response>,
  transport: { secrets?: readonly string[]; signal?: AbortSignal; asked?: string } = {},
): AsyncGenerator<ModelStreamEvent> {
  const scope: CallScope = { provider: openaiChatProvider, secrets: transport.secrets, signal: transport.signal };
  return readSseStream(open, scope, (batches) => shownAsStored(readChatStream(batches, scope), transport.asked));
}

async function* readChatStream(
  batches: AsyncGenerator<ServerSentEvent[]>,
  scope: CallScope,
): AsyncGenerator<ModelStreamEvent> {
  const turn = createStreamedTurn();
  for await (const batch of batches) {
    for (const { data } of batch) {
      if (data === "[DONE]") {
        yield* endTurn(turn);
        return;
      }
      const chunk = parseStreamEvent(data, scope) as StreamChunk;
      if (chunk.error !== undefined && chunk.error !== null) {
        throw providerError(openaiChatProvider, undefined, undefined, data, openaiChatErrors, scope.secrets);
      }
      yield* addChunk(turn, chunk);
    }
  }
  // Not every compatible server sends [DONE]; a reply that said it finished is complete.
  if (turn.finishReason !== undefined) {
    yield* endTurn(turn);
    return;
  }
  throw new ProviderError("openai-chat: the stream ended before the reply finished", {
    provider: openaiChatProvider,
    retryable: true,
  });
}

type StreamChunk = {
  choices?: {
    index?: number;
    delta?: {
      /** A string, or an array of `text` and `thinking` parts (Mistral). */
      content?: unknown;
      reasoning_content?: string | null;
      reasoning?: string | null;
      reasoning_details?: unknown;
      refusal?: string | null;
      tool_calls?: ToolCallPart[] | null;
    } | null;
    finish_reason?: string | null;
  }[];
  usage?: OpenAIChatUsage | null;
  /** Groq puts the usage of a stream here, in its last chunk. */
  x_groq?: { usage?: OpenAIChatUsage | null } | null;
  error?: unknown;
  id?: string;
  model?: string;
};

type ToolCallPart = {
  index?: number;
  id?: string | null;
  function?: { name?: string | null; arguments?: unknown } | null;
};

type StreamedCall = { wireId: string | undefined; id: string; name: string; arguments: string; parsed: unknown };

// The state of one streamed reply. Chat Completions streams reasoning, then text, then the tool
// calls one after another (each keyed by `index`, its id and name in the first delta). Some
// servers alternate reasoning and text (Mistral's thinking parts): each run becomes its own message.
type StreamedTurn = {
  reasoning: string;
  reasoningField: ReasoningField;
  text: string;
  refusal: string;
  refused: boolean;
  finishReason: string | undefined;
  usage: OpenAIChatUsage | undefined;
  /** The response's model and id, as its chunks name them. */
  model: string | undefined;
  id: string | undefined;
  calls: StreamedCall[];
  /** Calls before this position are complete: each is completed once, never walked again. */
  completed: number;
  byIndex: Map<number, StreamedCall>;
  ids: Set<string>;
  /** Calls whose arguments did not parse: fine only if the reply turns out cut by the token limit. */
  unparsed: StreamedCall[];
};

function createStreamedTurn(): StreamedTurn {
  return {
    reasoning: "",
    reasoningField: "reasoning_content",
    text: "",
    refusal: "",
    refused: false,
    finishReason: undefined,
    usage: undefined,
    model: undefined,
    id: undefined,
    calls: [],
    completed: 0,
    byIndex: new Map(),
    ids: new Set(),
    unparsed: [],
  };
}

// The events of one chunk; only the first choice is the reply.
function addChunk(turn: StreamedTurn, chunk: StreamChunk): ModelStreamEvent[] {
  const events: ModelStreamEvent[] = [];
  const chunkUsage = chunk.usage ?? chunk.x_groq?.usage;
  if (chunkUsage !== undefined && chunkUsage !== null) turn.usage = chunkUsage;
  if (typeof chunk.model === "string") turn.model ??= chunk.model;
  if (typeof chunk.id === "string") turn.id ??= chunk.id;
  for (const choice of chunk.choices ?? []) {
    if ((choice.index ?? 0) !== 0) continue;
    const delta = choice.delta ?? {};
    const reasoningDelta = readReasoning(delta);
    if (reasoningDelta !== undefined) addReasoning(turn, events, reasoningDelta.text, reasoningDelta.field);
    for (const piece of contentPieces(delta.content)) {
      if (piece.kind === "thinking") addReasoning(turn, events, piece.text, "content");
      else {
        turn.text += piece.text;
        events.push({ type: "text-delta", delta: piece.text });
      }
    }
    if (typeof delta.refusal === "string" && delta.refusal !== "") {
      turn.refusal += delta.refusal;
      turn.refused = true;
      events.push({ type: "text-delta", delta: delta.refusal });
    }
    for (const part of delta.tool_calls ?? []) addToolCallPart(turn, events, part);
    if (typeof choice.finish_reason === "string" && choice.finish_reason !== "") {
      turn.finishReason = choice.finish_reason;
      completeCalls(turn, events);
    }
  }
  return events;
}

function addReasoning(turn: StreamedTurn, events: ModelStreamEvent[], piece: string, field: ReasoningField): void {
  // Reasoning after text starts the next run: what came before is complete.
  if (turn.text !== "" || turn.refusal !== "") flushText(turn, events);
  turn.reasoning += piece;
  turn.reasoningField = field;
  events.push({ type: "thinking-delta", delta: piece });
}

function addToolCallPart(turn: StreamedTurn, events: ModelStreamEvent[], part: ToolCallPart): void {
  const wireId = typeof part.id === "string" && part.id !== "" ? part.id : undefined;
  const last = turn.calls[turn.calls.length - 1];
  // Without `index` (a few servers), a new id starts a new call; anything else continues the last one.
  let call =
    part.index !== undefined
      ? turn.byIndex.get(part.index)
      : wireId === undefined || wireId === last?.wireId
        ? last
        : undefined;
  // Another id at an index already taken is another call (some servers give every call index 0).
  if (call !== undefined && wireId !== undefined && call.wireId !== undefined && wireId !== call.wireId)
    call = undefined;
  if (call === undefined) {
    flushText(turn, events);
    completeCalls(turn, events);
    call = {
      wireId,
      id: uniqueToolId(wireId, turn.ids),
      name: part.function?.name ?? "",
      arguments: "",
      parsed: undefined,
    };
    turn.calls.push(call);
    if (part.index !== undefined) turn.byIndex.set(part.index, call);
    events.push({ type: "tool-call-start", id: call.id, name: call.name });
  } else if (call.name === "" && typeof part.function?.name === "string") {
    call.name = part.function.name;
  }
  const fragment = part.function?.arguments;
  if (typeof fragment === "string" && fragment !== "") {
    call.arguments += fragment;
    events.push({ type: "tool-call-delta", id: call.id, delta: fragment });
  } else if (typeof fragment === "object" && fragment !== null) {
    // Already parsed (a few servers): checked as it is, never serialized first.
    call.parsed = fragment;
  }
}

// Reasoning and text are complete once a tool call begins (or the reply ends).
function flushText(turn: StreamedTurn, events: ModelStreamEvent[]): void {
  if (turn.reasoning !== "")
    events.push({ type: "message", message: thinkingMessage(turn.reasoning, turn.reasoningField) });
  if (turn.text !== "" || turn.refusal !== "")
    events.push({
      type: "message",
      message: { role: "assistant", content: turn.text !== "" ? turn.text : turn.refusal },
    });
  turn.reasoning = turn.text = turn.refusal = "";
}

function completeCalls(turn: StreamedTurn, events: ModelStreamEvent[]): void {
  for (; turn.completed < turn.calls.length; turn.completed++) {
    const call = turn.calls[turn.completed]!;
    try {
      events.push({
        type: "message",
        message: toolCallMessage({ ...call, arguments: call.parsed ?? call.arguments }, undefined),
      });
    } catch {
      turn.unparsed.push(call);
    }
  }
}

function endTurn(turn: StreamedTurn): ModelStreamEvent[] {
  const events: ModelStreamEvent[] = [];
  completeCalls(turn, events);
  flushText(turn, events);
  events.push({
    type: "response-end",
    ...stopFieldsOf(turn.finishReason, turn.usage, turn.calls.length > 0, turn.refused),
    ...answeredBy(turn.model, turn.id),
  });
  // Cut calls after response-end, so the loop never starts them early.
  for (const call of turn.unparsed) events.push({ type: "message", message: toolCallMessage(call, turn.finishReason) });
  return events;
}

export { toOpenAIChatRequest, fromOpenAIChatResponse, openaiChatProvider } from "./chat-convert.ts";
export type {
  OpenAIChatMessage,
  OpenAIChatRequest,
  OpenAIChatRequestOptions,
  OpenAIChatResponse,
} from "./chat-convert.ts";
