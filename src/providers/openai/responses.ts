import { shownAsStored } from "../shown-as-stored.ts";
import { ProviderError } from "../../errors.ts";
import type { ModelStreamEvent } from "../../model/model-stream-event.ts";
import type { StructuredOutputModel } from "../../model/invoke-model.ts";
import type { ModelMessage } from "../../session.ts";
import { parseToolInput } from "../convert-shared.ts";
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
import { providerError } from "../provider-error.ts";
import type { ServerSentEvent } from "../sse.ts";
import {
  fromOpenAIResponsesResponse,
  fromOutputItem,
  invalidArgumentsError,
  openaiResponsesErrors,
  openaiResponsesProvider,
  toOpenAIResponsesRequest,
  toolCall,
  stopFieldsOf,
  type OpenAIResponsesOutputItem,
  type OpenAIResponsesRequestOptions,
  type OpenAIResponsesResponse,
} from "./responses-convert.ts";
import { withUniqueToolIds } from "../session-tool-ids.ts";
import { callSettings } from "../request-settings.ts";
import { withUrlDownloads } from "../download-parts.ts";

// `output` comes from the run (`context.output`), never from the factory.
export type OpenAIResponsesOptions = Omit<OpenAIResponsesRequestOptions, "output"> &
  TransportOptions & {
    /** Defaults to the `OPENAI_API_KEY` environment variable, read at each call. */
    apiKey?: string;
    /** The API root including `/v1`, as in the official SDK (default `OPENAI_BASE_URL`, then `https://api.openai.com/v1`). */
    baseURL?: string;
    /** Extra request headers (e.g. `OpenAI-Organization`, `OpenAI-Project`). */
    headers?: Record<string, string>;
    fetch?: Fetch;
  };

/**
 * An `invokeModel` for the OpenAI Responses API (`POST {baseURL}/responses`), stateless: every call
 * sends the whole session with `store: false`, and reasoning travels as encrypted content. Streams
 * by default (`stream: false` for one JSON response); failures become `ProviderError`s the loop
 * retries when they are retryable. Native structured output: a run's `output` schema goes as
 * `text.format` (see `OpenAIResponsesRequestOptions.output`).
 */
export function openaiResponses(options: OpenAIResponsesOptions): StructuredOutputModel {
  const baseURL = baseUrlOf(options.baseURL, "OPENAI_BASE_URL", "https://api.openai.com/v1");
  const idleTimeoutMs = checkIdleTimeout(options.idleTimeoutMs);
  // Only OpenAI's own server is sent the session's id as a cache key unasked.
  const official = /^https:\/\/api\.openai\.com(?:\/|$)/.test(baseURL);
  const invoke: StructuredOutputModel = (tools, session, context) => {
    const apiKey = requireApiKey(options.apiKey, ["OPENAI_API_KEY"], openaiResponsesProvider);
    const body = toOpenAIResponsesRequest(session, tools, {
      ...options,
      output: context.output,
      settings: callSettings(context, official),
    });
    const request: PostOptions = {
      provider: openaiResponsesProvider,
      url: `${baseURL}/responses`,
      headers: { authorization: `Bearer ${apiKey}`, ...options.headers },
      body,
      fetch: options.fetch,
      signal: context.signal,
      errors: openaiResponsesErrors,
      secrets: [apiKey],
      idleTimeoutMs,
      expect: options.stream === false ? "json" : "sse",
    };
    const open = (): Promise<Response> => postJson(request);
    if (options.stream === false) {
      return readJsonAnswer(
        open,
        { provider: openaiResponsesProvider, secrets: [apiKey], signal: context.signal },
        (answer) => fromOpenAIResponsesResponse(answer as OpenAIResponsesResponse, body.model),
      );
    }
    return streamResponses(open, [apiKey], body.model);
  };
  invoke.structuredOutput = "native";
  // The Responses API fetches image and file URLs itself: each is checked before it is passed on.
  const passing = withUrlDownloads(invoke, {
    ...options,
    adapter: openaiResponsesProvider,
    stream: options.stream !== false,
    needsDownload: () => false,
  });
  return withUniqueToolIds(passing, openaiResponsesProvider);
}

type StreamEvent = {
  type: string;
  output_index?: number;
  item_id?: string;
  summary_index?: number;
  item?: OpenAIResponsesOutputItem;
  delta?: string;
  arguments?: string;
  response?: OpenAIResponsesResponse;
};

type PendingItem = {
  item: OpenAIResponsesOutputItem;
  text: string;
  arguments: string;
  summaryIndex: number | undefined;
  /** Streamed summary parts and reasoning text, for a done item that leaves them out. */
  summary: string[];
  reasoning: string;
  /**
   * Which of a reasoning item's texts the listener is shown: the first kind streamed. A server that
   * streams both (the raw reasoning, then the same text again as a summary) is shown it once, and
   * the stored thinking is taken from the same kind.
   */
  thinkingSource: "summary" | "reasoning" | undefined;
};

