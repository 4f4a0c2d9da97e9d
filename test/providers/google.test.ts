import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import {
  agentLoop,
  extendSession,
  initSession,
  isContextOverflowError,
  isProviderError,
  structuredOutput,
  type JsonObject,
  type Message,
  type ModelMessage,
  type ModelStreamEvent,
  type ProviderError,
  type Session,
  type ToolSchema,
} from "simple-agent-loop";
import {
  fromGeminiResponse,
  gemini,
  streamGenerateContent,
  toGeminiRequest,
  type GeminiRequest,
  type GeminiResponse,
} from "simple-agent-loop/google";
import { withoutTs, withoutAnswerer } from "../helpers.ts";
import { conformanceSuite, liveAgentSuite, type ErrorKind, type WireTurn } from "./conformance.ts";
import { sse, sseHeaders, startReplayServer, type ReplayResponse, type ReplayServer } from "./replay-server.ts";
import { recordedFixtures } from "./fixtures.ts";
import { geminiParts } from "./wire-parts.ts";

const { text: fixture, chunks: chunksFile } = recordedFixtures("google");

type Part = Record<string, any>;
type Content = { role: string; parts: Part[] };
type Interaction = {
  request: { parsed_body?: { contents: Content[] }; body?: string; uri: string };
  response: { parsed_body?: unknown; body?: { string: string } };
};
const cassette = (name: string): Interaction[] =>
  (parseYaml(fixture(name)) as { interactions: Interaction[] }).interactions;
const recordedRequest = (interaction: Interaction): { contents: Content[]; systemInstruction?: { parts: Part[] } } =>
  interaction.request.parsed_body ?? (JSON.parse(interaction.request.body!) as { contents: Content[] });
/** A recorded response, replayed as it was sent: a JSON body, or the raw SSE text. */
const replay = (interaction: Interaction): ReplayResponse =>
  interaction.response.body === undefined
    ? { body: JSON.stringify(interaction.response.parsed_body) }
    : { headers: sseHeaders, body: interaction.response.body.string };

// The Python SDK that recorded the requests re-encodes signatures as URL-safe base64; the API
// sent them as standard base64. Same bytes.
const standardBase64 = (signature: string): string =>
  signature.replace(/-/g, "+").replace(/_/g, "/").replace(/=+$/, "");

/** What must match between a recorded request and ours: roles, texts, calls with their signatures, results by name and value. */
function essentials(contents: readonly Content[]): unknown[] {
  return contents.map((content) => ({
    role: content.role,
    parts: content.parts.map((part) => {
      const signature =
        typeof part.thoughtSignature === "string" ? { signature: standardBase64(part.thoughtSignature) } : {};
      if (part.functionCall !== undefined)
        return { call: part.functionCall.name, args: part.functionCall.args, ...signature };
      if (part.functionResponse !== undefined)
        return { result: part.functionResponse.name, value: Object.values(part.functionResponse.response)[0] };
      return { text: part.text, ...signature };
    }),
  }));
}

function turnResponse(turn: WireTurn, stream: boolean): ReplayResponse {
  const parts: Part[] = [];
  if (turn.text !== undefined) parts.push({ text: turn.text });
  for (const call of turn.toolCalls ?? [])
    parts.push({ functionCall: { id: call.id, name: call.name, args: call.input } });
  const finishReason = turn.stopReason === "max_tokens" ? "MAX_TOKENS" : "STOP";
  const usageMetadata = {
    promptTokenCount: turn.usage.input,
    candidatesTokenCount: turn.usage.output,
    totalTokenCount: turn.usage.input + turn.usage.output,
  };
  const chunk = (chunkParts: Part[], end = false): Record<string, unknown> => ({
    candidates: [{ content: { role: "model", parts: chunkParts }, ...(end ? { finishReason } : {}), index: 0 }],
    usageMetadata: end ? usageMetadata : { promptTokenCount: turn.usage.input },
    modelVersion: "gemini-test",
    responseId: "resp-conformance",
  });
  if (!stream) return { body: JSON.stringify(chunk(parts, true)) };
  const chunks: Record<string, unknown>[] = [];
  const text = turn.text ?? "";
  for (let at = 0; at < text.length; at += 10) chunks.push(chunk([{ text: text.slice(at, at + 10) }]));
  for (const part of parts.filter((candidate) => candidate.functionCall !== undefined)) chunks.push(chunk([part]));
  chunks.push(chunk([{ text: "" }], true));
  return { headers: sseHeaders, chunks: sse(chunks) };
}

function errorResponse(kind: ErrorKind): ReplayResponse {
  const error = (
    code: number,
    status: string,
    message: string,
    headers: Record<string, string> = {},
  ): ReplayResponse => ({
    status: code,
    headers: { "content-type": "application/json; charset=UTF-8", ...headers },
    body: JSON.stringify({ error: { code, message, status } }),
  });
  if (kind === "rate_limit")
    return error(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota).", { "retry-after": "0" });
  if (kind === "server") return error(503, "UNAVAILABLE", "The model is overloaded. Please try again later.");
  if (kind === "context_overflow")
    return error(
      400,
      "INVALID_ARGUMENT",
      "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
    );
  return error(400, "INVALID_ARGUMENT", 'Invalid JSON payload received. Unknown name "foo": Cannot find field.');
}

