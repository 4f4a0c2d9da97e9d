import { ProviderError } from "../../errors.ts";
import type { ModelStreamEvent } from "../../model/model-stream-event.ts";
import type { StructuredOutputModel } from "../../model/invoke-model.ts";
import type { ModelMessage } from "../../session.ts";
import { parseToolInput } from "../convert-shared.ts";
import {
  checkIdleTimeout,
  env,
  parseStreamEvent,
  postJson,
  providerError,
  readJsonAnswer,
  readSseStream,
  type Fetch,
  type PostOptions,
  type CallScope,
  type TransportOptions,
} from "../http.ts";
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

// `output` comes from the run (`context.output`), never from the factory.
export type OpenAIResponsesOptions = Omit<OpenAIResponsesRequestOptions, "output"> & TransportOptions & {
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
  const baseURL = (options.baseURL ?? env("OPENAI_BASE_URL") ?? "https://api.openai.com/v1").replace(/\/+$/, "");
  const idleTimeoutMs = checkIdleTimeout(options.idleTimeoutMs);
  const invoke: StructuredOutputModel = (tools, session, context) => {
    const apiKey = options.apiKey ?? env("OPENAI_API_KEY");
    if (apiKey === undefined) {
      throw new ProviderError("openai-responses: no API key: set OPENAI_API_KEY or pass apiKey", { provider: openaiResponsesProvider });
    }
    const request: PostOptions = {
      provider: openaiResponsesProvider,
      url: `${baseURL}/responses`,
      headers: { authorization: `Bearer ${apiKey}`, ...options.headers },
      body: toOpenAIResponsesRequest(session, tools, { ...options, output: context.output }),
      fetch: options.fetch,
      signal: context.signal,
      errors: openaiResponsesErrors,
      secrets: [apiKey],
      idleTimeoutMs,
      expect: options.stream === false ? "json" : "sse",
    };
    const open = (): Promise<Response> => postJson(request);
    if (options.stream === false) {
      return readJsonAnswer(open, { provider: openaiResponsesProvider, secrets: [apiKey], signal: context.signal }, (body) => fromOpenAIResponsesResponse(body as OpenAIResponsesResponse));
    }
    return streamResponses(open, [apiKey]);
  };
  invoke.structuredOutput = "native";
  return withUniqueToolIds(invoke, openaiResponsesProvider);
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
};

/**
 * The SSE stream of one Responses API call as model stream events: deltas as they come, each
 * output item as a generic message when its `response.output_item.done` arrives, the stop reason
 * and usage from `response.completed` (or `response.incomplete`). A stream that ends without one
 * of those is an error (retryable), never a turn; `error` and `response.failed` events throw.
 */
export function streamResponses(open: () => Promise<Response>, secrets: readonly string[] = []): AsyncGenerator<ModelStreamEvent> {
  const scope: CallScope = { provider: openaiResponsesProvider, secrets };
  return readSseStream(open, scope, (batches) => readResponsesStream(batches, scope));
}