/**
 * The SSE stream of one Responses API call as model stream events: deltas as they come, each
 * output item as a generic message when its `response.output_item.done` arrives, the stop reason
 * and usage from `response.completed` (or `response.incomplete`). A stream that ends without one
 * of those is an error (retryable), never a turn; `error` and `response.failed` events throw.
 */
export function streamResponses(
  open: () => Promise<Response>,
  secrets: readonly string[] = [],
  asked?: string,
): AsyncGenerator<ModelStreamEvent> {
  const scope: CallScope = { provider: openaiResponsesProvider, secrets };
  return readSseStream(open, scope, (batches) => shownAsStored(readResponsesStream(batches, scope), asked));
}

// What one Responses stream has said so far.
type ResponsesStream = {
  /** Open items, by output index and by id. */
  items: Map<number | string, PendingItem>;
  emitted: ModelMessage[];
  /**
   * Output indexes (and ids) of items already ended by output_item.done; the final response's other
   * items were never streamed whole. The index correlates where a server gives every event a fresh
   * id (GitHub Copilot's Responses endpoint): the final response's item at index N is the one streamed there.
   */
  doneIndexes: Set<number>;
  doneIds: Set<string>;
  doneCount: number;
  created: boolean;
  /** Calls whose arguments were cut or garbled: acceptable only if the response is incomplete. */
  cutToolCalls: OpenAIResponsesOutputItem[];
};

async function* readResponsesStream(
  batches: AsyncGenerator<ServerSentEvent[]>,
  scope: CallScope,
): AsyncGenerator<ModelStreamEvent> {
  const stream: ResponsesStream = {
    items: new Map(),
    emitted: [],
    doneIndexes: new Set(),
    doneIds: new Set(),
    doneCount: 0,
    created: false,
    cutToolCalls: [],
  };
  for await (const batch of batches)
    for (const { data } of batch) {
      if (data === "[DONE]") continue;
      const event = parseStreamEvent(data, scope) as StreamEvent;
      switch (event.type) {
        case "response.output_item.added": {
          const started = itemAdded(stream, event.item!, event.output_index);
          if (started !== undefined) yield started;
          break;
        }
        case "response.output_text.delta":
        case "response.refusal.delta":
        case "response.reasoning_summary_text.delta":
        case "response.reasoning_text.delta":
        case "response.function_call_arguments.delta": {
          const delta = itemDelta(stream, event);
          if (delta !== undefined) yield delta;
          break;
        }
        case "response.function_call_arguments.done": {
          const pending = find(stream, event);
          if (pending !== undefined && event.arguments !== undefined) pending.arguments = event.arguments;
          break;
        }
        case "response.output_item.done": {
          const done = itemDone(stream, event);
          if (done !== undefined) yield done;
          break;
        }
        case "response.completed":
        case "response.incomplete":
          yield* responseEnd(stream, {
            ...event.response,
            status: event.response?.status ?? (event.type === "response.completed" ? "completed" : "incomplete"),
          });
          return;
        case "response.created":
          // Two responses in one stream must never become one turn: the stream is broken, and retried.
          if (stream.created)
            throw new ProviderError("openai-responses: a second response began in the stream", {
              provider: openaiResponsesProvider,
              retryable: true,
            });
          stream.created = true;
          break;
        case "response.failed":
        case "error":
          throw providerError(
            openaiResponsesProvider,
            undefined,
            undefined,
            data,
            openaiResponsesErrors,
            scope.secrets,
          );
        default:
          break; // in_progress, part and done-text events, and event types added later
      }
    }
  throw new ProviderError("openai-responses: the stream ended before response.completed", {
    provider: openaiResponsesProvider,
    retryable: true,
  });
}

function find(stream: ResponsesStream, event: StreamEvent): PendingItem | undefined {
  return (
    stream.items.get(event.output_index ?? -1) ??
    (event.item_id === undefined ? undefined : stream.items.get(event.item_id))
  );
}

function pendingItem(item: OpenAIResponsesOutputItem): PendingItem {
  return {
    item,
    text: "",
    arguments: item.arguments ?? "",
    summaryIndex: undefined,
    summary: [],
    reasoning: "",
    thinkingSource: undefined,
  };
}

function itemAdded(
  stream: ResponsesStream,
  added: OpenAIResponsesOutputItem,
  outputIndex: number | undefined,
): ModelStreamEvent | undefined {
  const pending = pendingItem({ ...added });
  const item = pending.item;
  if (outputIndex !== undefined) stream.items.set(outputIndex, pending);
  if (item.id !== undefined) stream.items.set(item.id, pending);
  return item.type === "function_call"
    ? { type: "tool-call-start", id: item.call_id ?? item.id ?? "", name: item.name ?? "" }
    : undefined;
}

