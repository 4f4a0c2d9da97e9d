import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import {
  agentLoop,
  extendSession,
  initSession,
  isProviderError,
  type ModelMessage,
  type ProviderError,
  type Session,
} from "simple-agent-loop";
import { anthropic, fromAnthropicResponse, streamMessages, toAnthropicRequest } from "simple-agent-loop/anthropic";
import { scriptedModel } from "simple-agent-loop/testing";
import { withoutTs } from "../helpers.ts";
import { conformanceSuite, liveAgentSuite, type ErrorKind, type WireTurn } from "./conformance.ts";
import { sse, sseHeaders, startReplayServer, type ReplayResponse, type ReplayServer } from "./replay-server.ts";
import { recordedFixtures } from "./fixtures.ts";
import { anthropicParts } from "./wire-parts.ts";

const { text: fixture, chunks: chunksFile } = recordedFixtures("anthropic");

function turnResponse(turn: WireTurn, stream: boolean): ReplayResponse {
  const content: Record<string, unknown>[] = [];
  if (turn.text !== undefined) content.push({ type: "text", text: turn.text });
  for (const call of turn.toolCalls ?? [])
    content.push({ type: "tool_use", id: call.id, name: call.name, input: call.input });
  const usage = {
    input_tokens: turn.usage.input,
    output_tokens: turn.usage.output,
    cache_read_input_tokens: 0,
    cache_creation_input_tokens: 0,
  };
  if (!stream) {
    return {
      body: JSON.stringify({
        id: "msg_1",
        type: "message",
        role: "assistant",
        model: "claude-test",
        content,
        stop_reason: turn.stopReason,
        usage,
      }),
    };
  }
  const events: unknown[] = [
    {
      type: "message_start",
      message: {
        id: "msg_1",
        type: "message",
        role: "assistant",
        model: "claude-test",
        content: [],
        usage: { ...usage, output_tokens: 1 },
      },
    },
  ];
  content.forEach((block, index) => {
    if (block.type === "text") {
      events.push({ type: "content_block_start", index, content_block: { type: "text", text: "" } });
      const text = block.text as string;
      for (let at = 0; at < text.length; at += 10)
        events.push({
          type: "content_block_delta",
          index,
          delta: { type: "text_delta", text: text.slice(at, at + 10) },
        });
    } else {
      events.push({ type: "content_block_start", index, content_block: { ...block, input: {} } });
      const json = JSON.stringify(block.input);
      for (let at = 0; at < json.length; at += 7)
        events.push({
          type: "content_block_delta",
          index,
          delta: { type: "input_json_delta", partial_json: json.slice(at, at + 7) },
        });
    }
    events.push({ type: "content_block_stop", index });
  });
  events.push({
    type: "message_delta",
    delta: { stop_reason: turn.stopReason, stop_sequence: null },
    usage: { output_tokens: turn.usage.output },
  });
  events.push({ type: "message_stop" });
  return { headers: sseHeaders, chunks: sse(events, { withEventNames: true }) };
}

function errorResponse(kind: ErrorKind): ReplayResponse {
  const error = (
    status: number,
    type: string,
    message: string,
    headers: Record<string, string> = {},
  ): ReplayResponse => ({
    status,
    headers: { "content-type": "application/json", "request-id": "req_test", ...headers },
    body: JSON.stringify({ type: "error", error: { type, message }, request_id: "req_test" }),
  });
  if (kind === "rate_limit")
    return error(429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit", {
      "retry-after": "0",
    });
  if (kind === "server") return error(529, "overloaded_error", "Overloaded");
  if (kind === "context_overflow")
    return error(400, "invalid_request_error", "prompt is too long: 215000 tokens > 200000 maximum");
  return error(400, "invalid_request_error", "max_tokens: Field required");
}

type Body = {
  messages: {
    role: string;
    content: { type: string; id?: string; name?: string; tool_use_id?: string; content?: string }[];
  }[];
};

conformanceSuite({
  name: "anthropic",
  contentIn: anthropicParts,
  fetchesImageUrls: true,
  answeringModel: "claude-test",
  createModel: (origin, options) => anthropic({ model: "claude-test", baseURL: origin, ...options }),
  readStream: (open) => streamMessages(open),
  turnResponse,
  errorResponse,
  toolResultsIn: (body) =>
    (body as Body).messages.flatMap((message) =>
      message.content
        .filter((block) => block.type === "tool_result")
        .map((block) => ({ id: block.tool_use_id!, output: block.content! })),
    ),
  toolNamesIn: (body) => ((body as { tools?: { name: string }[] }).tools ?? []).map((schema) => schema.name),
  toolCallsIn: (body) =>
    (body as Body).messages.flatMap((message) =>
      message.content
        .filter((block) => block.type === "tool_use")
        .map((block) => ({ id: block.id!, name: block.name! })),
    ),
  skip: {
    "url-download-off": "the Messages API fetches image and PDF URLs itself: nothing to download",
    "url-download-rules": "the Messages API fetches image and PDF URLs itself: nothing to download",
  },
});

