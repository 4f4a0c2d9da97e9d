import { shownAsStored } from "../shown-as-stored.ts";
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
import { answeredBy, readToolInput, refusedInput } from "../convert-shared.ts";
import { callSettings } from "../request-settings.ts";
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
import { withUrlDownloads } from "../download-parts.ts";

export type AnthropicOptions = AnthropicRequestOptions &
  TransportOptions & {
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
  const baseURL = baseUrlOf(options.baseURL, "ANTHROPIC_BASE_URL", "https://api.anthropic.com");
  const idleTimeoutMs = checkIdleTimeout(options.idleTimeoutMs);
  const invoke: InvokeModel = (tools, session, context) => {
    const apiKey = requireApiKey(options.apiKey, ["ANTHROPIC_API_KEY"], anthropicProvider);
    const body = toAnthropicRequest(session, tools, { ...options, settings: callSettings(context) });
    const request: PostOptions = {
      provider: anthropicProvider,
      url: `${baseURL}/v1/messages`,
      headers: { "x-api-key": apiKey, "anthropic-version": "2023-06-01", ...options.headers },
      body,
      fetch: options.fetch,
      signal: context.signal,
      errors: anthropicErrors,
      secrets: [apiKey],
      idleTimeoutMs,
      expect: options.stream === false ? "json" : "sse",
    };
    if (options.stream === false) {
      return readJsonAnswer(
        () => postJson(request),
        { provider: anthropicProvider, secrets: [apiKey], signal: context.signal },
        (answer) => fromAnthropicResponse(answer as AnthropicResponse, body.model),
      );
    }
    return streamMessages(() => postJson(request), [apiKey], body.model);
  };
  // The Messages API fetches image and PDF URLs itself: each is checked before it is passed on.
  const passing = withUrlDownloads(invoke, {
    ...options,
    adapter: anthropicProvider,
    stream: options.stream !== false,
    needsDownload: () => false,
  });
  return withUniqueToolIds(passing, anthropicProvider);
}