// A piece of text, refusal, reasoning or arguments for the item it names, as the event to show.
function itemDelta(stream: ResponsesStream, event: StreamEvent): ModelStreamEvent | undefined {
  const pending = find(stream, event);
  const delta = event.delta;
  if (pending === undefined || delta === undefined || delta === "") return undefined;
  switch (event.type) {
    case "response.reasoning_summary_text.delta": {
      if ((pending.thinkingSource ??= "summary") !== "summary") return undefined;
      // Summary parts are joined with a blank line in the thinking message: show them alike.
      const separator =
        pending.summaryIndex !== undefined && pending.summaryIndex !== event.summary_index ? "\n\n" : "";
      if (separator !== "" || pending.summary.length === 0) pending.summary.push("");
      pending.summary[pending.summary.length - 1] += delta;
      pending.summaryIndex = event.summary_index;
      return { type: "thinking-delta", delta: separator + delta };
    }
    case "response.reasoning_text.delta":
      // The reasoning itself, from servers that show it (gpt-oss on vLLM, Ollama, OpenRouter).
      if ((pending.thinkingSource ??= "reasoning") !== "reasoning") return undefined;
      pending.reasoning += delta;
      return { type: "thinking-delta", delta };
    case "response.function_call_arguments.delta":
      pending.arguments += delta;
      return { type: "tool-call-delta", id: pending.item.call_id ?? pending.item.id ?? "", delta };
    default:
      pending.text += delta;
      return { type: "text-delta", delta };
  }
}

function itemDone(stream: ResponsesStream, event: StreamEvent): ModelStreamEvent | undefined {
  const pending = find(stream, event) ?? pendingItem({ type: "" });
  stream.items.delete(event.output_index ?? -1);
  if (pending.item.id !== undefined) stream.items.delete(pending.item.id);
  const item = completeItem(pending, event.item);
  stream.doneCount++;
  if (event.output_index !== undefined) stream.doneIndexes.add(event.output_index);
  if (item.id !== undefined) stream.doneIds.add(item.id);
  const message = fromOutputItem(item);
  if (message !== undefined) {
    stream.emitted.push(message);
    return { type: "message", message };
  }
  // Cut off or garbled arguments: acceptable only if the turn turns out to be cut (max output
  // tokens), and then the loop will not run the call. Decided at the end.
  if (item.type === "function_call") stream.cutToolCalls.push(item);
  return undefined;
}

function* responseEnd(stream: ResponsesStream, final: OpenAIResponsesResponse): Generator<ModelStreamEvent> {
  // Some compatible servers end items only in the final response: take what no done event carried.
  for (const [index, item] of (final.output ?? []).entries()) {
    if (stream.doneIndexes.has(index)) continue;
    if (item.id !== undefined ? stream.doneIds.has(item.id) : stream.doneCount > 0) continue;
    const open = stream.items.get(index) ?? (item.id === undefined ? undefined : stream.items.get(item.id));
    if (open !== undefined) for (const [key, value] of stream.items) if (value === open) stream.items.delete(key);
    const message = fromOutputItem(open === undefined ? item : completeItem(open, item));
    if (message !== undefined) {
      stream.emitted.push(message);
      yield { type: "message", message };
    } else if (item.type === "function_call") stream.cutToolCalls.push(item);
  }
  // A call still open at the end was cut as surely as one with garbled arguments.
  for (const pending of new Set(stream.items.values()))
    if (pending.item.type === "function_call") stream.cutToolCalls.push(completeItem(pending, undefined));
  const cut: ModelMessage[] = [];
  for (const item of stream.cutToolCalls) {
    if (final.status !== "incomplete") throw invalidArgumentsError(item);
    cut.push(toolCall(item, parseToolInput(item.arguments ?? "") ?? {}));
  }
  yield { type: "response-end", ...stopFieldsOf(final, [...stream.emitted, ...cut]) };
  // Cut calls after response-end, so the loop never starts them early.
  for (const message of cut) yield { type: "message", message };
}

// The done event carries the final item; the streamed text and arguments fill in what a
// compatible server leaves out of it.
function completeItem(pending: PendingItem, done: OpenAIResponsesOutputItem | undefined): OpenAIResponsesOutputItem {
  const item: OpenAIResponsesOutputItem = { ...pending.item, ...done };
  if (item.type === "function_call" && (done?.arguments === undefined || done.arguments === ""))
    item.arguments = pending.arguments;
  if (item.type === "message" && (item.content ?? []).length === 0 && pending.text !== "")
    item.content = [{ type: "output_text", text: pending.text }];
  if (item.type === "reasoning" && (item.summary ?? []).length === 0 && pending.summary.length > 0)
    item.summary = pending.summary.map((text) => ({ type: "summary_text", text }));
  if (item.type === "reasoning" && (item.content ?? []).length === 0 && pending.reasoning !== "")
    item.content = [{ type: "reasoning_text", text: pending.reasoning }];
  // The stored thinking is the kind of text the listener was shown (the summary otherwise).
  if (item.type === "reasoning" && pending.thinkingSource === "reasoning") item.summary = [];
  return item;
}

export {
  toOpenAIResponsesRequest,
  fromOpenAIResponsesResponse,
  reasoningSignature,
  openaiResponsesErrors,
  openaiResponsesProvider,
} from "./responses-convert.ts";
export type {
  OpenAIResponsesInputItem,
  OpenAIResponsesOutputItem,
  OpenAIResponsesRequest,
  OpenAIResponsesRequestOptions,
  OpenAIResponsesResponse,
  OpenAIResponsesTool,
  OpenAIResponsesUsage,
} from "./responses-convert.ts";