describe("anthropic: recorded responses", () => {
  let server: ReplayServer;
  beforeAll(async () => {
    server = await startReplayServer();
  });
  afterAll(async () => {
    await server.close();
  });
  const model = (stream = true) =>
    anthropic({ model: "claude-sonnet-4-5", baseURL: server.origin, apiKey: "sk-ant-test-key-123456", stream });

  it("parses a raw SSE recording: text, then a tool call streamed as JSON fragments", async () => {
    server.enqueue({ headers: sseHeaders, body: fixture("anthropic-sdk-python__tool_use_response.txt") });
    const session = await agentLoop(model(), [], initSession("s", "weather in Paris?"), {
      maxIterations: 1,
      toolHandlers: { get_weather: () => "sunny" },
    }).catch((error: { session: Session }) => error.session);
    const turn = withoutTs(session).slice(2, 4);
    expect(turn[0]).toStrictEqual({ role: "assistant", content: "I'll check the current weather in Paris for you." });
    expect(turn[1]).toMatchObject({
      type: "tool_call",
      id: "toolu_01NRLabsLyVHZPKxbKvkfSMn",
      name: "get_weather",
      stopReason: "tool_use",
    });
    expect((turn[1] as unknown as { input: { location: string } }).input.location).toMatch(/Paris/);
    expect(turn[1]).toMatchObject({ usage: { inputTokens: 377 } });
  });

  it("parses three parallel tool calls (vercel-ai chunks) and runs them", async () => {
    server.enqueue({
      headers: sseHeaders,
      chunks: sse(chunksFile("vercel-ai__anthropic-issue-15652-false.chunks.txt")),
    });
    const seen: string[] = [];
    const session = await agentLoop(model(), [], initSession("s", "u"), {
      maxIterations: 1,
      toolHandlers: { searchDocs: (input: Record<string, unknown>) => void seen.push(JSON.stringify(input)) },
    }).catch((error: { session: Session }) => error.session);
    const calls = session.messages.filter(
      (message): message is Extract<ModelMessage, { type: "tool_call" }> =>
        "type" in message && message.type === "tool_call",
    );
    expect(calls.map((call) => call.name)).toStrictEqual(["searchDocs", "searchDocs", "searchDocs"]);
    expect(seen).toHaveLength(3);
  });

  it("keeps streamed thinking with its signature, tagged as Anthropic's", async () => {
    server.enqueue({
      headers: sseHeaders,
      chunks: sse(chunksFile("vercel-ai__anthropic-clear-thinking.1.chunks.txt")),
    });
    const session = await agentLoop(model(), [], initSession("s", "u"));
    const thinking = session.messages[2] as { type: string; content: string; signature: string; provider: string };
    expect(thinking.type).toBe("thinking");
    expect(thinking.content.length).toBeGreaterThan(10);
    expect(thinking.signature.length).toBeGreaterThan(20);
    expect(thinking.provider).toBe("anthropic");
    expect(session.messages[3]).toMatchObject({ role: "assistant", stopReason: "end_turn" });
  });

  it("parses a non-streaming thinking + tool call response", () => {
    const body = JSON.parse(fixture("vercel-ai__issue-13430-thinking-tool-call.json")) as Parameters<
      typeof fromAnthropicResponse
    >[0];
    const messages = fromAnthropicResponse(body);
    expect(messages.map((message) => ("role" in message ? message.role : message.type))).toStrictEqual([
      "thinking",
      "tool_call",
    ]);
    expect(messages[1]).toMatchObject({ name: "checkSandboxErrors", input: {}, stopReason: "tool_use" });
  });

  it("replays a two-turn thinking + tool exchange: the second request echoes the thinking byte-identical, first", async () => {
    const cassette = parseYaml(fixture("pydantic-ai__test_anthropic_tool_with_thinking.yaml")) as {
      interactions: {
        request: { parsed_body: Body & { messages: { content: Record<string, unknown>[] }[] } };
        response: { parsed_body: unknown };
      }[];
    };
    const [first, second] = cassette.interactions;
    server.enqueue(
      { body: JSON.stringify(first!.response.parsed_body) },
      { body: JSON.stringify(second!.response.parsed_body) },
    );
    const recordedSecond = second!.request.parsed_body;
    const recordedAssistant = recordedSecond.messages.find((message) => message.role === "assistant")!;
    const before = server.requests.length;
    const session = await agentLoop(
      model(false),
      [
        {
          name: "get_user_country",
          description: "Get the user's country",
          input_schema: { type: "object", properties: {} },
        },
      ],
      initSession("s", "What is the largest city in the user country?"),
      {
        toolHandlers: { get_user_country: () => "Mexico" },
      },
    );
    const sent = server.requests[before + 1]!.body as {
      messages: { role: string; content: Record<string, unknown>[] }[];
    };
    const assistant = sent.messages.find((message) => message.role === "assistant")!;
    const recordedThinking = (recordedAssistant.content as Record<string, unknown>[]).find(
      (block) => block.type === "thinking",
    )!;
    expect(assistant.content[0]).toStrictEqual({
      type: "thinking",
      thinking: recordedThinking.thinking,
      signature: recordedThinking.signature,
    });
    const toolResult = sent.messages.at(-1)!.content[0]!;
    expect(toolResult).toMatchObject({ type: "tool_result", content: "Mexico" });
    expect(session.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "end_turn" });
  });

  it("turns a recorded 400 into a ProviderError with the provider's message and request id", async () => {
    const recorded = JSON.parse(fixture("anthropic-sdk-python__tool-runner-400-error__f59a9391.json")) as {
      response: { status_code: number; headers: Record<string, string>; body: unknown };
    }[];
    const failure = recorded[1]!.response;
    const { "content-length": _length, connection: _connection, ...headers } = failure.headers;
    server.enqueue({
      status: failure.status_code,
      headers: { ...headers, "request-id": "req_011CYHyk9NPsBYeGbC9LuDNK" },
      body: JSON.stringify(failure.body),
    });
    const error = (await agentLoop(model(), [], initSession("s", "u")).catch(
      (thrown: unknown) => thrown,
    )) as ProviderError;
    expect(isProviderError(error)).toBe(true);
    expect(error).toMatchObject({
      status: 400,
      retryable: false,
      code: "invalid_request_error",
      requestId: "req_011CYHyk9NPsBYeGbC9LuDNK",
    });
    expect(error.message).toContain("unexpected `tool_use_id` found in `tool_result` blocks");
  });

  it("an error event inside the stream is a typed error, retried when overloaded", async () => {
    const overloaded = [
      'event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":3,"output_tokens":1}}}\n\n',
      'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n',
    ];
    server.enqueue(
      { headers: sseHeaders, chunks: overloaded },
      turnResponse({ text: "fine", stopReason: "end_turn", usage: { input: 1, output: 1 } }, true),
    );
    const retried: string[] = [];
    const session = await agentLoop(model(), [], initSession("s", "u"), {
      onEvent: (event) => event.type === "retry" && retried.push(event.error),
      retry: { initialDelayMs: 1 },
    });
    expect(retried).toStrictEqual(["anthropic: Overloaded"]);
    expect(session.messages.at(-1)).toMatchObject({ content: "fine" });
  });

  it("sends the API key, version and model; never the key in errors", async () => {
    server.enqueue(turnResponse({ text: "hi", stopReason: "end_turn", usage: { input: 1, output: 1 } }, true));
    const before = server.requests.length;
    await agentLoop(model(), [], initSession("s", "u"));
    const request = server.requests[before]!;
    expect(request.url).toBe("/v1/messages");
    expect(request.headers["x-api-key"]).toBe("sk-ant-test-key-123456");
    expect(request.headers["anthropic-version"]).toBe("2023-06-01");
    expect(request.body).toMatchObject({ model: "claude-sonnet-4-5", stream: true });
  });

  it("says which variable to set when there is no API key", async () => {
    const previous = process.env.ANTHROPIC_API_KEY;
    delete process.env.ANTHROPIC_API_KEY;
    try {
      await expect(
        agentLoop(anthropic({ model: "m", baseURL: server.origin }), [], initSession("s", "u")),
      ).rejects.toThrow("set ANTHROPIC_API_KEY");
    } finally {
      if (previous !== undefined) process.env.ANTHROPIC_API_KEY = previous;
    }
  });
});

