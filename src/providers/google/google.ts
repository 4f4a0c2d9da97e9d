import { shownAsStored } from "../shown-as-stored.ts";
import { ProviderError } from "../../errors.ts";
import type { ModelStreamEvent } from "../../model/model-stream-event.ts";
import type { StructuredOutputModel } from "../../model/invoke-model.ts";
import type { ModelMessage } from "../../session.ts";
import {
  fromGeminiResponse,
  geminiFetchesUrl,
  googleProvider,
  partReader,
  partText,
  responseIdSuffix,
  toGeminiRequest,
  stopFieldsOf,
  type GeminiRequestOptions,
  type GeminiResponse,
  type GeminiUsage,
} from "./convert.ts";
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
import { baseUrlOf, requireApiKey } from "../environment.ts";
import { providerError, type ErrorShape } from "../provider-error.ts";
import type { ServerSentEvent } from "../sse.ts";
import { withUniqueToolIds } from "../session-tool-ids.ts";
import { callSettings } from "../request-settings.ts";
import { answeredBy } from "../convert-shared.ts";
import { withUrlDownloads } from "../download-parts.ts";

// `output` comes from the run (`context.output`), never from the factory.
export type GeminiOptions = Omit<GeminiRequestOptions, "output"> &
  TransportOptions & {
    /** Defaults to the `GEMINI_API_KEY` environment variable, then `GOOGLE_API_KEY`. */
    apiKey?: string;
    /** The API origin without `/v1beta` (default `GOOGLE_GEMINI_BASE_URL`, then `https://generativelanguage.googleapis.com`). */
    baseURL?: string;
    /** Extra request headers. */
    headers?: Record<string, string>;
    fetch?: Fetch;
    /** Stream the answer (`streamGenerateContent`, the default) or wait for one JSON response. */
    stream?: boolean;
  };

/**
 * An `invokeModel` for the Gemini API (generateContent). Streams by default (`stream: false` for
 * one JSON response); failures become `ProviderError`s the loop retries when they are retryable.
 * The API key travels in the `x-goog-api-key` header, never in the URL, so it cannot leak into
 * logs or error messages. Native structured output: a run's `output` schema goes as
 * `responseJsonSchema` when the request has no tools, else as an instruction (see
 * `GeminiRequestOptions.output`).
 */
export function gemini(options: GeminiOptions): StructuredOutputModel {
  const baseURL = baseUrlOf(options.baseURL, "GOOGLE_GEMINI_BASE_URL", "https://generativelanguage.googleapis.com");
  const idleTimeoutMs = checkIdleTimeout(options.idleTimeoutMs);
  const invoke: StructuredOutputModel = (tools, session, context) => {
    const apiKey = requireApiKey(options.apiKey, ["GEMINI_API_KEY", "GOOGLE_API_KEY"], googleProvider);
    const stream = options.stream !== false;
    const settings = callSettings(context);
    const model = settings?.model ?? options.model;
    // `gemini-2.5-flash` and `models/gemini-2.5-flash` name the same model; `tunedModels/...` has its own path.
    const modelPath = model.includes("/") ? model : `models/${model}`;
    const request: PostOptions = {
      provider: googleProvider,
      url: `${baseURL}/v1beta/${modelPath}:${stream ? "streamGenerateContent?alt=sse" : "generateContent"}`,
      headers: { "x-goog-api-key": apiKey, ...options.headers },
      body: toGeminiRequest(session, tools, { ...options, output: context.output, settings }),
      fetch: options.fetch,
      signal: context.signal,
      errors: geminiErrors,
      secrets: [apiKey],
      idleTimeoutMs,
      expect: stream ? "sse" : "json",
    };
    if (!stream)
      return readJsonAnswer(
        () => postJson(request),
        { provider: googleProvider, secrets: [apiKey], signal: context.signal },
        (body) => fromGeminiResponse(body as GeminiResponse, model),
      );
    return streamGenerateContent(() => postJson(request), [apiKey], model);
  };
  invoke.structuredOutput = "native";
  // `fileData` takes only Gemini's own file URIs: other URL parts are downloaded here.
  const downloading = withUrlDownloads(invoke, {
    ...options,
    adapter: googleProvider,
    stream: options.stream !== false,
    needsDownload: (part) => !geminiFetchesUrl(part.url),
  });
  return withUniqueToolIds(downloading, googleProvider);
}