export const anthropicErrors: ErrorShape = {
  describe: (body) => {
    const error = (body as { error?: { type?: string; message?: string } }).error;
    return {
      ...(error?.message === undefined ? {} : { message: error.message }),
      ...(error?.type === undefined ? {} : { code: error.type }),
    };
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
export function streamMessages(
  open: () => Promise<Response>,
  secrets: readonly string[] = [],
  asked?: string,
): AsyncGenerator<ModelStreamEvent> {
  const scope: CallScope = { provider: anthropicProvider, secrets };
  return readSseStream(open, scope, (batches) => shownAsStored(readMessagesStream(batches, scope), asked));
}

type OpenBlock = { block: AnthropicContentBlock; json: string };

// What one Messages stream has said so far.
type MessagesStream = {
  blocks: Map<number, OpenBlock>;
  usage: AnthropicUsage;
  stopReason: string | null | undefined;
  stopDetails: AnthropicStopDetails | null | undefined;
  messageId: string | undefined;
  model: string | undefined;
  started: boolean;
  /** A content block began (or the start carried content): a start after this is a second message. */
  contentBegan: boolean;
  /** A tool call whose JSON was cut or garbled: acceptable only if the turn was cut (max_tokens). */
  cutToolCall: AnthropicContentBlock | undefined;
};

async function* readMessagesStream(
  batches: AsyncGenerator<ServerSentEvent[]>,
  scope: CallScope,
): AsyncGenerator<ModelStreamEvent> {
  const stream: MessagesStream = {
    blocks: new Map(),
    usage: {},
    stopReason: undefined,
    stopDetails: undefined,
    messageId: undefined,
    model: undefined,
    started: false,
    contentBegan: false,
    cutToolCall: undefined,
  };
  for await (const batch of batches)
    for (const { data } of batch) {
      const event = parseStreamEvent(data, scope) as StreamEvent;
      switch (event.type) {
        case "message_start":
          yield* messageStart(stream, event.message ?? {});
          break;
        case "content_block_start": {
          stream.contentBegan = true;
          const started = blockStart(stream, event);
          if (started !== undefined) yield started;
          break;
        }
        case "content_block_delta": {
          stream.contentBegan = true;
          const delta = blockDelta(stream, event);
          if (delta !== undefined) yield delta;
          break;
        }
        case "content_block_stop": {
          const done = blockStop(stream, event.index ?? 0);
          if (done !== undefined) yield done;
          break;
        }
        case "message_delta":
          stream.stopReason = event.delta?.stop_reason ?? stream.stopReason;
          stream.stopDetails = event.delta?.stop_details ?? stream.stopDetails;
          stream.usage = { ...stream.usage, ...definedOnly(event.usage) };
          break;
        case "message_stop":
          yield* messageStop(stream);
          return;
        case "error":
          throw providerError(anthropicProvider, undefined, undefined, data, anthropicErrors, scope.secrets);
        default:
          break; // ping, and event types added later
      }
    }
  throw new ProviderError("anthropic: the stream ended before message_stop", {
    provider: anthropicProvider,
    retryable: true,
  });
}

function* messageStart(stream: MessagesStream, message: AnthropicResponse): Generator<ModelStreamEvent> {
  // The same start sent again before any content (a proxy does this) is the same message: ignored.
  if (stream.started && !stream.contentBegan && message.id !== undefined && message.id === stream.messageId) return;
  // Two generations in one stream (a proxy that retried upstream and kept sending) must never
  // become one turn: the whole response is broken, and the loop retries it.
  if (stream.started) {
    throw new ProviderError(
      `anthropic: a second message (${message.id ?? "no id"}) began in the stream of ${stream.messageId ?? "another"}`,
      {
        provider: anthropicProvider,
        retryable: true,
      },
    );
  }
  stream.started = true;
  stream.messageId = message.id;
  stream.model = message.model;
  stream.usage = { ...message.usage };
  stream.stopReason = message.stop_reason ?? stream.stopReason;
  stream.stopDetails = message.stop_details ?? stream.stopDetails;
  // Some servers (caches, proxies) send the whole message here and only message_stop after it.
  for (const block of message.content ?? []) {
    stream.contentBegan = true;
    yield* wholeBlockEvents(block);
  }
}

function blockStart(stream: MessagesStream, event: StreamEvent): ModelStreamEvent | undefined {
  const block = { ...event.content_block! };
  // A block started again before its stop would silently replace the first one.
  if (stream.blocks.has(event.index ?? 0)) {
    throw new ProviderError(`anthropic: content block ${event.index ?? 0} started twice in the stream`, {
      provider: anthropicProvider,
      retryable: true,
    });
  }
  stream.blocks.set(event.index ?? 0, { block, json: "" });
  return block.type === "tool_use"
    ? { type: "tool-call-start", id: block.id ?? "", name: block.name ?? "" }
    : undefined;
}

function blockDelta(stream: MessagesStream, event: StreamEvent): ModelStreamEvent | undefined {
  const delta = event.delta ?? {};
  let open = stream.blocks.get(event.index ?? 0);
  // Text or thinking whose content_block_start a server left out is still text or thinking.
  if (open === undefined && (delta.type === "text_delta" || delta.type === "thinking_delta")) {
    open = { block: { type: delta.type === "text_delta" ? "text" : "thinking" }, json: "" };
    stream.blocks.set(event.index ?? 0, open);
  }
  if (open === undefined) return undefined;
  if (delta.type === "text_delta" && delta.text !== undefined) {
    open.block.text = (open.block.text ?? "") + delta.text;
    return { type: "text-delta", delta: delta.text };
  }
  if (delta.type === "thinking_delta" && delta.thinking !== undefined) {
    open.block.thinking = (open.block.thinking ?? "") + delta.thinking;
    return { type: "thinking-delta", delta: delta.thinking };
  }
  if (delta.type === "signature_delta" && delta.signature !== undefined) {
    open.block.signature = (open.block.signature ?? "") + delta.signature;
  } else if (delta.type === "input_json_delta" && delta.partial_json !== undefined) {
    open.json += delta.partial_json;
    if (delta.partial_json !== "")
      return { type: "tool-call-delta", id: open.block.id ?? "", delta: delta.partial_json };
  }
  return undefined;
}

function blockStop(stream: MessagesStream, index: number): ModelStreamEvent | undefined {
  const done = stream.blocks.get(index);
  stream.blocks.delete(index);
  if (done === undefined) return undefined;
  const message = finishBlock(done);
  // Cut off or garbled JSON: only acceptable if the turn turns out to be cut (max_tokens), and
  // then the loop will not run the call. Decided at message_stop.
  if (message === "cut") stream.cutToolCall = done.block;
  else if (message !== undefined) return { type: "message", message };
  return undefined;
}

function* messageStop(stream: MessagesStream): Generator<ModelStreamEvent> {
  // Blocks a server never closed are complete now.
  for (const index of [...stream.blocks.keys()].sort((x, y) => x - y)) {
    const open = stream.blocks.get(index)!;
    const message = finishBlock(open);
    if (message === "cut") stream.cutToolCall ??= open.block;
    else if (message !== undefined) yield { type: "message", message };
  }
  stream.blocks.clear();
  const cut = stream.cutToolCall;
  if (cut !== undefined && stream.stopReason !== "max_tokens") {
    throw new ProviderError(`anthropic: tool call "${cut.name ?? ""}" arrived with invalid JSON input`, {
      provider: anthropicProvider,
      retryable: true,
    });
  }
  yield {
    type: "response-end",
    ...stopFieldsOf(stream.stopReason, stream.usage, stream.stopDetails),
    ...answeredBy(stream.model, stream.messageId),
  };
  // After response-end, so the loop never starts it early.
  if (cut !== undefined) yield { type: "message", message: fromContentBlock({ ...cut, input: {} })! };
}

// The message of a finished block; "cut" for a tool call whose JSON is not complete.
function finishBlock(done: OpenBlock): ModelMessage | "cut" | undefined {
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
  for (const [key, value] of Object.entries(usage ?? {}))
    if (value !== null && value !== undefined) (result as Record<string, unknown>)[key] = value;
  return result;
}

export { toAnthropicRequest, fromAnthropicResponse } from "./convert.ts";
export type { AnthropicRequest, AnthropicRequestOptions, AnthropicResponse } from "./convert.ts";

// The errors these adapters throw, for users who import only this module.
export { ProviderError, ContextOverflowError, isProviderError, isContextOverflowError } from "../../errors.ts";
