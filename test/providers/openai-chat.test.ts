import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import {
  agentLoop,
  extendSession,
  initSession,
  isContextOverflowError,
  isProviderError,
  structuredOutput,
  type InvokeModel,
  type JsonObject,
  type ModelMessage,
  type ModelStreamEvent,
  type ProviderError,
  type Session,
  type ToolSchema,
} from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
// The package's ./openai entry re-exports these once it exists; the adapter's own module until then.
import { fromOpenAIChatResponse, openaiChat, streamOpenAIChat, toOpenAIChatRequest } from "simple-agent-loop/openai";
import { expectEveryCallAnsweredOnce, withoutTs, withoutAnswerer } from "../helpers.ts";
import { conformanceSuite, liveAgentSuite, type ErrorKind, type WireTurn } from "./conformance.ts";
import { sse, sseHeaders, startReplayServer, type ReplayResponse, type ReplayServer } from "./replay-server.ts";
import { recordedFixtures } from "./fixtures.ts";
import { openaiChatParts } from "./wire-parts.ts";

const { text: fixture } = recordedFixtures("openai-chat");

type WireToolCall = { id: string; type: "function"; function: { name: string; arguments: string } };
type WireMessage = {
  role: string;
  content?: string | null;
  tool_calls?: WireToolCall[];
  tool_call_id?: string;
  reasoning_content?: string;
};
type Body = {
  messages: WireMessage[];
  tools?: { function: { name: string; description: string; parameters: Record<string, unknown> } }[];
};

const finishReasons = { end_turn: "stop", tool_use: "tool_calls", max_tokens: "length" } as const;

function turnResponse(turn: WireTurn, stream: boolean): ReplayResponse {
  const finishReason = finishReasons[turn.stopReason];
  const usage = {
    prompt_tokens: turn.usage.input,
    completion_tokens: turn.usage.output,
    total_tokens: turn.usage.input + turn.usage.output,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0 },
  };
  const toolCalls = (turn.toolCalls ?? []).map((call) => ({
    id: call.id,
    type: "function",
    function: { name: call.name, arguments: JSON.stringify(call.input) },
  }));
  const base = { id: "chatcmpl-test", created: 1760000000, model: "gpt-test" };
  if (!stream) {
    const message = {
      role: "assistant",
      content: turn.text ?? null,
      refusal: null,
      ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
    };
    return {
      body: JSON.stringify({
        ...base,
        object: "chat.completion",
        choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason }],
        usage,
      }),
    };
  }
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
    ...base,
    object: "chat.completion.chunk",
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  });
  const chunks: unknown[] = [chunk({ role: "assistant", content: turn.text === undefined ? null : "" })];
  const text = turn.text ?? "";
  for (let at = 0; at < text.length; at += 10) chunks.push(chunk({ content: text.slice(at, at + 10) }));
  toolCalls.forEach((call, index) => {
    chunks.push(
      chunk({
        tool_calls: [{ index, id: call.id, type: "function", function: { name: call.function.name, arguments: "" } }],
      }),
    );
    const json = call.function.arguments;
    for (let at = 0; at < json.length; at += 7)
      chunks.push(chunk({ tool_calls: [{ index, function: { arguments: json.slice(at, at + 7) } }] }));
  });
  chunks.push(chunk({}, finishReason));
  chunks.push({ ...base, object: "chat.completion.chunk", choices: [], usage });
  return { headers: sseHeaders, chunks: sse(chunks, { done: true }) };
}

function errorResponse(kind: ErrorKind): ReplayResponse {
  const error = (
    status: number,
    body: Record<string, unknown>,
    headers: Record<string, string> = {},
  ): ReplayResponse => ({
    status,
    headers: { "content-type": "application/json", "x-request-id": "req_test", ...headers },
    body: JSON.stringify({ error: { param: null, ...body } }),
  });
  if (kind === "rate_limit") {
    return error(
      429,
      {
        message: "Rate limit reached for gpt-4o on requests per min (RPM): Limit 3, Used 3, Requested 1.",
        type: "requests",
        code: "rate_limit_exceeded",
      },
      { "retry-after": "0" },
    );
  }
  if (kind === "server")
    return error(500, {
      message: "The server had an error while processing your request. Sorry about that!",
      type: "server_error",
      code: null,
    });
  if (kind === "context_overflow") {
    return error(400, {
      message:
        "This model's maximum context length is 128000 tokens. However, your messages resulted in 130012 tokens. Please reduce the length of the messages.",
      type: "invalid_request_error",
      param: "messages",
      code: "context_length_exceeded",
    });
  }
  return error(400, {
    message: "Missing required parameter: 'messages'.",
    type: "invalid_request_error",
    param: "messages",
    code: "missing_required_parameter",
  });
}

