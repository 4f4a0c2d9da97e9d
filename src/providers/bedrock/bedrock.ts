import { shownAsStored } from "../shown-as-stored.ts";
import { ContextOverflowError, ProviderError, errorMessage, isProviderError } from "../../errors.ts";
import type { ModelStreamEvent } from "../../model/model-stream-event.ts";
import type { InvokeModel } from "../../model/invoke-model.ts";
import {
  bedrockProvider,
  fromBedrockResponse,
  fromContentBlock,
  toBedrockRequest,
  stopFieldsOf,
  type BedrockContentBlock,
  type BedrockRequestOptions,
  type BedrockResponse,
  type BedrockUsage,
} from "./convert.ts";
import type { EventStreamMessage } from "../aws-event-stream.ts";
import { signRequest, type AwsCredentials } from "./sign.ts";
import { readToolInput } from "../convert-shared.ts";
import {
  checkIdleTimeout,
  parseStreamEvent,
  postJson,
  readAwsEventStream,
  readJsonAnswer,
  type Fetch,
  type CallScope,
  type TransportOptions,
} from "../http.ts";
import { env } from "../environment.ts";
import { bounded, providerError, type ErrorShape } from "../provider-error.ts";
import { withUniqueToolIds } from "../session-tool-ids.ts";
import { callSettings } from "../request-settings.ts";
import { answeredBy } from "../convert-shared.ts";
import { withUrlDownloads } from "../download-parts.ts";

export type BedrockOptions = BedrockRequestOptions &
  TransportOptions & {
    /** A model id, inference profile id or ARN, e.g. `us.anthropic.claude-sonnet-4-5-20250929-v1:0`. */
    model: string;
    /** Defaults to `AWS_REGION`, then `AWS_DEFAULT_REGION`. */
    region?: string;
    /**
     * Keys for SigV4 signing, or a function returning them, called for each request (e.g.
     * `fromNodeProviderChain()` of `@aws-sdk/credential-providers`, for profiles, SSO and roles).
     * Defaults to `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN`.
     */
    credentials?: AwsCredentials | (() => Promise<AwsCredentials>);
    /** A Bedrock API key, sent as a bearer token instead of signing. Defaults to `AWS_BEARER_TOKEN_BEDROCK`, which wins over access keys from the environment. */
    apiKey?: string;
    /** Defaults to `AWS_ENDPOINT_URL_BEDROCK_RUNTIME`, then `https://bedrock-runtime.{region}.amazonaws.com`. */
    baseURL?: string;
    /** Extra request headers (signed with the rest). */
    headers?: Record<string, string>;
    fetch?: Fetch;
    /** ConverseStream (default) or Converse. */
    stream?: boolean;
  };

/**
 * An `invokeModel` for the Bedrock Converse API, any model it serves. Streams by default (the AWS
 * binary event stream, decoded here); `stream: false` for one JSON response. Failures become
 * `ProviderError`s the loop retries when they are retryable.
 */
export function bedrock(options: BedrockOptions): InvokeModel {
  const idleTimeoutMs = checkIdleTimeout(options.idleTimeoutMs);
  // Converse takes bytes (or S3), never an https URL: URL parts are downloaded first.
  const download = <T extends InvokeModel>(invoke: T): T =>
    withUrlDownloads(invoke, {
      ...options,
      adapter: bedrockProvider,
      stream: options.stream !== false,
      needsDownload: () => true,
    });
  return withUniqueToolIds(
    download((tools, session, context) => {
      const auth = authFor(options);
      const region = options.region ?? env("AWS_REGION") ?? env("AWS_DEFAULT_REGION");
      const baseURL = (options.baseURL ?? env("AWS_ENDPOINT_URL_BEDROCK_RUNTIME") ?? defaultEndpoint(region)).replace(
        /\/+$/,
        "",
      );
      const stream = options.stream !== false;
      const settings = callSettings(context);
      const model = settings?.model ?? options.model;
      const url = `${baseURL}/model/${encodeURIComponent(model)}/${stream ? "converse-stream" : "converse"}`;
      const body = toBedrockRequest(session, tools, { ...options, model, settings });
      const secrets: string[] = auth.kind === "bearer" ? [auth.token] : [];
      const post = async (): Promise<Response> => {
        const authorized = await authorizedFetch(
          auth,
          region ?? regionOf(baseURL),
          options.fetch ?? globalThis.fetch,
          secrets,
        );
        return postJson({
          provider: bedrockProvider,
          url,
          headers: options.headers ?? {},
          body,
          fetch: authorized,
          signal: context.signal,
          errors: bedrockErrors,
          secrets,
          idleTimeoutMs,
          expect: stream ? "aws-event-stream" : "json",
        }).catch((error: unknown) => {
          throw withContextOverflow(error);
        });
      };
      if (!stream)
        return readJsonAnswer(post, { provider: bedrockProvider, secrets, signal: context.signal }, (body) =>
          fromBedrockResponse(body as BedrockResponse, model),
        );
      return streamConverse(post, context.signal, secrets, model);
    }),
    bedrockProvider,
  );
}