const partsOf = (body: unknown): Part[] => (body as GeminiRequest).contents.flatMap((content) => content.parts);

conformanceSuite({
  name: "google",
  contentIn: geminiParts,
  fetchesImageUrls: false,
  answeringModel: "gemini-test",
  createModel: (origin, options) => gemini({ model: "gemini-test", baseURL: origin, ...options }),
  readStream: (open) => streamGenerateContent(open),
  turnResponse,
  errorResponse,
  toolResultsIn: (body) =>
    partsOf(body)
      .filter((part) => part.functionResponse !== undefined)
      .map((part) => ({ id: part.functionResponse.id, output: part.functionResponse.response.output })),
  toolNamesIn: (body) =>
    ((body as { tools?: { functionDeclarations?: { name: string }[] }[] }).tools ?? []).flatMap((group) =>
      (group.functionDeclarations ?? []).map((declaration) => declaration.name),
    ),
  toolCallsIn: (body) =>
    partsOf(body)
      .filter((part) => part.functionCall !== undefined)
      .map((part) => ({ id: part.functionCall.id, name: part.functionCall.name })),
});

const isCall = (message: Message): message is Extract<ModelMessage, { type: "tool_call" }> =>
  "type" in message && message.type === "tool_call";
const schema = (name: string, properties: Record<string, unknown> = {}): ToolSchema => ({
  name,
  description: "",
  input_schema: { type: "object", properties: properties as Record<string, never> },
});