conformanceSuite({
  name: "openai-chat",
  contentIn: openaiChatParts,
  fetchesImageUrls: true,
  answeringModel: "gpt-test",
  createModel: (origin, options) => openaiChat({ model: "gpt-test", baseURL: `${origin}/v1`, ...options }),
  readStream: (open) => streamOpenAIChat(open),
  turnResponse,
  errorResponse,
  toolResultsIn: (body) =>
    (body as Body).messages
      .filter((message) => message.role === "tool")
      .map((message) => ({ id: message.tool_call_id!, output: message.content! })),
  toolNamesIn: (body) =>
    ((body as { tools?: { function: { name: string } }[] }).tools ?? []).map((schema) => schema.function.name),
  toolCallsIn: (body) =>
    (body as Body).messages.flatMap((message) =>
      (message.tool_calls ?? []).map((call) => ({ id: call.id, name: call.function.name })),
    ),
  skip: {
    "url-download-off": "Chat Completions fetches image URLs itself (file URLs are downloaded: see its own test)",
  },
});

/** One call of an adapter, outside the loop: its messages, and for a stream its events. */
async function invokeOnce(
  model: InvokeModel,
  session: Session,
  tools: ToolSchema[] = [],
): Promise<{ messages: ModelMessage[]; events: ModelStreamEvent[] }> {
  const result = model(tools, session, { signal: new AbortController().signal, iteration: 1 });
  if (Array.isArray(result) || !(Symbol.asyncIterator in result)) return { messages: await result, events: [] };
  const events: ModelStreamEvent[] = [];
  for await (const event of result) events.push(event);
  const messages = events.flatMap((event) => (event.type === "message" ? [event.message] : []));
  return { messages, events };
}

const endOf = (events: ModelStreamEvent[]) => events.find((event) => event.type === "response-end");
const toolSchemas = (body: Body): ToolSchema[] =>
  (body.tools ?? []).map(({ function: definition }) => ({
    name: definition.name,
    description: definition.description,
    input_schema: definition.parameters as ToolSchema["input_schema"],
  }));

type Cassette = {
  interactions: {
    request: { body?: string; parsed_body?: Body };
    response: { status: { code: number }; headers: Record<string, string[]>; body: { string: string | Uint8Array } };
  }[];
};
const cassette = (name: string): Cassette => parseYaml(fixture(name)) as Cassette;
const requestOf = (interaction: Cassette["interactions"][number]): Body =>
  interaction.request.parsed_body ?? (JSON.parse(interaction.request.body!) as Body);