/** Gemini's error body: `{ error: { code, message, status, details } }` (in an array from some endpoints). */
export const geminiErrors: ErrorShape = {
  describe: (body) => {
    const error = (Array.isArray(body) ? body[0] : body)?.error as
      | { code?: number; message?: string; status?: string; details?: { "@type"?: string; retryDelay?: string }[] }
      | undefined;
    const code = error?.status ?? (error?.code === undefined ? undefined : String(error.code));
    const retryAfterMs = retryDelay(error?.details);
    return {
      ...(error?.message === undefined ? {} : { message: error.message }),
      ...(code === undefined ? {} : { code }),
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    };
  },
  retryableCodes: ["RESOURCE_EXHAUSTED", "UNAVAILABLE", "INTERNAL", "DEADLINE_EXCEEDED"],
};

// A google.rpc.RetryInfo detail says how long to wait, as a protobuf Duration ("34.4s").
function retryDelay(details: { "@type"?: string; retryDelay?: string }[] | undefined): number | undefined {
  const delay = details?.find((detail) => detail["@type"]?.endsWith("google.rpc.RetryInfo") === true)?.retryDelay;
  const seconds = /^(\d+(?:\.\d+)?)s$/.exec(delay ?? "")?.[1];
  return seconds === undefined ? undefined : Math.round(Number(seconds) * 1000);
}

/**
 * The SSE stream of one streamGenerateContent call as model stream events. Each chunk carries the
 * next parts of the candidate (text in pieces; a functionCall whole); the chunk holding
 * `finishReason` (or a `promptFeedback.blockReason`) ends the turn. A stream that ends without one,
 * or breaks, is a retryable error, never a turn.
 */
export function streamGenerateContent(
  open: () => Promise<Response>,
  secrets: readonly string[] = [],
  asked?: string,
): AsyncGenerator<ModelStreamEvent> {
  const scope: CallScope = { provider: googleProvider, secrets };
  return readSseStream(open, scope, (batches) => shownAsStored(readGenerateContentStream(batches, scope), asked));
}

async function* readGenerateContentStream(
  batches: AsyncGenerator<ServerSentEvent[]>,
  scope: CallScope,
): AsyncGenerator<ModelStreamEvent> {
  let responseId: string | undefined;
  let modelVersion: string | undefined;
  const randomSuffix = responseIdSuffix(undefined);
  const reader = partReader(() => responseId ?? randomSuffix());
  let finishReason: string | undefined;
  let blockReason: string | undefined;
  let explanation: string | undefined;
  let usage: GeminiUsage | undefined;
  for await (const batch of batches) {
    for (const { data } of batch) {
      const chunk = parseStreamEvent(data, scope) as GeminiResponse & { error?: unknown };
      if (chunk.error !== undefined)
        throw providerError(googleProvider, undefined, undefined, data, geminiErrors, scope.secrets);
      responseId ??= chunk.responseId === "" ? undefined : chunk.responseId;
      modelVersion ??= chunk.modelVersion;
      usage = chunk.usageMetadata ?? usage;
      blockReason = chunk.promptFeedback?.blockReason ?? blockReason;
      explanation = chunk.candidates?.[0]?.finishMessage ?? chunk.promptFeedback?.blockReasonMessage ?? explanation;
      const candidate = chunk.candidates?.[0];
      for (const part of candidate?.content?.parts ?? []) {
        for (const message of reader.add(part)) yield* messageEvents(message);
        const text = partText(part);
        if (text !== undefined && text !== "")
          yield { type: part.thought === true ? "thinking-delta" : "text-delta", delta: text };
      }
      finishReason = candidate?.finishReason ?? finishReason;
    }
  }
  if (finishReason === undefined && blockReason === undefined) {
    throw new ProviderError("google: the stream ended without a finishReason", {
      provider: googleProvider,
      retryable: true,
    });
  }
  for (const message of reader.finish(finishReason)) yield* messageEvents(message);
  yield {
    type: "response-end",
    ...stopFieldsOf(finishReason, blockReason, usage, reader.toolCalls(), explanation),
    ...answeredBy(modelVersion, responseId),
  };
  for (const message of reader.cut()) yield* messageEvents(message);
}

function* messageEvents(message: ModelMessage): Generator<ModelStreamEvent> {
  if ("type" in message && message.type === "tool_call") {
    yield { type: "tool-call-start", id: message.id, name: message.name };
    yield { type: "tool-call-delta", id: message.id, delta: JSON.stringify(message.input) };
  }
  yield { type: "message", message };
}

export { toGeminiRequest, fromGeminiResponse } from "./convert.ts";
export type { GeminiRequest, GeminiRequestOptions, GeminiResponse, GeminiMessageFields } from "./convert.ts";

// The errors these adapters throw, for users who import only this module.
export { ProviderError, ContextOverflowError, isProviderError, isContextOverflowError } from "../../errors.ts";