type Auth =
  { kind: "bearer"; token: string } | { kind: "sigv4"; credentials: AwsCredentials | (() => Promise<AwsCredentials>) };

// Read at call time, so a key set after the model was created is used.
function authFor(options: BedrockOptions): Auth {
  if (options.apiKey !== undefined) return { kind: "bearer", token: options.apiKey };
  if (options.credentials !== undefined) return { kind: "sigv4", credentials: options.credentials };
  const token = env("AWS_BEARER_TOKEN_BEDROCK");
  if (token !== undefined) return { kind: "bearer", token };
  const accessKeyId = env("AWS_ACCESS_KEY_ID");
  const secretAccessKey = env("AWS_SECRET_ACCESS_KEY");
  const sessionToken = env("AWS_SESSION_TOKEN");
  if (accessKeyId !== undefined && secretAccessKey !== undefined) {
    return {
      kind: "sigv4",
      credentials: { accessKeyId, secretAccessKey, ...(sessionToken === undefined ? {} : { sessionToken }) },
    };
  }
  throw new ProviderError(
    "bedrock: no credentials: set AWS_BEARER_TOKEN_BEDROCK (a Bedrock API key), or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY " +
      "(and AWS_SESSION_TOKEN for temporary credentials), or pass apiKey or credentials",
    { provider: bedrockProvider },
  );
}

function defaultEndpoint(region: string | undefined): string {
  if (region === undefined)
    throw new ProviderError("bedrock: no region: set AWS_REGION (or AWS_DEFAULT_REGION), or pass region or baseURL", {
      provider: bedrockProvider,
    });
  return `https://bedrock-runtime.${region}.amazonaws.com`;
}

// A custom endpoint (a VPC endpoint, a FIPS one) still names its region, which SigV4 must sign.
function regionOf(baseURL: string): string | undefined {
  return /bedrock-runtime(?:-fips)?\.([a-z0-9-]+)\./.exec(new URL(baseURL).hostname)?.[1];
}

async function authorizedFetch(
  auth: Auth,
  region: string | undefined,
  fetchImpl: Fetch,
  secrets: string[],
): Promise<Fetch> {
  if (auth.kind === "bearer") {
    return (url, init) =>
      fetchImpl(url, {
        ...init,
        headers: { ...Object.fromEntries(new Headers(init.headers)), authorization: `Bearer ${auth.token}` },
      });
  }
  let credentials: AwsCredentials;
  try {
    credentials = typeof auth.credentials === "function" ? await auth.credentials() : auth.credentials;
  } catch (error) {
    throw new ProviderError(bounded(`bedrock: could not load credentials: ${errorMessage(error)}`, []), {
      provider: bedrockProvider,
      cause: error,
    });
  }
  secrets.push(
    credentials.secretAccessKey,
    ...(credentials.sessionToken === undefined ? [] : [credentials.sessionToken]),
  );
  if (region === undefined)
    throw new ProviderError("bedrock: no region to sign for: set AWS_REGION or pass region", {
      provider: bedrockProvider,
    });
  // Signed where the body is final: these are the exact bytes postJson sends.
  return async (url, init) => {
    const headers = await signRequest({
      method: init.method ?? "POST",
      url,
      headers: Object.fromEntries(new Headers(init.headers)),
      body: typeof init.body === "string" ? init.body : "",
      region,
      service: "bedrock",
      credentials,
    });
    return fetchImpl(url, { ...init, headers });
  };
}