describe("openai-chat: recorded responses", () => {
  let server: ReplayServer;
  beforeAll(async () => {
    server = await startReplayServer();
  });
  afterAll(async () => {
    await server.close();
  });
  const model = (stream = true) =>
    openaiChat({ model: "gpt-4o", baseURL: `${server.origin}/v1`, apiKey: "sk-test-openai-key-123456", stream });

  it("parses two parallel tool calls streamed by index (raw SSE with [DONE]), each complete before the reply ends", async () => {
    server.enqueue({
      headers: sseHeaders,
      body: fixture("openai-python__parse-multiple-pydantic-tools__f82268f2.sse.txt"),
    });
    const { messages, events } = await invokeOnce(model(), initSession("s", "u"));
    expect(messages).toStrictEqual([
      {
        type: "tool_call",
        id: "call_JMW1whyEaYG438VE1OIflxA2",
        name: "GetWeatherArgs",
        input: { city: "Edinburgh", country: "GB", units: "c" },
      },
      {
        type: "tool_call",
        id: "call_DNYTawLBoN8fj3KN6qU9N1Ou",
        name: "get_stock_price",
        input: { ticker: "AAPL", exchange: "NASDAQ" },
      },
    ]);
    expect(withoutAnswerer(endOf(events))).toStrictEqual({
      type: "response-end",
      stopReason: "tool_use",
      usage: { inputTokens: 149, outputTokens: 60 },
    });
    // The first call is emitted as soon as the second begins: eager tools can start it.
    const kinds = events.map((event) =>
      event.type === "message"
        ? `message:${(event.message as { id: string }).id}`
        : event.type === "tool-call-start"
          ? `start:${event.id}`
          : event.type,
    );
    expect(kinds.indexOf("message:call_JMW1whyEaYG438VE1OIflxA2")).toBeLessThan(
      kinds.indexOf("start:call_DNYTawLBoN8fj3KN6qU9N1Ou"),
    );
    expect(
      events
        .filter((event) => event.type === "tool-call-delta")
        .map((event) => event.delta)
        .join(""),
    ).toBe('{"city": "Edinburgh", "country": "GB", "units": "c"}{"ticker": "AAPL", "exchange": "NASDAQ"}');
  });

  it("a reply cut by the token limit: text kept, finish_reason length → max_tokens, usage from the usage-only chunk", async () => {
    server.enqueue({ headers: sseHeaders, body: fixture("openai-python__parse-max-tokens-reached__4cc50a61.sse.txt") });
    const { messages, events } = await invokeOnce(model(), initSession("s", "u"));
    expect(messages).toStrictEqual([{ role: "assistant", content: '{"' }]);
    expect(withoutAnswerer(endOf(events))).toStrictEqual({
      type: "response-end",
      stopReason: "max_tokens",
      usage: { inputTokens: 79, outputTokens: 1 },
    });
  });

  it("parses a non-streaming response with two parallel tool calls (mirascope, decompressed)", () => {
    const body = JSON.parse(
      fixture("mirascope__test_call_with_tools__openai_gpt_4o_completions__sync.response-1.decompressed.json"),
    ) as Parameters<typeof fromOpenAIChatResponse>[0];
    expect(withoutAnswerer(fromOpenAIChatResponse(body))).toStrictEqual([
      {
        type: "tool_call",
        id: "call_v6LacIrChvs6ITVpIZqy5tFc",
        name: "secret_retrieval_tool",
        input: { password: "mellon" },
      },
      {
        type: "tool_call",
        id: "call_onyWzk4mLTGKzW9cthmf4Llq",
        name: "secret_retrieval_tool",
        input: { password: "radiance" },
        stopReason: "tool_use",
        usage: { inputTokens: 75, outputTokens: 53 },
      },
    ]);
  });

  it("parses DeepSeek's reasoning_content into a thinking message of its own, with cached and reasoning tokens", () => {
    const body = JSON.parse(fixture("vercel-ai__deepseek-tool-call.json")) as Parameters<
      typeof fromOpenAIChatResponse
    >[0];
    const messages = fromOpenAIChatResponse(body);
    expect(withoutAnswerer(messages)).toStrictEqual([
      {
        type: "thinking",
        content: expect.stringMatching(/^The user is asking for the weather in San Francisco\./),
        signature: "reasoning_content",
        provider: "openai-chat",
      },
      {
        type: "tool_call",
        id: "call_00_9V0vrf86Pc9aelHCJMZqnJBo",
        name: "weather",
        input: { location: "San Francisco" },
        stopReason: "tool_use",
        usage: { inputTokens: 339, outputTokens: 92, cacheReadTokens: 320, reasoningTokens: 48 },
      },
    ]);
    // Sent back on the assistant message that made the call, as DeepSeek requires for tool turns.
    const session = initSession("s", "weather in SF?");
    for (const message of messages) extendSession(session, message);
    extendSession(session, { type: "tool_result", id: "call_00_9V0vrf86Pc9aelHCJMZqnJBo", output: "sunny" });
    const request = toOpenAIChatRequest(session, [], { model: "deepseek-reasoner" });
    expect(request.messages[2]).toStrictEqual({
      role: "assistant",
      content: null,
      reasoning_content: (messages[0] as { content: string }).content,
      tool_calls: [
        {
          id: "call_00_9V0vrf86Pc9aelHCJMZqnJBo",
          type: "function",
          function: { name: "weather", arguments: '{"location":"San Francisco"}' },
        },
      ],
    });
  });

  it("replays a streamed two-turn exchange (pydantic-ai): the turn-2 request carries what the recorded one carried", async () => {
    const [first, second] = cassette("pydantic-ai__test_run_stream_sync_streams_real_model.yaml").interactions;
    server.enqueue(
      { headers: sseHeaders, body: first!.response.body.string },
      { headers: sseHeaders, body: second!.response.body.string },
    );
    const recordedFirst = requestOf(first!);
    const recordedSecond = requestOf(second!);
    const before = server.requests.length;
    const session = await agentLoop(
      model(),
      toolSchemas(recordedFirst),
      { messages: [{ role: "user", content: recordedFirst.messages[0]!.content! }] },
      {
        toolHandlers: { get_capital: (input: { country: string }) => (input.country === "UK" ? "London" : "?") },
      },
    );
    const sentFirst = server.requests[before]!.body as Body;
    const sentSecond = server.requests[before + 1]!.body as Body;
    expect(sentFirst.messages).toStrictEqual(recordedFirst.messages);
    expect(sentSecond.messages).toStrictEqual(recordedSecond.messages);
    expect(sentSecond).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(withoutAnswerer(withoutTs(session).at(-1))).toStrictEqual({
      role: "assistant",
      content: "The capital of the UK is London.",
      stopReason: "end_turn",
      usage: { inputTokens: 78, outputTokens: 9 },
    });
  });

  for (const mode of ["sync", "stream"] as const) {
    it(`replays mirascope's ${mode} two-turn parallel exchange: calls replayed, each answered by id, in call order`, async () => {
      const [first, second] = cassette(
        `mirascope__test_call_with_tools__openai_gpt_4o_completions__${mode}.yaml`,
      ).interactions;
      const body = (interaction: Cassette["interactions"][number]): ReplayResponse => {
        const raw = interaction.response.body.string;
        return mode === "sync" ? { body: gunzipSync(raw) } : { headers: sseHeaders, body: raw };
      };
      server.enqueue(body(first!), body(second!));
      const recordedFirst = requestOf(first!);
      const recordedSecond = requestOf(second!);
      const secrets = new Map(
        recordedSecond.messages
          .filter((message) => message.role === "tool")
          .map((message) => {
            const call = recordedSecond.messages
              .flatMap((each) => each.tool_calls ?? [])
              .find((each) => each.id === message.tool_call_id)!;
            return [(JSON.parse(call.function.arguments) as { password: string }).password, message.content!] as const;
          }),
      );
      const before = server.requests.length;
      const session = await agentLoop(
        model(mode === "stream"),
        toolSchemas(recordedFirst),
        initSession(recordedFirst.messages[0]!.content!, recordedFirst.messages[1]!.content!),
        {
          toolHandlers: {
            secret_retrieval_tool: (input: { password: string }) => secrets.get(input.password) ?? "unknown",
          },
        },
      );
      expectEveryCallAnsweredOnce(session);
      const sentFirst = server.requests[before]!.body as Body;
      const sentSecond = server.requests[before + 1]!.body as Body;
      expect(sentFirst.messages).toStrictEqual(recordedFirst.messages);
      const essentials = (messages: WireMessage[]) =>
        messages.map((message) => ({
          role: message.role,
          content: message.role === "assistant" && message.tool_calls !== undefined ? null : message.content,
          ...(message.tool_call_id === undefined ? {} : { tool_call_id: message.tool_call_id }),
          ...(message.tool_calls === undefined
            ? {}
            : {
                tool_calls: message.tool_calls.map((call) => ({
                  id: call.id,
                  name: call.function.name,
                  input: JSON.parse(call.function.arguments) as unknown,
                })),
              }),
        }));
      expect(essentials(sentSecond.messages)).toStrictEqual(essentials(recordedSecond.messages));
      expect(session.messages.at(-1)).toMatchObject({
        role: "assistant",
        content: expect.stringContaining("Welcome to Moria!"),
        stopReason: "end_turn",
      });
    });
  }

  it("turns the recorded 401 (invalid_api_key) into a non-retryable ProviderError with the request id, not retried", async () => {
    const [interaction] = cassette("mirascope__test_authentication_error__openai_gpt_4o_completions.yaml").interactions;
    const { response } = interaction!;
    server.enqueue({
      status: response.status.code,
      headers: { "content-type": "application/json", "x-request-id": response.headers["x-request-id"]![0]! },
      body: response.body.string,
    });
    const before = server.requests.length;
    const error = (await agentLoop(model(), [], initSession("s", "u")).catch(
      (thrown: unknown) => thrown,
    )) as ProviderError;
    expect(isProviderError(error)).toBe(true);
    expect(error).toMatchObject({
      provider: "openai-chat",
      status: 401,
      retryable: false,
      code: "invalid_api_key",
      requestId: "req_1963efc19b3b4865af98403581d580af",
    });
    expect(error.message).toContain("Incorrect API key provided");
    expect(server.requests.length - before).toBe(1);
  });

  it("an error chunk inside the stream is a typed error, retried when it is a server error", async () => {
    const failing = [
      'data: {"id":"c","choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"}}]}\n\n',
      'data: {"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}\n\n',
    ];
    server.enqueue(
      { headers: sseHeaders, chunks: failing },
      turnResponse({ text: "fine", stopReason: "end_turn", usage: { input: 1, output: 1 } }, true),
    );
    const retried: string[] = [];
    const session = await agentLoop(model(), [], initSession("s", "u"), {
      onEvent: (event) => event.type === "retry" && retried.push(event.error),
      retry: { initialDelayMs: 1 },
    });
    expect(retried).toStrictEqual(["openai-chat: The server had an error while processing your request."]);
    expect(withoutAnswerer(withoutTs(session).slice(2))).toStrictEqual([
      { role: "assistant", content: "fine", stopReason: "end_turn", usage: { inputTokens: 1, outputTokens: 1 } },
    ]);
  });

  it("never emits a tool call whose streamed arguments do not parse: a retryable error, unless the reply was cut by length", async () => {
    const broken = (finish: string) =>
      sse(
        [
          {
            choices: [
              {
                index: 0,
                delta: {
                  tool_calls: [
                    {
                      index: 0,
                      id: "call_x",
                      type: "function",
                      function: { name: "lookup", arguments: '{"word": "al' },
                    },
                  ],
                },
              },
            ],
          },
          { choices: [{ index: 0, delta: {}, finish_reason: finish }] },
        ],
        { done: true },
      );
    server.enqueue({ headers: sseHeaders, chunks: broken("tool_calls") });
    const failed = await invokeOnce(model(), initSession("s", "u")).catch((thrown: unknown) => thrown);
    expect(failed).toMatchObject({
      name: "ProviderError",
      retryable: true,
      message: 'openai-chat: tool call "lookup" arrived with invalid JSON arguments',
    });
    server.enqueue({ headers: sseHeaders, chunks: broken("length") });
    const { messages, events } = await invokeOnce(model(), initSession("s", "u"));
    expect(messages).toStrictEqual([{ type: "tool_call", id: "call_x", name: "lookup", input: {} }]);
    expect(endOf(events)).toMatchObject({ stopReason: "max_tokens" });
  });

  it("a stream that ends before the reply finished is a retryable error; one that finished but sent no [DONE] is complete", async () => {
    const chunks = [{ choices: [{ index: 0, delta: { content: "Hi" } }] }];
    server.enqueue({ headers: sseHeaders, chunks: sse(chunks) });
    await expect(invokeOnce(model(), initSession("s", "u"))).rejects.toMatchObject({
      retryable: true,
      message: "openai-chat: the stream ended before the reply finished",
    });
    server.enqueue({
      headers: sseHeaders,
      chunks: sse([...chunks, { choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }]),
    });
    const { messages, events } = await invokeOnce(model(), initSession("s", "u"));
    expect(messages).toStrictEqual([{ role: "assistant", content: "Hi" }]);
    // The chunks name no model: the one asked for answered.
    expect(endOf(events)).toStrictEqual({ type: "response-end", stopReason: "end_turn", model: "gpt-4o" });
  });

  it("a quota error (429 insufficient_quota) is not retried; llama.cpp's overflow wording is a ContextOverflowError", async () => {
    server.enqueue({
      status: 429,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        error: {
          message: "You exceeded your current quota, please check your plan and billing details.",
          type: "insufficient_quota",
          param: null,
          code: "insufficient_quota",
        },
      }),
    });
    const before = server.requests.length;
    await expect(agentLoop(model(), [], initSession("s", "u"), { retry: { initialDelayMs: 1 } })).rejects.toMatchObject(
      { status: 429, retryable: false, code: "insufficient_quota" },
    );
    expect(server.requests.length - before).toBe(1);
    server.enqueue({
      status: 400,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        error: {
          code: 400,
          message: "the request exceeds the available context size, try increasing it",
          type: "exceed_context_size_error",
          n_prompt_tokens: 14429,
          n_ctx: 8192,
        },
      }),
    });
    const overflow = await agentLoop(model(), [], initSession("s", "u")).catch((thrown: unknown) => thrown);
    expect(isContextOverflowError(overflow)).toBe(true);
    expect(overflow).toMatchObject({ status: 400, retryable: false, code: "exceed_context_size_error" });
  });

  it("POSTs to {baseURL}/chat/completions with a bearer key; streams with include_usage", async () => {
    server.enqueue(turnResponse({ text: "hi", stopReason: "end_turn", usage: { input: 1, output: 1 } }, true));
    const before = server.requests.length;
    await agentLoop(model(), [], initSession("s", "u"));
    const request = server.requests[before]!;
    expect(request.url).toBe("/v1/chat/completions");
    expect(request.headers.authorization).toBe("Bearer sk-test-openai-key-123456");
    expect(request.body).toMatchObject({ model: "gpt-4o", stream: true, stream_options: { include_usage: true } });
  });

  it("says which variable to set when there is no API key; a custom baseURL (a local server) needs none", async () => {
    const previous = process.env.OPENAI_API_KEY;
    const previousBase = process.env.OPENAI_BASE_URL;
    delete process.env.OPENAI_API_KEY;
    delete process.env.OPENAI_BASE_URL;
    try {
      await expect(agentLoop(openaiChat({ model: "m" }), [], initSession("s", "u"))).rejects.toThrow(
        "set OPENAI_API_KEY",
      );
      server.enqueue(turnResponse({ text: "local", stopReason: "end_turn", usage: { input: 1, output: 1 } }, true));
      const before = server.requests.length;
      const session = await agentLoop(
        openaiChat({ model: "llama3", baseURL: `${server.origin}/v1`, maxTokens: 100 }),
        [],
        initSession("s", "u"),
      );
      expect(session.messages.at(-1)).toMatchObject({ content: "local" });
      expect(server.requests[before]!.headers.authorization).toBeUndefined();
      // Local servers know max_tokens; OpenAI's reasoning models only max_completion_tokens.
      expect(server.requests[before]!.body).toMatchObject({ max_tokens: 100 });
    } finally {
      if (previous !== undefined) process.env.OPENAI_API_KEY = previous;
      if (previousBase !== undefined) process.env.OPENAI_BASE_URL = previousBase;
    }
  });
});