describe("anthropic: conversion rules", () => {
  const convert = (session: Session) => toAnthropicRequest(session, [], { model: "m", cache: false });

  it("groups a turn into one assistant message, thinking first, its tool results first in the next user message, ids normalized consistently", () => {
    const session = initSession("You are precise.", "Do it");
    extendSession(session, { role: "assistant", content: "Thinking about it." });
    extendSession(session, { type: "thinking", content: "plan", signature: "sig-1", provider: "anthropic" });
    extendSession(session, { type: "tool_call", id: "call.1/weird id", name: "run", input: { n: 1 } });
    extendSession(session, { type: "tool_result", id: "call.1/weird id", output: { ok: true }, isError: false });
    extendSession(session, { role: "user", content: "and then?" });
    const request = convert(session);
    expect(request.system).toStrictEqual([{ type: "text", text: "You are precise." }]);
    const id = (request.messages[1]!.content[2] as { id: string }).id;
    expect(id).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    expect(request.messages).toStrictEqual([
      { role: "user", content: [{ type: "text", text: "Do it" }] },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "plan", signature: "sig-1" },
          { type: "text", text: "Thinking about it." },
          { type: "tool_use", id, name: "run", input: { n: 1 } },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: id, content: '{"ok":true}' },
          { type: "text", text: "and then?" },
        ],
      },
    ]);
  });

  it("drops thinking that cannot be verified: foreign, unsigned or compacted; sends redacted thinking back as such", () => {
    const session = initSession("s", "u");
    for (const thinking of [
      { type: "thinking", content: "openai reasoning", signature: "enc", provider: "openai-responses" },
      { type: "thinking", content: "no signature" },
      { type: "thinking", content: "cut...", signature: "sig", provider: "anthropic", compacted: true },
      { type: "thinking", content: "", signature: "opaque", provider: "anthropic", redacted: true },
    ] as const) {
      extendSession(session, thinking);
    }
    extendSession(session, { role: "assistant", content: "answer" });
    expect(convert(session).messages[1]!.content).toStrictEqual([
      { type: "redacted_thinking", data: "opaque" },
      { type: "text", text: "answer" },
    ]);
  });

  it("answers orphan tool calls, drops orphan results, skips empty and aborted assistant text", () => {
    const session = initSession("s", "u");
    extendSession(session, { type: "tool_call", id: "a", name: "t", input: {} });
    extendSession(session, { type: "tool_result", id: "ghost", output: "x" });
    extendSession(session, { role: "assistant", content: "", stopReason: "aborted" });
    extendSession(session, { role: "user", content: "continue" });
    const { messages } = convert(session);
    expect(messages.slice(1)).toStrictEqual([
      { role: "assistant", content: [{ type: "tool_use", id: "a", name: "t", input: {} }] },
      {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: "a",
            content: "Error: no result was recorded for this tool call.",
            is_error: true,
          },
          { type: "text", text: "continue" },
        ],
      },
    ]);
  });

  it("sets cache breakpoints on the tools, the system prompt and the last message by default", () => {
    const session = initSession("system", "question");
    const request = toAnthropicRequest(session, [{ name: "t", description: "d", input_schema: { type: "object" } }], {
      model: "m",
      thinking: { budgetTokens: 2048 },
      maxTokens: 4096,
    });
    expect(request).toMatchSnapshot();
  });

  it("a session whose thinking signatures carry no provider tag (written by a scripted or hand-made model) continues", async () => {
    const seedSession = initSession("s", "u");
    extendSession(seedSession, { type: "thinking", content: "hm", signature: "seed-sig" });
    extendSession(seedSession, { type: "tool_call", id: "toolu_1", name: "t", input: {} });
    extendSession(seedSession, { type: "tool_result", id: "toolu_1", output: "r" });
    expect(convert(seedSession).messages[1]!.content[0]).toStrictEqual({
      type: "thinking",
      thinking: "hm",
      signature: "seed-sig",
    });
    // And the loop passes a scripted session straight through the converter without loss.
    const model = scriptedModel([[{ role: "assistant", content: "ok" }]]);
    await agentLoop(model, [], seedSession);
    expect(convert(model.calls[0]!).messages).toHaveLength(3);
  });
});

// Opt-in: runs only with a real key (ANTHROPIC_API_KEY), never in CI.
liveAgentSuite("anthropic", process.env.ANTHROPIC_API_KEY !== undefined, () =>
  anthropic({ model: process.env.ANTHROPIC_MODEL ?? "claude-haiku-4-5", maxTokens: 1024 }),
);
