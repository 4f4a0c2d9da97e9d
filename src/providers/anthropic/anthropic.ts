import { ProviderError } from "../../errors.ts";
import type { ModelStreamEvent } from "../../model/model-stream-event.ts";
import type { InvokeModel } from "../../model/invoke-model.ts";
import type { ModelMessage } from "../../session.ts";
import {
  anthropicProvider,
  fromAnthropicResponse,
  fromContentBlock,
  toAnthropicRequest,
  stopFieldsOf,
  type AnthropicContentBlock,
  type AnthropicRequestOptions,
  type AnthropicResponse,
  type AnthropicStopDetails,
  type AnthropicUsage,
} from "./convert.ts";
import { readToolInput, refusedInput } from "../convert-shared.ts";
import {
  checkIdleTimeout,
  env,
  parseStreamEvent,
  postJson,
  providerError,
  readJsonAnswer,
  readSseStream,
  type ErrorShape,
  type Fetch,
  type PostOptions,
  type CallScope,
  type TransportOptions,
} from "../http.ts";
import type { ServerSentEvent } from "../sse.ts";
import { withUniqueToolIds } from "../session-tool-ids.ts";

export type AnthropicOptions = AnthropicRequestOptions & TransportOptions & {
  /** Defaults to the `ANTHROPIC_API_KEY` environment variable. */
  apiKey?: string;
  /** The API origin without `/v1`, as in the official SDK (default `https://api.anthropic.com`). */
  baseURL?: string;
  /** Extra request headers (e.g. `anthropic-beta`). */
  headers?: Record<string, string>;
  fetch?: Fetch;
};

/**
 * An `invokeModel` for the Anthropic Messages API. Streams by default (`stream: false` for one
 * JSON response); failures become `ProviderError`s the loop retries when they are retryable.
 */
export function anthropic(options: AnthropicOptions): InvokeModel {
  const baseURL = (options.baseURL ?? env("ANTHROPIC_BASE_URL") ?? "https://api.anthropic.com").replace(/\/+$/, "");
  const idleTimeoutMs = checkIdleTimeout(options.idleTimeoutMs);
  return withUniqueToolIds((tools, session, context) => {
    const apiKey = options.apiKey ?? env("ANTHROPIC_API_KEY");
    if (apiKey === undefined) {
      throw new ProviderError("anthropic: no API key: set ANTHROPIC_API_KEY or pass apiKey", { provider: anthropicProvider });
    }
    const request: PostOptions = {
      provider: anthropicProvider,
      url: `${baseURL}/v1/messages`,
      headers: { "x-api-key": apiKey, "anthropic-version": "2023-06-01", ...options.headers },
      body: toAnthropicRequest(session, tools, options),
      fetch: options.fetch,
      signal: context.signal,
      errors: anthropicErrors,
      secrets: [apiKey],
      idleTimeoutMs,
      expect: options.stream === false ? "json" : "sse",
    };
    if (options.stream === false) {
      return readJsonAnswer(() => postJson(request), { provider: anthropicProvider, secrets: [apiKey], signal: context.signal }, (body) => fromAnthropicResponse(body as AnthropicResponse));
    }
    return streamMessages(() => postJson(request), [apiKey]);
  }, anthropicProvider);
}

export const anthropicErrors: ErrorShape = {
  describe: (body) => {
    const error = (body as { error?: { type?: string; message?: string } }).error;
    return { ...(error?.message === undefined ? {} : { message: error.message }), ...(error?.type === undefined ? {} : { code: error.type }) };
  },
  retryableCodes: ["overloaded_error", "api_error", "rate_limit_error"],
};

type StreamEvent = {
  type: string;
  index?: number;
  message?: AnthropicResponse;
  content_block?: AnthropicContentBlock;
  delta?: {
    type?: string;
    text?: string;
    thinking?: string;
    signature?: string;
    partial_json?: string;
    stop_reason?: string | null;
    stop_details?: AnthropicStopDetails | null;
  };
  usage?: AnthropicUsage;
  error?: { type?: string; message?: string };
};

/**
 * The SSE stream of one Messages API call as model stream events: deltas as they come, each
 * content block as a generic message when its `content_block_stop` arrives, the stop reason and
 * usage at the end. A stream that ends without `message_stop` is an error (retryable), never a turn.
 */
export function streamMessages(open: () => Promise<Response>, secrets: readonly string[] = []): AsyncGenerator<ModelStreamEvent> {
  const scope: CallScope = { provider: anthropicProvider, secrets };
  return readSseStream(open, scope, (batches) => readMessagesStream(batches, scope));
}