describe("openai-chat: conversion rules", () => {
  const convert = (session: Session) => toOpenAIChatRequest(session, [], { model: "m", stream: false });
  const call = (id: string, input: Record<string, string> = {}) =>
    ({ type: "tool_call", id, name: "run", input }) as const;

  it("system messages stay role: system, where they are", () => {
    const session = initSession("You are precise.", "Do it");
    extendSession(session, { role: "assistant", content: "Done." });
    extendSession(session, { role: "system", content: "Now be brief." });
    expect(convert(session).messages).toStrictEqual([
      { role: "system", content: "You are precise." },
      { role: "user", content: "Do it" },
      { role: "assistant", content: "Done." },
      { role: "system", content: "Now be brief." },
    ]);
  });

  it("every call is answered by a role: tool message right after its assistant message, in call order; a user message comes after all of them", () => {
    const session = initSession("s", "u");
    extendSession(session, call("a"));
    extendSession(session, call("b"));
    // Results recorded out of order, and a user message typed before the second one.
    extendSession(session, { type: "tool_result", id: "b", output: { n: 2 } });
    extendSession(session, { role: "user", content: "hurry" });
    extendSession(session, { type: "tool_result", id: "a", output: "one" });
    expect(convert(session).messages.slice(2)).toStrictEqual([
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "a", type: "function", function: { name: "run", arguments: "{}" } },
          { id: "b", type: "function", function: { name: "run", arguments: "{}" } },
        ],
      },
      { role: "tool", tool_call_id: "a", content: "one" },
      { role: "tool", tool_call_id: "b", content: '{"n":2}' },
      { role: "user", content: "hurry" },
    ]);
  });

  it("a tool-only assistant message has content: null; orphan results are dropped", () => {
    const session = initSession("s", "u");
    extendSession(session, call("a", { q: "x" }));
    extendSession(session, { type: "tool_result", id: "a", output: "r" });
    extendSession(session, { type: "tool_result", id: "ghost", output: "x" });
    expect(convert(session).messages.slice(2)).toStrictEqual([
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "a", type: "function", function: { name: "run", arguments: '{"q":"x"}' } }],
      },
      { role: "tool", tool_call_id: "a", content: "r" },
    ]);
  });

  it("the text and tool calls of one turn become ONE assistant message; the next turn another", () => {
    const session = initSession("s", "u");
    extendSession(session, { role: "assistant", content: "Let me look." });
    extendSession(session, call("a"));
    extendSession(session, { role: "assistant", content: "And one more." });
    extendSession(session, { ...call("b"), stopReason: "tool_use" });
    extendSession(session, { type: "tool_result", id: "a", output: "1" });
    extendSession(session, { type: "tool_result", id: "b", output: "2" });
    extendSession(session, { role: "assistant", content: "Both done.", stopReason: "end_turn" });
    extendSession(session, { role: "assistant", content: "", stopReason: "aborted" });
    const messages = convert(session).messages.slice(2);
    expect(messages.map((message) => message.role)).toStrictEqual(["assistant", "tool", "tool", "assistant"]);
    expect(messages[0]).toMatchObject({
      content: "Let me look.\n\nAnd one more.",
      tool_calls: [{ id: "a" }, { id: "b" }],
    });
    expect(messages[3]).toStrictEqual({ role: "assistant", content: "Both done." });
  });

  it("reasoning goes back as reasoning_content (or reasoning) only when it is its own: foreign, unsigned and compacted thinking are omitted", () => {
    const session = initSession("s", "u");
    for (const thinking of [
      { type: "thinking", content: "anthropic's", signature: "sig", provider: "anthropic" },
      { type: "thinking", content: "untagged" },
      { type: "thinking", content: "cut…", signature: "reasoning_content", provider: "openai-chat", compacted: true },
      { type: "thinking", content: "mine", signature: "reasoning_content", provider: "openai-chat" },
    ] as const) {
      extendSession(session, thinking);
    }
    extendSession(session, { role: "assistant", content: "answer", stopReason: "end_turn" });
    extendSession(session, { role: "user", content: "again" });
    extendSession(session, {
      type: "thinking",
      content: "from vLLM's newer field",
      signature: "reasoning",
      provider: "openai-chat",
    });
    extendSession(session, { role: "assistant", content: "second" });
    const messages = convert(session).messages;
    expect(messages[2]).toStrictEqual({ role: "assistant", content: "answer", reasoning_content: "mine" });
    expect(messages[4]).toStrictEqual({ role: "assistant", content: "second", reasoning: "from vLLM's newer field" });
  });

  it("tool-call ids are normalized for OpenAI (at most 40 characters of [a-zA-Z0-9_-]), the same way on the call and its result", () => {
    const longId = "fc_68c1b2e4a0f08190a1c3e5d7f9b1d3f50f1e2d3c4b5a6978|call_abc";
    const session = initSession("s", "u");
    extendSession(session, { ...call(longId), stopReason: "tool_use" });
    extendSession(session, { type: "tool_result", id: longId, output: "ok" });
    const [assistant, result] = convert(session).messages.slice(2) as unknown as [
      { tool_calls: { id: string }[] },
      { tool_call_id: string },
    ];
    const id = assistant.tool_calls[0]!.id;
    expect(id).toMatch(/^[a-zA-Z0-9_-]{1,40}$/);
    expect(result.tool_call_id).toBe(id);
  });

  it('"stop" with tool calls means tool use (some compatible servers); a refusal is a refusal', () => {
    const stopped = fromOpenAIChatResponse({
      choices: [
        {
          message: { content: null, tool_calls: [{ id: "c1", function: { name: "run", arguments: "{}" } }] },
          finish_reason: "stop",
        },
      ],
    });
    expect(stopped).toStrictEqual([
      { type: "tool_call", id: "c1", name: "run", input: {}, stopReason: "tool_use", rawStopReason: "stop" },
    ]);
    const refused = fromOpenAIChatResponse({
      choices: [{ message: { content: null, refusal: "I can't help with that." }, finish_reason: "stop" }],
    });
    expect(refused).toStrictEqual([
      { role: "assistant", content: "I can't help with that.", stopReason: "refusal", rawStopReason: "stop" },
    ]);
    const filtered = fromOpenAIChatResponse({
      choices: [{ message: { content: "" }, finish_reason: "content_filter" }],
    });
    expect(filtered).toStrictEqual([{ role: "assistant", content: "", stopReason: "content_filter" }]);
  });

  it("invalid JSON arguments in a non-streamed reply are a retryable error; a call without an id gets one", () => {
    expect(() =>
      fromOpenAIChatResponse({
        choices: [
          {
            message: { tool_calls: [{ id: "c", function: { name: "run", arguments: "{oops" } }] },
            finish_reason: "tool_calls",
          },
        ],
      }),
    ).toThrow(expect.objectContaining({ retryable: true }));
    const [generated] = fromOpenAIChatResponse({
      choices: [
        { message: { tool_calls: [{ function: { name: "run", arguments: '{"a":1}' } }] }, finish_reason: "tool_calls" },
      ],
    });
    expect(generated).toMatchObject({ type: "tool_call", id: expect.stringMatching(/^call_\w+$/), input: { a: 1 } });
  });

  it("a session recorded with another provider converts without error: foreign signatures dropped, ids kept paired", async () => {
    const anthropicSession = initSession("s", "u");
    extendSession(anthropicSession, {
      type: "thinking",
      content: "hm",
      signature: "EqQBCkgIBxABGAIiQL",
      provider: "anthropic",
    });
    extendSession(anthropicSession, {
      type: "thinking",
      content: "",
      signature: "opaque",
      provider: "anthropic",
      redacted: true,
    });
    extendSession(anthropicSession, { role: "assistant", content: "Checking." });
    extendSession(anthropicSession, { ...call("toolu_01NRLabsLyVHZPKxbKvkfSMn"), stopReason: "tool_use" });
    extendSession(anthropicSession, {
      type: "tool_result",
      id: "toolu_01NRLabsLyVHZPKxbKvkfSMn",
      output: "r",
      isError: true,
    });
    const model = scriptedModel([[{ role: "assistant", content: "ok" }]]);
    await agentLoop(model, [], anthropicSession);
    expect(convert(model.calls[0]!).messages.slice(2)).toStrictEqual([
      {
        role: "assistant",
        content: "Checking.",
        tool_calls: [
          { id: "toolu_01NRLabsLyVHZPKxbKvkfSMn", type: "function", function: { name: "run", arguments: "{}" } },
        ],
      },
      { role: "tool", tool_call_id: "toolu_01NRLabsLyVHZPKxbKvkfSMn", content: "r" },
    ]);
  });

  it("request body for a session with every message kind", () => {
    const session = initSession("You are a helpful assistant.", "What is 2+2? Then look up 'four'.");
    extendSession(session, {
      type: "thinking",
      content: "Simple arithmetic, then a lookup.",
      signature: "reasoning_content",
      provider: "openai-chat",
    });
    extendSession(session, { role: "assistant", content: "2+2 is 4. Looking it up." });
    extendSession(session, { type: "tool_call", id: "call_1", name: "lookup", input: { word: "four" } });
    extendSession(session, {
      type: "tool_call",
      id: "call_2",
      name: "lookup",
      input: { word: "4" },
      stopReason: "tool_use",
      usage: { inputTokens: 20, outputTokens: 12 },
    });
    extendSession(session, { type: "tool_result", id: "call_1", output: "the number after three" });
    extendSession(session, { type: "tool_result", id: "call_2", output: { error: "not a word" }, isError: true });
    extendSession(session, { role: "assistant", content: "Four is the number after three.", stopReason: "end_turn" });
    extendSession(session, { role: "user", content: "Thanks!" });
    const tools: ToolSchema[] = [
      {
        name: "lookup",
        description: "Look a word up.",
        input_schema: { type: "object", properties: { word: { type: "string" } }, required: ["word"] },
      },
    ];
    expect(
      toOpenAIChatRequest(session, tools, {
        model: "gpt-4o",
        maxTokens: 1024,
        temperature: 0.2,
        reasoningEffort: "low",
      }),
    ).toMatchSnapshot();
  });
});