export const bedrockErrors: ErrorShape = {
  // Bedrock names the error in the `x-amzn-errortype` header; a stream's exception (and some
  // proxies) in the body's `__type`, as AWS's JSON protocols do.
  describe: (body, headers) => {
    const fields = body as { message?: unknown; Message?: unknown; __type?: unknown };
    const message =
      typeof fields.message === "string"
        ? fields.message
        : typeof fields.Message === "string"
          ? fields.Message
          : undefined;
    const type = typeof fields.__type === "string" ? fields.__type : (headers?.get("x-amzn-errortype") ?? undefined);
    const code = type === undefined ? undefined : errorCode(type);
    return { ...(message === undefined ? {} : { message }), ...(code === undefined ? {} : { code }) };
  },
  retryableCodes: [
    "ThrottlingException",
    "ServiceUnavailableException",
    "InternalServerException",
    "ModelStreamErrorException",
    "ModelTimeoutException",
    "ModelNotReadyException",
  ],
};

// `ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/`, `aws.protocols#ThrottlingException`
// and the stream's `throttlingException` all name the same error.
function errorCode(type: string): string {
  const name = type.split(":")[0]!.split("#").pop()!;
  return name.charAt(0).toUpperCase() + name.slice(1);
}

// Bedrock's phrasings for a request over the context window that the shared patterns miss.
const overflowPatterns = [
  /input length and `?max_tokens`? exceed context limit/i,
  /too many total text bytes/i,
  /input tokens exceeds? (?:the )?maximum/i,
];

function withContextOverflow(error: unknown): unknown {
  // By name: ContextOverflowError has ProviderError's shape, so its guard would narrow to never.
  if (!isProviderError(error) || error.name === "ContextOverflowError") return error;
  if (error.status !== undefined && error.status !== 400 && error.status !== 413) return error;
  if (!overflowPatterns.some((pattern) => pattern.test(error.message))) return error;
  return new ContextOverflowError(error.message, {
    provider: error.provider,
    ...(error.status === undefined ? {} : { status: error.status }),
    ...(error.requestId === undefined ? {} : { requestId: error.requestId }),
    ...(error.code === undefined ? {} : { code: error.code }),
  });
}

type OpenBlock = { index: number; block: BedrockContentBlock; json: string; redacted: string[] };

type StreamEvent = {
  contentBlockIndex?: number;
  start?: { toolUse?: { toolUseId?: string; name?: string } };
  delta?: {
    text?: string;
    toolUse?: { input?: string };
    reasoningContent?: { text?: string; signature?: string; redactedContent?: string };
  };
  stopReason?: string;
  usage?: BedrockUsage;
};

const textDecoder = new TextDecoder();

/**
 * The event stream of one ConverseStream call as model stream events: deltas as they come, each
 * content block as a generic message when its `contentBlockStop` arrives, the stop reason and usage
 * (from `messageStop` and `metadata`) at the end. Exception frames become typed errors. A stream
 * that ends without `messageStop` is an error (retryable), never a turn.
 */
export function streamConverse(
  open: () => Promise<Response>,
  signal?: AbortSignal,
  secrets: readonly string[] = [],
  model?: string,
): AsyncGenerator<ModelStreamEvent> {
  const scope: CallScope = { provider: bedrockProvider, secrets, signal };
  return readAwsEventStream(open, scope, (batches) => shownAsStored(readConverseStream(batches, scope, model)));
}

// What one ConverseStream has said so far.
type ConverseStream = {
  blocks: Map<number, OpenBlock>;
  stopReason: string | undefined;
  stopped: boolean;
  started: boolean;
  usage: BedrockUsage | undefined;
  hasToolCalls: boolean;
  /** Calls whose JSON was cut or garbled: acceptable only if the turn was cut (max_tokens). */
  cutToolCalls: BedrockContentBlock[];
  /** The model asked for: Converse does not name the one that answered. */
  model: string | undefined;
};