async function* readMessagesStream(batches: AsyncGenerator<ServerSentEvent[]>, scope: CallScope): AsyncGenerator<ModelStreamEvent> {
  const blocks = new Map<number, { block: AnthropicContentBlock; json: string }>();
  let usage: AnthropicUsage = {};
  let stopReason: string | null | undefined;
  let stopDetails: AnthropicStopDetails | null | undefined;
  let messageId: string | undefined;
  let started = false;
  let cutToolCall: AnthropicContentBlock | undefined;
  for await (const batch of batches) for (const { data } of batch) {
    const event = parseStreamEvent(data, scope) as StreamEvent;
    switch (event.type) {
      case "message_start": {
        const message = event.message ?? {};
        // Two generations in one stream (a proxy that retried upstream and kept sending) must never
        // become one turn: the whole response is broken, and the loop retries it.
        if (started) {
          throw new ProviderError(`anthropic: a second message (${message.id ?? "no id"}) began in the stream of ${messageId ?? "another"}`, {
            provider: anthropicProvider,
            retryable: true,
          });
        }
        started = true;
        messageId = message.id;
        usage = { ...message.usage };
        stopReason = message.stop_reason ?? stopReason;
        stopDetails = message.stop_details ?? stopDetails;
        // Some servers (caches, proxies) send the whole message here and only message_stop after it.
        for (const block of message.content ?? []) yield* wholeBlockEvents(block);
        break;
      }
      case "content_block_start": {
        const block = { ...event.content_block! };
        // A block started again before its stop would silently replace the first one.
        if (blocks.has(event.index ?? 0)) {
          throw new ProviderError(`anthropic: content block ${event.index ?? 0} started twice in the stream`, { provider: anthropicProvider, retryable: true });
        }
        blocks.set(event.index ?? 0, { block, json: "" });
        if (block.type === "tool_use") yield { type: "tool-call-start", id: block.id ?? "", name: block.name ?? "" };
        break;
      }
      case "content_block_delta": {
        const delta = event.delta ?? {};
        let open = blocks.get(event.index ?? 0);
        // Text or thinking whose content_block_start a server left out is still text or thinking.
        if (open === undefined && (delta.type === "text_delta" || delta.type === "thinking_delta")) {
          open = { block: { type: delta.type === "text_delta" ? "text" : "thinking" }, json: "" };
          blocks.set(event.index ?? 0, open);
        }
        if (open === undefined) break;
        if (delta.type === "text_delta" && delta.text !== undefined) {
          open.block.text = (open.block.text ?? "") + delta.text;
          yield { type: "text-delta", delta: delta.text };
        } else if (delta.type === "thinking_delta" && delta.thinking !== undefined) {
          open.block.thinking = (open.block.thinking ?? "") + delta.thinking;
          yield { type: "thinking-delta", delta: delta.thinking };
        } else if (delta.type === "signature_delta" && delta.signature !== undefined) {
          open.block.signature = (open.block.signature ?? "") + delta.signature;
        } else if (delta.type === "input_json_delta" && delta.partial_json !== undefined) {
          open.json += delta.partial_json;
          if (delta.partial_json !== "") yield { type: "tool-call-delta", id: open.block.id ?? "", delta: delta.partial_json };
        }
        break;
      }
      case "content_block_stop": {
        const done = blocks.get(event.index ?? 0);
        blocks.delete(event.index ?? 0);
        if (done === undefined) break;
        const message = finishBlock(done);
        // Cut off or garbled JSON: only acceptable if the turn turns out to be cut (max_tokens),
        // and then the loop will not run the call. Decided at message_stop.
        if (message === "cut") cutToolCall = done.block;
        else if (message !== undefined) yield { type: "message", message };
        break;
      }
      case "message_delta":
        stopReason = event.delta?.stop_reason ?? stopReason;
        stopDetails = event.delta?.stop_details ?? stopDetails;
        usage = { ...usage, ...definedOnly(event.usage) };
        break;
      case "message_stop":
        // Blocks a server never closed are complete now.
        for (const index of [...blocks.keys()].sort((x, y) => x - y)) {
          const message = finishBlock(blocks.get(index)!);
          if (message === "cut") cutToolCall ??= blocks.get(index)!.block;
          else if (message !== undefined) yield { type: "message", message };
        }
        blocks.clear();
        if (cutToolCall !== undefined) {
          if (stopReason !== "max_tokens") {
            throw new ProviderError(`anthropic: tool call "${cutToolCall.name ?? ""}" arrived with invalid JSON input`, {
              provider: anthropicProvider,
              retryable: true,
            });
          }
        }
        yield { type: "response-end", ...stopFieldsOf(stopReason, usage, stopDetails) };
        // After response-end, so the loop never starts it early.
        if (cutToolCall !== undefined) yield { type: "message", message: fromContentBlock({ ...cutToolCall, input: {} })! };
        return;
      case "error":
        throw providerError(anthropicProvider, undefined, undefined, data, anthropicErrors, scope.secrets);
      default:
        break; // ping, and event types added later
    }
  }
  throw new ProviderError("anthropic: the stream ended before message_stop", { provider: anthropicProvider, retryable: true });
}

// The message of a finished block; "cut" for a tool call whose JSON is not complete.
function finishBlock(done: { block: AnthropicContentBlock; json: string }): ModelMessage | "cut" | undefined {
  if (done.block.type !== "tool_use") return fromContentBlock(done.block);
  const read = readToolInput(done.json === "" ? done.block.input : done.json);
  if (read.kind === "invalid") return "cut";
  return { type: "tool_call", id: done.block.id ?? "", name: done.block.name ?? "", ...refusedInput(read) };
}

// A block that arrived complete (in message_start): the events a streamed one would have produced.
function* wholeBlockEvents(block: AnthropicContentBlock): Generator<ModelStreamEvent> {
  const message = fromContentBlock(block);
  if (message === undefined) return;
  if ("type" in message && message.type === "tool_call") {
    yield { type: "tool-call-start", id: message.id, name: message.name };
  } else if (message.content !== "") {
    yield { type: "type" in message ? "thinking-delta" : "text-delta", delta: message.content };
  }
  yield { type: "message", message };
}

function definedOnly(usage: AnthropicUsage | undefined): AnthropicUsage {
  const result: AnthropicUsage = {};
  for (const [key, value] of Object.entries(usage ?? {})) if (value !== null && value !== undefined) (result as Record<string, unknown>)[key] = value;
  return result;
}

export { toAnthropicRequest, fromAnthropicResponse } from "./convert.ts";
export type { AnthropicRequest, AnthropicRequestOptions, AnthropicResponse } from "./convert.ts";

// The errors these adapters throw, for users who import only this module.
export { ProviderError, ContextOverflowError, isProviderError, isContextOverflowError } from "../../errors.ts";