// Opt-in: runs only with a real key (OPENAI_API_KEY), never in CI.
liveAgentSuite("openai-chat", process.env.OPENAI_API_KEY !== undefined, () =>
  openaiChat({ model: process.env.OPENAI_MODEL ?? "gpt-4o-mini", maxTokens: 1024 }),
);

describe("openai-chat: native structured output", () => {
  let server: ReplayServer;
  beforeAll(async () => {
    server = await startReplayServer();
  });
  afterAll(async () => {
    await server.close();
  });
  const forecast: JsonObject = {
    type: "object",
    properties: { city: { type: "string" }, celsius: { type: "number" } },
    required: ["city", "celsius"],
  };
  const weather: ToolSchema = {
    name: "weather",
    description: "The weather in a city.",
    input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  };
  const usage = { input: 10, output: 5 };
  type OutputBody = Body & { response_format?: unknown };

  for (const stream of [true, false]) {
    it(`a run with output: schema sends it as response_format on every call, without the instruction message; the answer is parsed into output (${stream ? "streamed" : "not streamed"})`, async () => {
      expect(openaiChat({ model: "gpt-4o", baseURL: `${server.origin}/v1` }).structuredOutput).toBe("native");
      server.enqueue(
        turnResponse(
          { toolCalls: [{ id: "call_w", name: "weather", input: { city: "Paris" } }], stopReason: "tool_use", usage },
          stream,
        ),
        turnResponse({ text: '{"city":"Paris","celsius":21}', stopReason: "end_turn", usage }, stream),
      );
      const before = server.requests.length;
      const session = await agentLoop(
        openaiChat({ model: "gpt-4o", baseURL: `${server.origin}/v1`, apiKey: "sk-test", stream }),
        [weather],
        initSession("You forecast.", "Paris?"),
        {
          toolHandlers: { weather: () => "21C" },
          output: forecast,
        },
      );
      const bodies = server.requests.slice(before).map((request) => request.body as OutputBody);
      expect(bodies).toHaveLength(2);
      for (const body of bodies) {
        expect(body.response_format).toStrictEqual({
          type: "json_schema",
          json_schema: { name: "output", schema: forecast, strict: false },
        });
        expect(body.messages.filter((message) => message.role === "system")).toStrictEqual([
          { role: "system", content: "You forecast." },
        ]);
        expect(body.tools?.map((definition) => definition.function.name)).toStrictEqual(["weather"]);
      }
      expect(withoutAnswerer(withoutTs(session).at(-1))).toStrictEqual({
        role: "assistant",
        content: '{"city":"Paris","celsius":21}',
        output: { city: "Paris", celsius: 21 },
        stopReason: "end_turn",
        usage: { inputTokens: 10, outputTokens: 5 },
      });
      expect(structuredOutput(session)).toStrictEqual({ city: "Paris", celsius: 21 });
    });
  }

  it("nativeOutput: false sends no response_format: the loop instructs the model and parses the answer", async () => {
    const model = openaiChat({ model: "local", baseURL: `${server.origin}/v1`, nativeOutput: false });
    expect(model.structuredOutput).toBeUndefined();
    server.enqueue(turnResponse({ text: '{"city":"Oslo","celsius":3}', stopReason: "end_turn", usage }, true));
    const before = server.requests.length;
    const session = await agentLoop(model, [], initSession("You forecast.", "Oslo?"), { output: forecast });
    const body = server.requests[before]!.body as OutputBody;
    expect(body).not.toHaveProperty("response_format");
    expect(body).not.toHaveProperty("nativeOutput");
    expect(JSON.stringify(body.messages)).toContain("celsius");
    expect(structuredOutput(session)).toStrictEqual({ city: "Oslo", celsius: 3 });
  });

  it("a run without output sends no response_format", async () => {
    server.enqueue(turnResponse({ text: "hi", stopReason: "end_turn", usage }, true));
    const before = server.requests.length;
    await agentLoop(
      openaiChat({ model: "gpt-4o", baseURL: `${server.origin}/v1`, apiKey: "sk-test" }),
      [],
      initSession("s", "u"),
    );
    expect(server.requests[before]!.body).not.toHaveProperty("response_format");
  });

  it("the converter: an object schema becomes response_format; any other root (which response_format refuses) the instruction, as a first system message", () => {
    const session = initSession("s", "u");
    const native = toOpenAIChatRequest(session, [], { model: "m", output: { jsonSchema: forecast } });
    expect(native.response_format).toStrictEqual({
      type: "json_schema",
      json_schema: { name: "output", schema: forecast, strict: false },
    });
    expect(native.messages).toStrictEqual([
      { role: "system", content: "s" },
      { role: "user", content: "u" },
    ]);
    const list: JsonObject = { type: "array", items: { type: "string" } };
    const instructed = toOpenAIChatRequest(session, [], { model: "m", output: { jsonSchema: list } });
    expect(instructed).not.toHaveProperty("response_format");
    expect(instructed.messages).toStrictEqual([
      { role: "system", content: expect.stringContaining(JSON.stringify(list)) },
      { role: "system", content: "s" },
      { role: "user", content: "u" },
    ]);
  });
});