describe("google: recorded responses", () => {
  let server: ReplayServer;
  beforeAll(async () => {
    server = await startReplayServer();
  });
  afterAll(async () => {
    await server.close();
  });
  const model = (name: string, stream = true) =>
    gemini({ model: name, baseURL: server.origin, apiKey: "gemini-test-key-123456", stream });
  const bodiesSince = (start: number): GeminiRequest[] =>
    server.requests.slice(start).map((request) => request.body as GeminiRequest);

  it("parses a streamed Gemini 3 function call (vercel-ai chunks): generated id, signature on the call, thoughts in usage", async () => {
    server.enqueue({ headers: sseHeaders, chunks: sse(chunksFile("vercel-ai__google-tool-call-gemini3.chunks.txt")) });
    const [first] = chunksFile("vercel-ai__google-tool-call-gemini3.chunks.txt") as {
      candidates: { content: { parts: Part[] } }[];
      responseId: string;
    }[];
    const recordedPart = first!.candidates[0]!.content.parts[0]!;
    const session = await agentLoop(
      model("gemini-3-pro-preview"),
      [schema("weather")],
      initSession("s", "weather in SF?"),
      {
        maxIterations: 1,
        toolHandlers: { weather: () => "sunny" },
      },
    ).catch((error: { session: Session }) => error.session);
    expect(withoutAnswerer(withoutTs(session).slice(2))).toStrictEqual([
      {
        type: "tool_call",
        id: `weather_0_${first!.responseId}`,
        name: "weather",
        input: { location: "San Francisco" },
        signature: recordedPart.thoughtSignature,
        provider: "google",
        generatedId: true,
        stopReason: "tool_use",
        rawStopReason: "STOP",
        usage: { inputTokens: 29, outputTokens: 15 + 804, reasoningTokens: 804 },
      },
      { type: "tool_result", id: `weather_0_${first!.responseId}`, output: "sunny" },
    ]);
  });

  it("parses a non-streamed Gemini 3 function call (vercel-ai JSON)", () => {
    const body = JSON.parse(fixture("vercel-ai__google-tool-call-gemini3.json")) as GeminiResponse;
    expect(withoutAnswerer(fromGeminiResponse(body))).toStrictEqual([
      {
        type: "tool_call",
        id: "weather_0_JniLacKqGqH0xs0P0O776As",
        name: "weather",
        input: { location: "San Francisco" },
        signature: body.candidates![0]!.content!.parts![0]!.thoughtSignature,
        provider: "google",
        generatedId: true,
        stopReason: "tool_use",
        rawStopReason: "STOP",
        usage: { inputTokens: 29, outputTokens: 15 + 1801, reasoningTokens: 1801 },
      },
    ]);
  });

  it("streams thought summaries as a thinking message and keeps the text part's signature on the text (pydantic-ai)", async () => {
    const [interaction] = cassette("pydantic-ai__test_google_model_thinking_part_iter.yaml");
    server.enqueue(replay(interaction!));
    const deltas = { thinking: 0, text: 0 };
    const session = await agentLoop(
      model("gemini-2.5-pro"),
      [],
      initSession("You are a helpful assistant.", "How do I cross the street?"),
      {
        onEvent: (event) => {
          if (event.type === "thinking-delta") deltas.thinking++;
          if (event.type === "text-delta") deltas.text++;
        },
      },
    );
    const recordedParts = interaction!.response
      .body!.string.split("\n")
      .filter((line) => line.startsWith("data: "))
      .flatMap((line) => (JSON.parse(line.slice(6)) as GeminiResponse).candidates![0]!.content!.parts!);
    const textOf = (thought: boolean): string =>
      recordedParts
        .filter((part) => (part.thought === true) === thought)
        .map((part) => part.text)
        .join("");
    const signature = recordedParts.find((part) => part.thoughtSignature !== undefined)!.thoughtSignature;
    const [thinking, answer] = withoutTs(session).slice(2) as unknown as [
      Record<string, unknown>,
      Record<string, unknown>,
    ];
    expect(session.messages).toHaveLength(4);
    expect(thinking).toStrictEqual({ type: "thinking", content: textOf(true), provider: "google" });
    expect(answer).toMatchObject({
      role: "assistant",
      content: textOf(false),
      signature,
      provider: "google",
      stopReason: "end_turn",
    });
    expect(answer).not.toHaveProperty("rawStopReason");
    expect(textOf(true)).toMatch(/^\*\*Clarifying User Goals\*\*/);
    expect(textOf(false)).toMatch(/^This is a great question!/);
    expect(answer.usage).toStrictEqual({ inputTokens: 34, outputTokens: 469 + 787, reasoningTokens: 787 });
    expect(deltas).toMatchObject({ thinking: 4 });
    expect(deltas.text).toBeGreaterThan(10);
    // Sent back: the unsigned summaries are dropped, the signature stays on the text.
    const next = toGeminiRequest(session, [], { model: "gemini-2.5-pro" });
    expect(next.contents[1]).toStrictEqual({
      role: "model",
      parts: [{ text: answer.content, thoughtSignature: answer.signature }],
    });
  });

  it("replays a streamed two-turn exchange with parallel calls: turn 2 matches the recorded request (mirascope)", async () => {
    const [first, second] = cassette("mirascope__test_call_with_tools__google_gemini_2_5_flash__stream.yaml");
    server.enqueue(replay(first!), replay(second!));
    const start = server.requests.length;
    const secrets: Record<string, string> = { mellon: "Welcome to Moria!", radiance: "Life before Death" };
    const tool: ToolSchema = {
      name: "secret_retrieval_tool",
      description: "A tool that requires a password to retrieve a secret.",
      input_schema: { type: "object", properties: { password: { type: "string" } }, required: ["password"] },
    };
    const session = await agentLoop(
      model("gemini-2.5-flash"),
      [tool],
      initSession(
        "Use parallel tool calling.",
        "Please retrieve the secrets associated with each of these passwords: mellon,radiance",
      ),
      {
        toolHandlers: { secret_retrieval_tool: (input: { password: string }) => secrets[input.password] ?? "unknown" },
      },
    );
    const calls = session.messages.filter(isCall);
    expect(calls.map((call) => [call.id, call.input])).toStrictEqual([
      ["secret_retrieval_tool_0_G5nyaJuGE-yrqtsPmJHUoAs", { password: "mellon" }],
      ["secret_retrieval_tool_1_G5nyaJuGE-yrqtsPmJHUoAs", { password: "radiance" }],
    ]);
    expect(calls[1]).toMatchObject({ stopReason: "tool_use", rawStopReason: "STOP" });
    expect(session.messages.at(-1)).toMatchObject({
      role: "assistant",
      content: expect.stringContaining("Life before Death"),
      stopReason: "end_turn",
    });
    const [sentFirst, sentSecond] = bodiesSince(start);
    const recorded = recordedRequest(second!);
    // Byte for byte what the official SDK sent, signatures aside (URL-safe there, as received here).
    expect(
      sentSecond!.contents.map((content) => ({
        ...content,
        parts: content.parts.map((part) =>
          "thoughtSignature" in part ? { ...part, thoughtSignature: standardBase64(part.thoughtSignature) } : part,
        ),
      })),
    ).toStrictEqual(
      recorded.contents.map((content) => ({
        ...content,
        parts: content.parts.map((part) =>
          "thoughtSignature" in part ? { ...part, thoughtSignature: standardBase64(part.thoughtSignature) } : part,
        ),
      })),
    );
    expect(sentSecond!.systemInstruction?.parts).toStrictEqual(recorded.systemInstruction?.parts);
    expect(sentFirst!.contents).toStrictEqual(recordedRequest(first!).contents);
  });

  it("replays a streamed Gemini 3 call and its signature into turn 2 (pydantic-ai)", async () => {
    const [first, second] = cassette("pydantic-ai__test_google_streaming_tool_call_thought_signature.yaml");
    server.enqueue(replay(first!), replay(second!));
    const start = server.requests.length;
    const session = await agentLoop(
      model("gemini-3-pro-preview"),
      [schema("get_country")],
      initSession("s", "What is the capital of the user country? Call the tool"),
      {
        toolHandlers: { get_country: () => "Mexico" },
      },
    );
    expect(session.messages.at(-1)).toMatchObject({
      role: "assistant",
      content: "The capital of Mexico is Mexico City.",
      stopReason: "end_turn",
    });
    const sent = bodiesSince(start)[1]!;
    expect(essentials(sent.contents)).toStrictEqual(essentials(recordedRequest(second!).contents));
    // Gemini gave the call no id, so none goes back (the recorded client sent its own).
    expect(sent.contents[1]!.parts[0]!.functionCall).toStrictEqual({ name: "get_country", args: {} });
  });

  it("replays five non-streamed Gemini 3 turns with 3 parallel calls: every request matches the recorded one (pydantic-ai)", async () => {
    const interactions = cassette("pydantic-ai__test_google_instructions_only_with_tool_calls.yaml");
    server.enqueue(...interactions.map(replay));
    const start = server.requests.length;
    const topics = ["cars", "penguins", "cars", "penguins", "cars", "penguins"];
    const tools = [
      schema("generate_topic"),
      schema("final_result", { response: { type: "array", items: { type: "string" } } }),
    ];
    const session = initSession("Tell three jokes. Generate topics with the generate_topic tool.", "");
    const error = await agentLoop(model("gemini-3-flash-preview", false), tools, session, {
      maxIterations: 5,
      parallel: false,
      // The recorded model calls generate_topic({}) again and again: the guard would refuse the sixth.
      loopGuard: false,
      toolHandlers: { generate_topic: () => topics.shift()!, final_result: () => "done" },
    }).catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({ name: "MaxIterationsError" });
    const sent = bodiesSince(start);
    expect(sent).toHaveLength(5);
    sent.forEach((body, turn) =>
      expect(essentials(body.contents), `turn ${turn + 1}`).toStrictEqual(
        essentials(recordedRequest(interactions[turn]!).contents),
      ),
    );
    const firstTurn = session.messages.slice(2, 5);
    expect(firstTurn.map((message) => (message as { signature?: string }).signature !== undefined)).toStrictEqual([
      true,
      false,
      false,
    ]);
    expect(session.messages.filter(isCall).at(-1)).toMatchObject({
      name: "final_result",
      input: { response: expect.arrayContaining([expect.stringContaining("Lamborghini")]) },
    });
  });

  it("turns the recorded 429 into a retryable ProviderError waiting as long as RetryInfo says", async () => {
    server.enqueue({
      status: 429,
      headers: { "content-type": "application/json; charset=UTF-8" },
      body: fixture("vercel-ai__google-429-retry-info.json"),
    });
    const error = (await agentLoop(model("gemini-2.5-flash"), [], initSession("s", "u"), { retry: false }).catch(
      (thrown: unknown) => thrown,
    )) as ProviderError;
    expect(isProviderError(error)).toBe(true);
    expect(error).toMatchObject({
      provider: "google",
      status: 429,
      retryable: true,
      retryAfterMs: 34_400,
      code: "RESOURCE_EXHAUSTED",
    });
    expect(error.message).toBe("google: You exceeded your current quota, please check your plan.");
  });

  it("maps Gemini's context overflow message to ContextOverflowError", async () => {
    server.enqueue(errorResponse("context_overflow"));
    const error = await agentLoop(model("gemini-2.5-flash", false), [], initSession("s", "u")).catch(
      (thrown: unknown) => thrown,
    );
    expect(isContextOverflowError(error)).toBe(true);
    expect(error).toMatchObject({ status: 400, code: "INVALID_ARGUMENT", retryable: false });
  });

  it("an error chunk inside the stream is a typed error, retried when the model is unavailable", async () => {
    const failing = sse([
      { candidates: [{ content: { role: "model", parts: [{ text: "Hal" }] }, index: 0 }] },
      { error: { code: 503, message: "The model is overloaded.", status: "UNAVAILABLE" } },
    ]);
    server.enqueue(
      { headers: sseHeaders, chunks: failing },
      turnResponse({ text: "fine", stopReason: "end_turn", usage: { input: 1, output: 1 } }, true),
    );
    const retried: string[] = [];
    const session = await agentLoop(model("gemini-2.5-flash"), [], initSession("s", "u"), {
      onEvent: (event) => event.type === "retry" && retried.push(event.error),
      retry: { initialDelayMs: 1 },
    });
    expect(retried).toStrictEqual(["google: The model is overloaded."]);
    expect(withoutTs(session).slice(2)).toStrictEqual([
      expect.objectContaining({ role: "assistant", content: "fine" }),
    ]);
  });

  it("a stream that ends without finishReason is a retryable error, never a turn", async () => {
    const cut = turnResponse(
      { text: "Half an answer and then nothing", stopReason: "end_turn", usage: { input: 1, output: 1 } },
      true,
    );
    server.enqueue({ ...cut, chunks: cut.chunks!.slice(0, -1) });
    const session = initSession("s", "u");
    const error = (await agentLoop(model("gemini-2.5-flash"), [], session, { retry: false }).catch(
      (thrown: unknown) => thrown,
    )) as ProviderError;
    expect(error).toMatchObject({
      name: "ProviderError",
      retryable: true,
      message: "google: the stream ended without a finishReason",
    });
    expect(session.messages).toHaveLength(2);
  });

  it("a blocked prompt or a safety stop ends the turn as content_filter", async () => {
    server.enqueue(
      {
        headers: sseHeaders,
        chunks: sse([
          { promptFeedback: { blockReason: "PROHIBITED_CONTENT" }, usageMetadata: { promptTokenCount: 7 } },
        ]),
      },
      {
        body: JSON.stringify({
          candidates: [{ finishReason: "SAFETY", index: 0 }],
          usageMetadata: { promptTokenCount: 9 },
        }),
      },
    );
    const blocked = await agentLoop(model("gemini-2.5-flash"), [], initSession("s", "u"));
    expect(withoutTs(blocked).at(-1)).toStrictEqual({
      role: "assistant",
      content: "",
      stopReason: "content_filter",
      rawStopReason: "PROHIBITED_CONTENT",
      usage: { inputTokens: 7, outputTokens: 0 },
      // The response names no model version: the one asked for answered.
      model: "gemini-2.5-flash",
    });
    const unsafe = await agentLoop(model("gemini-2.5-flash", false), [], initSession("s", "u"));
    expect(withoutTs(unsafe).at(-1)).toMatchObject({
      role: "assistant",
      content: "",
      stopReason: "content_filter",
      rawStopReason: "SAFETY",
    });
  });

  it("posts to :streamGenerateContent?alt=sse or :generateContent, with the key in x-goog-api-key and never in the URL", async () => {
    const start = server.requests.length;
    for (const stream of [true, false]) {
      server.enqueue(turnResponse({ text: "hi", stopReason: "end_turn", usage: { input: 1, output: 1 } }, stream));
      await agentLoop(model("gemini-2.5-flash", stream), [], initSession("s", "u"));
    }
    const [streamed, plain] = server.requests.slice(start);
    expect(streamed!.url).toBe("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
    expect(plain!.url).toBe("/v1beta/models/gemini-2.5-flash:generateContent");
    for (const request of [streamed!, plain!]) {
      expect(request.headers["x-goog-api-key"]).toBe("gemini-test-key-123456");
      expect(request.url).not.toContain("key");
    }
  });

  it("says which variable to set when there is no API key, and reads GOOGLE_API_KEY after GEMINI_API_KEY", async () => {
    const saved = { gemini: process.env.GEMINI_API_KEY, google: process.env.GOOGLE_API_KEY };
    delete process.env.GEMINI_API_KEY;
    delete process.env.GOOGLE_API_KEY;
    try {
      await expect(
        agentLoop(gemini({ model: "m", baseURL: server.origin }), [], initSession("s", "u")),
      ).rejects.toThrow("set GEMINI_API_KEY");
      process.env.GOOGLE_API_KEY = "google-fallback-key-123";
      server.enqueue(turnResponse({ text: "hi", stopReason: "end_turn", usage: { input: 1, output: 1 } }, true));
      await agentLoop(gemini({ model: "m", baseURL: server.origin }), [], initSession("s", "u"));
      expect(server.requests.at(-1)!.headers["x-goog-api-key"]).toBe("google-fallback-key-123");
    } finally {
      for (const [name, value] of [
        ["GEMINI_API_KEY", saved.gemini],
        ["GOOGLE_API_KEY", saved.google],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });
});

describe("google: conversion rules", () => {
  const convert = (session: Session, model = "gemini-2.5-flash"): GeminiRequest =>
    toGeminiRequest(session, [], { model });
  const sessionOf = (...messages: Message[]): Session => {
    const session: Session = { messages: [] };
    for (const message of messages) extendSession(session, message);
    return session;
  };

  it("system messages become systemInstruction, never contents", () => {
    const request = convert(
      sessionOf(
        { role: "system", content: "Be precise." },
        { role: "system", content: "Answer in French." },
        { role: "user", content: "hi" },
      ),
    );
    expect(request.systemInstruction).toStrictEqual({
      parts: [{ text: "Be precise." }, { text: "Answer in French." }],
    });
    expect(request.contents).toStrictEqual([{ role: "user", parts: [{ text: "hi" }] }]);
  });

  it("roles are user and model; a turn's thinking, text and calls form one model content, in order", () => {
    const request = convert(
      sessionOf(
        { role: "user", content: "go" },
        { type: "thinking", content: "plan", signature: "sig-thought", provider: "google" },
        { role: "assistant", content: "Working." },
        { type: "tool_call", id: "a", name: "run", input: { n: 1 } },
        { type: "tool_call", id: "b", name: "run", input: { n: 2 } },
        { type: "tool_result", id: "a", output: "1" },
        { type: "tool_result", id: "b", output: "2" },
        { role: "assistant", content: "Done." },
      ),
    );
    expect(request.contents.map((content) => [content.role, content.parts.length])).toStrictEqual([
      ["user", 1],
      ["model", 4],
      ["user", 2],
      ["model", 1],
    ]);
    expect(request.contents[1]!.parts).toStrictEqual([
      { text: "plan", thought: true, thoughtSignature: "sig-thought" },
      { text: "Working." },
      { functionCall: { name: "run", args: { n: 1 } } },
      { functionCall: { name: "run", args: { n: 2 } } },
    ]);
  });

  it("puts all of a turn's functionResponses in one user content, in call order, user text after them", () => {
    const request = convert(
      sessionOf(
        { role: "user", content: "go" },
        { type: "tool_call", id: "first", name: "one", input: {} },
        { type: "tool_call", id: "second", name: "two", input: {} },
        { type: "tool_call", id: "third", name: "three", input: {} },
        { type: "tool_result", id: "third", output: "3" },
        { type: "tool_result", id: "first", output: "1" },
        { role: "user", content: "and now?" },
        { type: "tool_result", id: "second", output: "2" },
      ),
    );
    expect(request.contents).toHaveLength(3);
    expect(request.contents[2]).toStrictEqual({
      role: "user",
      parts: [
        { functionResponse: { name: "one", response: { output: "1" } } },
        { functionResponse: { name: "two", response: { output: "2" } } },
        { functionResponse: { name: "three", response: { output: "3" } } },
        { text: "and now?" },
      ],
    });
  });

  it("args and response are always objects: output as { output }, errors as { error }, JSON kept as JSON", () => {
    const request = convert(
      sessionOf(
        { role: "user", content: "go" },
        { type: "tool_call", id: "a", name: "text", input: {} },
        { type: "tool_call", id: "b", name: "json", input: { deep: { list: [1, 2] } } },
        { type: "tool_call", id: "c", name: "fails", input: {} },
        { type: "tool_result", id: "a", output: "plain text" },
        { type: "tool_result", id: "b", output: { rows: [1, 2], next: null } },
        { type: "tool_result", id: "c", output: "Error: disk full", isError: true },
      ),
    );
    expect(request.contents[1]!.parts.map((part) => part.functionCall!.args)).toStrictEqual([
      {},
      { deep: { list: [1, 2] } },
      {},
    ]);
    expect(request.contents[2]!.parts.map((part) => part.functionResponse!.response)).toStrictEqual([
      { output: "plain text" },
      { output: { rows: [1, 2], next: null } },
      { error: "Error: disk full" },
    ]);
  });

  it("generates stable, per-response ids for calls without one, and sends back only ids Gemini gave", () => {
    const response = (responseId: string, parts: Part[]): GeminiResponse => ({
      candidates: [{ content: { role: "model", parts }, finishReason: "STOP" }],
      responseId,
    });
    const twoCalls = [
      { functionCall: { name: "look", args: { q: "a" } } },
      { functionCall: { name: "look", args: { q: "b" } } },
    ];
    const first = fromGeminiResponse(response("r1", twoCalls));
    expect(first.map((message) => (message as { id: string }).id)).toStrictEqual(["look_0_r1", "look_1_r1"]);
    expect(fromGeminiResponse(response("r1", twoCalls))).toStrictEqual(first);
    expect(fromGeminiResponse(response("r2", twoCalls)).map((message) => (message as { id: string }).id)).toStrictEqual(
      ["look_0_r2", "look_1_r2"],
    );
    const [given] = fromGeminiResponse(response("r3", [{ functionCall: { id: "fc_9x", name: "look", args: {} } }]));
    expect(given).toMatchObject({ id: "fc_9x", provider: "google" });
    expect(given).not.toHaveProperty("generatedId");

    const session = sessionOf({ role: "user", content: "go" }, ...first, given!, {
      type: "tool_call",
      id: "call_openai_1",
      name: "look",
      input: {},
    });
    for (const id of ["look_0_r1", "look_1_r1", "fc_9x", "call_openai_1"])
      extendSession(session, { type: "tool_result", id, output: "ok" });
    const parts = convert(session)
      .contents.slice(1)
      .flatMap((content) => content.parts);
    expect(parts.map((part) => (part.functionCall ?? part.functionResponse)?.id)).toStrictEqual([
      undefined,
      undefined,
      "fc_9x",
      undefined,
      undefined,
      undefined,
      "fc_9x",
      undefined,
    ]);
  });

  it("keeps each thoughtSignature on its own part and never sends a foreign, unsigned or compacted one", () => {
    const request = convert(
      sessionOf(
        { role: "user", content: "go" },
        { type: "thinking", content: "anthropic reasoning", signature: "anthropic-sig", provider: "anthropic" },
        { type: "thinking", content: "unsigned summary", provider: "google" },
        { type: "thinking", content: "cut...", signature: "old-sig", provider: "google", compacted: true },
        { type: "thinking", content: "", signature: "openai-encrypted", provider: "openai-responses", redacted: true },
        { role: "assistant", content: "Let me look.", signature: "text-sig", provider: "google" },
        {
          type: "tool_call",
          id: "a",
          name: "look",
          input: {},
          signature: "call-sig",
          provider: "google",
          generatedId: true,
        },
        {
          type: "tool_call",
          id: "b",
          name: "look",
          input: { q: "cut..." },
          signature: "stale-sig",
          provider: "google",
          generatedId: true,
          compacted: true,
        },
        { type: "tool_call", id: "c", name: "look", input: {}, signature: "foreign-sig", provider: "bedrock" },
        { type: "tool_result", id: "a", output: "1" },
        { type: "tool_result", id: "b", output: "2" },
        { type: "tool_result", id: "c", output: "3" },
      ),
    );
    expect(request.contents[1]!.parts).toStrictEqual([
      { text: "Let me look.", thoughtSignature: "text-sig" },
      { functionCall: { name: "look", args: {} }, thoughtSignature: "call-sig" },
      { functionCall: { name: "look", args: { q: "cut..." } } },
      { functionCall: { name: "look", args: {} } },
    ]);
  });

  it("gives Gemini 3 the documented validator-skip signature for a step whose first call has none; not Gemini 2", () => {
    const session = sessionOf(
      { role: "user", content: "go" },
      { type: "tool_call", id: "toolu_1", name: "look", input: {} },
      { type: "tool_call", id: "toolu_2", name: "look", input: {} },
      { type: "tool_result", id: "toolu_1", output: "1" },
      { type: "tool_result", id: "toolu_2", output: "2" },
      { type: "tool_call", id: "own", name: "look", input: {}, signature: "real-sig", provider: "google" },
      { type: "tool_result", id: "own", output: "3" },
    );
    const signatures = (model: string) =>
      convert(session, model)
        .contents.filter((content) => content.role === "model")
        .map((content) => content.parts.map((part) => part.thoughtSignature));
    expect(signatures("gemini-3-pro-preview")).toStrictEqual([
      ["skip_thought_signature_validator", undefined],
      ["real-sig"],
    ]);
    expect(signatures("models/gemini-2.5-flash")).toStrictEqual([[undefined, undefined], ["real-sig"]]);
  });

  it("answers orphan calls and drops orphan results, skips empty assistant text, keeps an empty user text", () => {
    const request = convert(
      sessionOf(
        { role: "user", content: "" },
        { type: "tool_call", id: "a", name: "t", input: {} },
        { type: "tool_result", id: "ghost", output: "x" },
        { role: "assistant", content: "", stopReason: "aborted" },
        { role: "user", content: "continue" },
      ),
    );
    expect(request.contents).toStrictEqual([
      { role: "user", parts: [{ text: "" }] },
      { role: "model", parts: [{ functionCall: { name: "t", args: {} } }] },
      {
        role: "user",
        parts: [
          { functionResponse: { name: "t", response: { error: "Error: no result was recorded for this tool call." } } },
          { text: "continue" },
        ],
      },
    ]);
  });

  it("maps finishReason and usage: STOP with calls is tool_use, filters are content_filter (raw kept), thoughts count as output", () => {
    const end = (finishReason: string, parts: Part[] = [{ text: "x" }]) => {
      const messages = fromGeminiResponse({ candidates: [{ content: { parts }, finishReason }], responseId: "r" });
      const { stopReason, rawStopReason } = messages.at(-1)!;
      return rawStopReason === undefined ? [stopReason] : [stopReason, rawStopReason];
    };
    expect(end("STOP")).toStrictEqual(["end_turn"]);
    expect(end("STOP", [{ functionCall: { name: "f", args: {} } }])).toStrictEqual(["tool_use", "STOP"]);
    expect(end("MAX_TOKENS")).toStrictEqual(["max_tokens"]);
    for (const reason of ["SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII"])
      expect(end(reason)).toStrictEqual(["content_filter", reason]);
    expect(end("MALFORMED_FUNCTION_CALL")).toStrictEqual(["other", "MALFORMED_FUNCTION_CALL"]);
    const [message] = fromGeminiResponse({
      candidates: [{ content: { parts: [{ text: "x" }] }, finishReason: "STOP" }],
      usageMetadata: {
        promptTokenCount: 1000,
        cachedContentTokenCount: 800,
        candidatesTokenCount: 20,
        thoughtsTokenCount: 30,
        totalTokenCount: 1050,
      },
    });
    expect(message!.usage).toStrictEqual({
      inputTokens: 1000,
      outputTokens: 50,
      cacheReadTokens: 800,
      reasoningTokens: 30,
    });
  });

  it("never returns a call whose arguments are not an object, unless the turn was cut by MAX_TOKENS", async () => {
    const parts = [{ functionCall: { name: "f", args: '{"half' } }];
    expect(() => fromGeminiResponse({ candidates: [{ content: { parts }, finishReason: "STOP" }] })).toThrow(
      expect.objectContaining({ retryable: true }),
    );
    expect(
      fromGeminiResponse({ candidates: [{ content: { parts }, finishReason: "MAX_TOKENS" }], responseId: "r" }),
    ).toMatchObject([{ type: "tool_call", input: {}, stopReason: "max_tokens" }]);
    const events: ModelStreamEvent[] = [];
    const streamed = gemini({
      model: "m",
      apiKey: "key-0123456789",
      fetch: async () =>
        new Response(sse([{ candidates: [{ content: { parts }, finishReason: "STOP" }] }]).join(""), {
          headers: sseHeaders,
        }),
    })([], initSession("s", "u"), {
      signal: new AbortController().signal,
      iteration: 1,
    }) as AsyncIterable<ModelStreamEvent>;
    const error = await (async () => {
      for await (const event of streamed) events.push(event);
    })().catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({ retryable: true });
    expect(events.filter((event) => event.type === "message")).toStrictEqual([]);
  });

  it("a session recorded with another provider converts without error", () => {
    const foreign = sessionOf(
      { role: "system", content: "s" },
      { role: "user", content: "u" },
      { type: "thinking", content: "hm", signature: "EqQBCkgIBhABGAIiQ...", provider: "anthropic" },
      { type: "thinking", content: "", signature: "gAAAAABo...", provider: "openai-responses", redacted: true },
      { type: "tool_call", id: "toolu_01A.weird/id", name: "look", input: { q: "x" } },
      { type: "tool_result", id: "toolu_01A.weird/id", output: { ok: true } },
      { role: "assistant", content: "done", stopReason: "end_turn", usage: { inputTokens: 1, outputTokens: 1 } },
    );
    const request = JSON.parse(JSON.stringify(convert(foreign))) as GeminiRequest;
    expect(JSON.stringify(request)).not.toMatch(/EqQB|gAAAA|toolu_/);
    expect(request.contents.map((content) => content.role)).toStrictEqual(["user", "model", "user", "model"]);
  });

  it("builds the whole request: every message kind, tools and generation config", () => {
    const session = sessionOf(
      { role: "system", content: "You are precise." },
      { role: "user", content: "Weather in Paris and Rome?" },
      { type: "thinking", content: "Two cities: two calls.", signature: "thought-sig", provider: "google" },
      { type: "thinking", content: "foreign", signature: "sig", provider: "anthropic" },
      { role: "assistant", content: "Checking both.", signature: "text-sig", provider: "google" },
      {
        type: "tool_call",
        id: "fc_paris",
        name: "weather",
        input: { city: "Paris" },
        signature: "call-sig",
        provider: "google",
      },
      {
        type: "tool_call",
        id: "weather_1_resp",
        name: "weather",
        input: { city: "Rome" },
        provider: "google",
        generatedId: true,
      },
      { type: "tool_result", id: "fc_paris", output: { temperature: 18 } },
      { type: "tool_result", id: "weather_1_resp", output: "Error: timeout", isError: true },
      { role: "assistant", content: "Paris is 18 °C; Rome timed out.", stopReason: "end_turn" },
      { role: "user", content: "Try Rome again." },
      { type: "tool_call", id: "call_from_openai", name: "weather", input: { city: "Rome" } },
      { type: "tool_result", id: "call_from_openai", output: "21 °C" },
    );
    const tools: ToolSchema[] = [
      {
        name: "weather",
        description: "Current weather.",
        input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
      },
    ];
    expect(
      toGeminiRequest(session, tools, {
        model: "gemini-3-pro-preview",
        maxTokens: 2048,
        temperature: 0.2,
        thinking: { budgetTokens: 1024, includeThoughts: true },
      }),
    ).toMatchSnapshot();
  });
});

// Opt-in: runs only with a real key (GEMINI_API_KEY or GOOGLE_API_KEY), never in CI.
liveAgentSuite("google", (process.env.GEMINI_API_KEY ?? process.env.GOOGLE_API_KEY) !== undefined, () =>
  gemini({ model: process.env.GEMINI_MODEL ?? "gemini-2.5-flash", maxTokens: 2048 }),
);

describe("google: native structured output", () => {
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
  const usage = { input: 10, output: 5 };
  const model = (stream: boolean) =>
    gemini({ model: "gemini-2.5-flash", baseURL: server.origin, apiKey: "gemini-test-key-123456", stream });
  const answer = {
    role: "assistant",
    content: '{"city":"Paris","celsius":21}',
    output: { city: "Paris", celsius: 21 },
    stopReason: "end_turn",
    usage: { inputTokens: 10, outputTokens: 5 },
  };

  for (const stream of [true, false]) {
    it(`a run with output: schema and no tools sends responseMimeType and responseJsonSchema, without the instruction; the answer is parsed into output (${stream ? "streamed" : "not streamed"})`, async () => {
      expect(model(stream).structuredOutput).toBe("native");
      server.enqueue(turnResponse({ text: '{"city":"Paris","celsius":21}', stopReason: "end_turn", usage }, stream));
      const before = server.requests.length;
      const session = await agentLoop(model(stream), [], initSession("You forecast.", "Paris?"), { output: forecast });
      const [body] = server.requests.slice(before).map((request) => request.body as GeminiRequest);
      expect(body!.generationConfig).toStrictEqual({
        responseMimeType: "application/json",
        responseJsonSchema: forecast,
      });
      expect(body!.systemInstruction).toStrictEqual({ parts: [{ text: "You forecast." }] });
      expect(withoutAnswerer(withoutTs(session).at(-1))).toStrictEqual(answer);
      expect(structuredOutput(session)).toStrictEqual({ city: "Paris", celsius: 21 });
    });
  }

  it("with tools (Gemini refuses function calling with a JSON response type) every call gets the instruction first in systemInstruction instead; the answer is still parsed into output", async () => {
    server.enqueue(
      turnResponse(
        { toolCalls: [{ id: "call_w", name: "weather", input: { city: "Paris" } }], stopReason: "tool_use", usage },
        true,
      ),
      turnResponse({ text: '{"city":"Paris","celsius":21}', stopReason: "end_turn", usage }, true),
    );
    const before = server.requests.length;
    const session = await agentLoop(
      model(true),
      [schema("weather", { city: { type: "string" } })],
      initSession("You forecast.", "Paris?"),
      {
        toolHandlers: { weather: () => "21C" },
        output: forecast,
      },
    );
    const bodies = server.requests.slice(before).map((request) => request.body as GeminiRequest);
    expect(bodies).toHaveLength(2);
    for (const body of bodies) {
      expect(body).not.toHaveProperty("generationConfig");
      expect(body.systemInstruction).toStrictEqual({
        parts: [{ text: expect.stringContaining(JSON.stringify(forecast)) }, { text: "You forecast." }],
      });
      expect(body.tools?.[0]?.functionDeclarations.map((declaration) => declaration.name)).toStrictEqual(["weather"]);
    }
    expect(withoutAnswerer(withoutTs(session).at(-1))).toStrictEqual(answer);
  });

  it("the converter: other generationConfig settings stay beside the JSON mode; without output there is none", () => {
    const session = initSession("s", "u");
    expect(
      toGeminiRequest(session, [], { model: "gemini-2.5-flash", temperature: 0, output: { jsonSchema: forecast } })
        .generationConfig,
    ).toStrictEqual({
      temperature: 0,
      responseMimeType: "application/json",
      responseJsonSchema: forecast,
    });
    expect(toGeminiRequest(session, [], { model: "gemini-2.5-flash", temperature: 0 }).generationConfig).toStrictEqual({
      temperature: 0,
    });
  });
});