async function* readConverseStream(
  batches: AsyncGenerator<EventStreamMessage[]>,
  scope: CallScope,
  model: string | undefined,
): AsyncGenerator<ModelStreamEvent> {
  const stream: ConverseStream = {
    model,
    blocks: new Map(),
    stopReason: undefined,
    stopped: false,
    started: false,
    usage: undefined,
    hasToolCalls: false,
    cutToolCalls: [],
  };
  for await (const batch of batches)
    for (const frame of batch) {
      const messageType = frame.headers[":message-type"];
      if (messageType === "exception" || messageType === "error") throw streamError(frame, scope.secrets);
      if (messageType !== "event") continue;
      const event = parseStreamEvent(textDecoder.decode(frame.payload), scope) as StreamEvent;
      const index = event.contentBlockIndex ?? 0;
      switch (frame.headers[":event-type"]) {
        case "contentBlockStart": {
          const started = blockStart(stream, index, event);
          if (started !== undefined) yield started;
          break;
        }
        case "contentBlockDelta": {
          const delta = blockDelta(stream, index, event.delta ?? {});
          if (delta !== undefined) yield delta;
          break;
        }
        case "contentBlockStop": {
          const open = stream.blocks.get(index);
          const done = open === undefined ? undefined : finishBlock(stream, open);
          if (done !== undefined) yield done;
          break;
        }
        case "messageStop":
          yield* messageStop(stream, event.stopReason);
          break;
        case "metadata":
          stream.usage = event.usage;
          break;
        case "messageStart":
          // Two generations in one stream must never become one turn: the response is broken, and retried.
          if (stream.started)
            throw new ProviderError("bedrock: a second message began in the stream", {
              provider: bedrockProvider,
              retryable: true,
            });
          stream.started = true;
          break;
        default:
          break; // event types added later
      }
      if (stream.stopped && stream.usage !== undefined) {
        yield* turnEndEvents(stream);
        return;
      }
    }
  // `metadata` (usage) normally follows `messageStop`; the turn itself is complete without it.
  if (stream.stopped) {
    yield* turnEndEvents(stream);
    return;
  }
  throw new ProviderError("bedrock: the stream ended before messageStop", {
    provider: bedrockProvider,
    retryable: true,
  });
}

function blockStart(stream: ConverseStream, index: number, event: StreamEvent): ModelStreamEvent | undefined {
  const toolUse = event.start?.toolUse;
  if (toolUse === undefined) return undefined;
  // A block started again before its stop would silently replace the first one.
  if (stream.blocks.has(index))
    throw new ProviderError(`bedrock: content block ${index} started twice in the stream`, {
      provider: bedrockProvider,
      retryable: true,
    });
  stream.blocks.set(index, {
    index,
    block: { toolUse: { toolUseId: toolUse.toolUseId ?? "", name: toolUse.name ?? "" } },
    json: "",
    redacted: [],
  });
  return { type: "tool-call-start", id: toolUse.toolUseId ?? "", name: toolUse.name ?? "" };
}

function blockDelta(
  stream: ConverseStream,
  index: number,
  delta: NonNullable<StreamEvent["delta"]>,
): ModelStreamEvent | undefined {
  // Text and reasoning blocks have no start event: their first delta opens them.
  let open = stream.blocks.get(index);
  if (open === undefined) {
    open = { index, block: {}, json: "", redacted: [] };
    stream.blocks.set(index, open);
  }
  const block = open.block;
  if (delta.text !== undefined) {
    block.text = (block.text ?? "") + delta.text;
    return delta.text === "" ? undefined : { type: "text-delta", delta: delta.text };
  }
  if (delta.toolUse?.input !== undefined) {
    open.json += delta.toolUse.input;
    return delta.toolUse.input === ""
      ? undefined
      : { type: "tool-call-delta", id: block.toolUse?.toolUseId ?? "", delta: delta.toolUse.input };
  }
  const reasoning = delta.reasoningContent;
  if (reasoning === undefined) return undefined;
  const text = ((block.reasoningContent ??= {}).reasoningText ??= {});
  if (reasoning.signature !== undefined) text.signature = (text.signature ?? "") + reasoning.signature;
  if (reasoning.redactedContent !== undefined) open.redacted.push(reasoning.redactedContent);
  if (reasoning.text === undefined) return undefined;
  text.text = (text.text ?? "") + reasoning.text;
  return reasoning.text === "" ? undefined : { type: "thinking-delta", delta: reasoning.text };
}