async function* readResponsesStream(batches: AsyncGenerator<ServerSentEvent[]>, scope: CallScope): AsyncGenerator<ModelStreamEvent> {
  const items = new Map<number | string, PendingItem>();
  const emitted: ModelMessage[] = [];
  // Items already ended by output_item.done; the final response's other items were never streamed whole.
  const doneIds = new Set<string>();
  let doneCount = 0;
  let created = false;
  const cutToolCalls: OpenAIResponsesOutputItem[] = [];
  const find = (event: StreamEvent): PendingItem | undefined => items.get(event.output_index ?? -1) ?? (event.item_id === undefined ? undefined : items.get(event.item_id));
  for await (const batch of batches) for (const { data } of batch) {
    if (data === "[DONE]") continue;
    const event = parseStreamEvent(data, scope) as StreamEvent;
    switch (event.type) {
      case "response.output_item.added": {
        const item = { ...event.item! };
        const pending: PendingItem = { item, text: "", arguments: item.arguments ?? "", summaryIndex: undefined, summary: [], reasoning: "" };
        if (event.output_index !== undefined) items.set(event.output_index, pending);
        if (item.id !== undefined) items.set(item.id, pending);
        if (item.type === "function_call") yield { type: "tool-call-start", id: item.call_id ?? item.id ?? "", name: item.name ?? "" };
        break;
      }
      case "response.output_text.delta":
      case "response.refusal.delta": {
        const pending = find(event);
        if (pending === undefined || event.delta === undefined || event.delta === "") break;
        pending.text += event.delta;
        yield { type: "text-delta", delta: event.delta };
        break;
      }
      case "response.reasoning_summary_text.delta": {
        const pending = find(event);
        if (pending === undefined || event.delta === undefined || event.delta === "") break;
        // Summary parts are joined with a blank line in the thinking message: show them alike.
        const separator = pending.summaryIndex !== undefined && pending.summaryIndex !== event.summary_index ? "\n\n" : "";
        if (separator !== "" || pending.summary.length === 0) pending.summary.push("");
        pending.summary[pending.summary.length - 1] += event.delta;
        pending.summaryIndex = event.summary_index;
        yield { type: "thinking-delta", delta: separator + event.delta };
        break;
      }
      case "response.reasoning_text.delta": {
        // The reasoning itself, from servers that show it (gpt-oss on vLLM, Ollama).
        const pending = find(event);
        if (pending === undefined || event.delta === undefined || event.delta === "") break;
        pending.reasoning += event.delta;
        yield { type: "thinking-delta", delta: event.delta };
        break;
      }
      case "response.function_call_arguments.delta": {
        const pending = find(event);
        if (pending === undefined || event.delta === undefined || event.delta === "") break;
        pending.arguments += event.delta;
        yield { type: "tool-call-delta", id: pending.item.call_id ?? pending.item.id ?? "", delta: event.delta };
        break;
      }
      case "response.function_call_arguments.done": {
        const pending = find(event);
        if (pending !== undefined && event.arguments !== undefined) pending.arguments = event.arguments;
        break;
      }
      case "response.output_item.done": {
        const pending = find(event) ?? { item: { type: "" }, text: "", arguments: "", summaryIndex: undefined, summary: [], reasoning: "" };
        items.delete(event.output_index ?? -1);
        if (pending.item.id !== undefined) items.delete(pending.item.id);
        const item = completeItem(pending, event.item);
        doneCount++;
        if (item.id !== undefined) doneIds.add(item.id);
        const message = fromOutputItem(item);
        if (message !== undefined) {
          emitted.push(message);
          yield { type: "message", message };
        } else if (item.type === "function_call") {
          // Cut off or garbled arguments: acceptable only if the turn turns out to be cut (max
          // output tokens), and then the loop will not run the call. Decided at the end.
          cutToolCalls.push(item);
        }
        break;
      }
      case "response.completed":
      case "response.incomplete": {
        const final: OpenAIResponsesResponse = { ...event.response, status: event.response?.status ?? (event.type === "response.completed" ? "completed" : "incomplete") };
        // Some compatible servers end items only in the final response: take what no done event carried.
        for (const item of final.output ?? []) {
          if (item.id !== undefined ? doneIds.has(item.id) : doneCount > 0) continue;
          const open = item.id === undefined ? undefined : items.get(item.id);
          if (open !== undefined) for (const [key, value] of items) if (value === open) items.delete(key);
          const message = fromOutputItem(open === undefined ? item : completeItem(open, item));
          if (message !== undefined) {
            emitted.push(message);
            yield { type: "message", message };
          } else if (item.type === "function_call") cutToolCalls.push(item);
        }
        // A call still open at the end was cut as surely as one with garbled arguments.
        for (const pending of new Set(items.values())) if (pending.item.type === "function_call") cutToolCalls.push(completeItem(pending, undefined));
        const cut: ModelMessage[] = [];
        for (const item of cutToolCalls) {
          if (final.status !== "incomplete") throw invalidArgumentsError(item);
          cut.push(toolCall(item, parseToolInput(item.arguments ?? "") ?? {}));
        }
        yield { type: "response-end", ...stopFieldsOf(final, [...emitted, ...cut]) };
        // Cut calls after response-end, so the loop never starts them early.
        for (const message of cut) yield { type: "message", message };
        return;
      }
      case "response.created":
        // Two responses in one stream must never become one turn: the stream is broken, and retried.
        if (created) throw new ProviderError("openai-responses: a second response began in the stream", { provider: openaiResponsesProvider, retryable: true });
        created = true;
        break;
      case "response.failed":
      case "error":
        throw providerError(openaiResponsesProvider, undefined, undefined, data, openaiResponsesErrors, scope.secrets);
      default:
        break; // in_progress, part and done-text events, and event types added later
    }
  }
  throw new ProviderError("openai-responses: the stream ended before response.completed", { provider: openaiResponsesProvider, retryable: true });
}

// The done event carries the final item; the streamed text and arguments fill in what a
// compatible server leaves out of it.
function completeItem(pending: PendingItem, done: OpenAIResponsesOutputItem | undefined): OpenAIResponsesOutputItem {
  const item: OpenAIResponsesOutputItem = { ...pending.item, ...done };
  if (item.type === "function_call" && (done?.arguments === undefined || done.arguments === "")) item.arguments = pending.arguments;
  if (item.type === "message" && (item.content ?? []).length === 0 && pending.text !== "") item.content = [{ type: "output_text", text: pending.text }];
  if (item.type === "reasoning" && (item.summary ?? []).length === 0 && pending.summary.length > 0) item.summary = pending.summary.map((text) => ({ type: "summary_text", text }));
  if (item.type === "reasoning" && (item.content ?? []).length === 0 && pending.reasoning !== "") item.content = [{ type: "reasoning_text", text: pending.reasoning }];
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