// The message for a finished block; a tool call whose JSON did not parse waits for the stop reason.
function finishBlock(stream: ConverseStream, open: OpenBlock): ModelStreamEvent | undefined {
  stream.blocks.delete(open.index);
  const block = open.block;
  if (block.toolUse !== undefined) {
    stream.hasToolCalls = true;
    const read = readToolInput(open.json);
    if (read.kind === "invalid") {
      stream.cutToolCalls.push(block);
      return undefined;
    }
    // A refused input stays text: fromContentBlock reads it again and gives the call its error.
    block.toolUse.input = read.kind === "ok" ? read.input : open.json;
  }
  if (open.redacted.length > 0) block.reasoningContent = { redactedContent: joinBase64(open.redacted) };
  const message = fromContentBlock(block);
  return message === undefined ? undefined : { type: "message", message };
}

function* messageStop(stream: ConverseStream, stopReason: string | undefined): Generator<ModelStreamEvent> {
  // Blocks some models never close.
  for (const open of [...stream.blocks.values()].sort((a, b) => a.index - b.index)) {
    const done = finishBlock(stream, open);
    if (done !== undefined) yield done;
  }
  stream.stopReason = stopReason;
  stream.stopped = true;
  if (stream.cutToolCalls.length > 0 && stopReason !== "max_tokens") {
    throw new ProviderError(
      `bedrock: tool call "${stream.cutToolCalls[0]!.toolUse?.name ?? ""}" arrived with invalid JSON input`,
      { provider: bedrockProvider, retryable: true },
    );
  }
}

// The stop reason and usage, then the calls cut off by the length limit, with `{}` input: after
// response-end, so the loop never starts them early.
function* turnEndEvents(stream: ConverseStream): Generator<ModelStreamEvent> {
  yield {
    type: "response-end",
    ...stopFieldsOf(stream.stopReason, stream.usage, stream.hasToolCalls),
    ...answeredBy(undefined, undefined, stream.model),
  };
  for (const cut of stream.cutToolCalls)
    yield { type: "message", message: fromContentBlock({ toolUse: { ...cut.toolUse, input: {} } })! };
}

function streamError(frame: EventStreamMessage, secrets: CallScope["secrets"]): unknown {
  const text = textDecoder.decode(frame.payload);
  let body: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(text) as unknown;
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed))
      body = parsed as Record<string, unknown>;
  } catch {
    body = text.trim() === "" ? {} : { message: text };
  }
  const type = frame.headers[":exception-type"] ?? frame.headers[":error-code"];
  const message = body.message ?? frame.headers[":error-message"];
  const described = JSON.stringify({
    ...body,
    ...(typeof type === "string" ? { __type: type } : {}),
    ...(typeof message === "string" ? { message } : {}),
  });
  // The status the same exception has as an HTTP response. Without it a throttling message
  // ("Too many tokens, please wait before trying again.") would read as a context overflow.
  const status = typeof type === "string" ? exceptionStatus[errorCode(type)] : undefined;
  return withContextOverflow(providerError(bedrockProvider, status, undefined, described, bedrockErrors, secrets));
}

const exceptionStatus: Record<string, number> = {
  ValidationException: 400,
  ThrottlingException: 429,
  ModelStreamErrorException: 424,
  InternalServerException: 500,
  ServiceUnavailableException: 503,
};

// Base64 pieces are joined as bytes: each piece may end in padding.
function joinBase64(pieces: readonly string[]): string {
  if (pieces.length === 1) return pieces[0]!;
  return btoa(pieces.map((piece) => atob(piece)).join(""));
}

export { toBedrockRequest, fromBedrockResponse } from "./convert.ts";
export type { BedrockRequest, BedrockRequestOptions, BedrockResponse } from "./convert.ts";
export type { AwsCredentials } from "./sign.ts";

// The errors these adapters throw, for users who import only this module.
export { ProviderError, ContextOverflowError, isProviderError, isContextOverflowError } from "../../errors.ts";
