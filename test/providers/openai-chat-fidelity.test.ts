import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentLoop, initSession, type ModelMessage, type Session } from "simple-agent-loop";
import {
  fromOpenAIChatResponse,
  openaiChat,
  toOpenAIChatRequest,
  type OpenAIChatResponse,
} from "simple-agent-loop/openai";
import { withoutTs, withoutAnswerer } from "../helpers.ts";
import { sse, sseHeaders, startReplayServer, type ReplayServer } from "./replay-server.ts";
import { recordedFixtures } from "./fixtures.ts";

const { text: fixture } = recordedFixtures("openai-chat");
const chunks = (name: string): Record<string, unknown>[] =>
  fixture(name)
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);

const weather = {
  name: "weather",
  description: "The weather at a place.",
  input_schema: { type: "object", properties: { location: { type: "string" } } },
};

describe("openai-chat: what compatible servers send", () => {
  let server: ReplayServer;
  beforeAll(async () => {
    server = await startReplayServer();
  });
  afterAll(async () => {
    await server.close();
  });
  const model = (stream = true) =>
    openaiChat({ model: "test-model", baseURL: server.origin, apiKey: "sk-test-key-123456", stream });

  it("reads Mistral's array content: thinking parts become thinking, text parts the answer (streamed)", async () => {
    server.enqueue({
      headers: sseHeaders,
      chunks: sse(chunks("vercel-ai__mistral-reasoning.chunks.txt"), { done: true }),
    });
    const deltas: string[] = [];
    const session = await agentLoop(model(), [], initSession("s", "2+2?"), {
      onEvent: (event) => void (event.type === "thinking-delta" && deltas.push(event.delta)),
    });
    expect(withoutAnswerer(withoutTs(session).slice(2))).toStrictEqual([
      {
        type: "thinking",
        content: "The user is asking for 2+2. This is basic arithmetic. 2+2=4.",
        signature: "content",
        provider: "openai-chat",
      },
      { role: "assistant", content: "2 + 2 = 4", stopReason: "end_turn", usage: { inputTokens: 10, outputTokens: 46 } },
    ]);
    expect(deltas.join("")).toBe("The user is asking for 2+2. This is basic arithmetic. 2+2=4.");
  });

  it("reads Mistral's array content in a non-streamed message", () => {
    const body = JSON.parse(fixture("vercel-ai__mistral-reasoning.json")) as OpenAIChatResponse;
    expect(withoutAnswerer(fromOpenAIChatResponse(body))).toStrictEqual([
      {
        type: "thinking",
        content: "The user is asking for 2+2. This is basic arithmetic. 2+2=4.",
        signature: "content",
        provider: "openai-chat",
      },
      { role: "assistant", content: "2 + 2 = 4", stopReason: "end_turn", usage: { inputTokens: 10, outputTokens: 46 } },
    ]);
  });

  it("keeps the order when thinking parts, text parts and plain strings alternate, and sends the thinking back as parts", async () => {
    // The recorded Mistral chunks, then the same answer again as a plain string and more thinking.
    const recorded = chunks("vercel-ai__mistral-reasoning.chunks.txt");
    const last = recorded.at(-1)!;
    const more = [
      { ...recorded[2], choices: [{ index: 0, delta: { content: " (checked)" }, finish_reason: null }] },
      {
        ...recorded[1],
        choices: [
          {
            index: 0,
            delta: { content: [{ type: "thinking", thinking: [{ type: "text", text: "Double-checked." }] }] },
            finish_reason: null,
          },
        ],
      },
      {
        ...recorded[2],
        choices: [{ index: 0, delta: { content: [{ type: "text", text: "Sure." }] }, finish_reason: null }],
      },
    ];
    server.enqueue(
      { headers: sseHeaders, chunks: sse([...recorded.slice(0, 3), ...more, last], { done: true }) },
      { headers: sseHeaders, chunks: sse(recorded, { done: true }) },
    );
    const session = await agentLoop(model(), [], initSession("s", "2+2?"));
    expect(
      withoutTs(session)
        .slice(2)
        .map((message) => ("content" in message ? message.content : undefined)),
    ).toStrictEqual([
      "The user is asking for 2+2. This is basic arithmetic. 2+2=4.",
      "2 + 2 = 4 (checked)",
      "Double-checked.",
      "Sure.",
    ]);
    session.messages.push({ role: "user", content: "again" });
    await agentLoop(model(), [], session);
    const sent = server.requests.at(-1)!.body as { messages: { role: string; content: unknown }[] };
    expect(sent.messages.filter((message) => message.role === "assistant")).toStrictEqual([
      {
        role: "assistant",
        content: [
          {
            type: "thinking",
            thinking: [
              { type: "text", text: "The user is asking for 2+2. This is basic arithmetic. 2+2=4.\n\nDouble-checked." },
            ],
          },
          { type: "text", text: "2 + 2 = 4 (checked)\n\nSure." },
        ],
      },
    ]);
  });

  it("counts xAI's reasoning tokens, which its completion_tokens leaves out, in outputTokens (streamed and not)", async () => {
    const body = JSON.parse(fixture("vercel-ai__xai-tool-call.json")) as OpenAIChatResponse;
    // total_tokens 506 = 291 prompt + 26 completion + 189 reasoning.
    expect(fromOpenAIChatResponse(body).at(-1)).toMatchObject({
      usage: { inputTokens: 291, outputTokens: 215, cacheReadTokens: 244, reasoningTokens: 189 },
    });
    server.enqueue({ headers: sseHeaders, chunks: sse(chunks("vercel-ai__xai-tool-call.chunks.txt"), { done: true }) });
    const session = await agentLoop(model(), [weather], initSession("s", "weather in SF?"), {
      maxIterations: 1,
      toolHandlers: { weather: () => "sunny" },
    }).catch((error: { session: Session }) => error.session);
    const call = session.messages.find(
      (message): message is Extract<ModelMessage, { type: "tool_call" }> =>
        "type" in message && message.type === "tool_call",
    );
    expect(call).toMatchObject({
      id: "call_55117580",
      input: { location: "San Francisco" },
      usage: { inputTokens: 291, outputTokens: 222, cacheReadTokens: 290, reasoningTokens: 196 },
    });
  });

  it("keeps OpenAI's count as it is: its completion_tokens already includes reasoning", () => {
    const usage = {
      prompt_tokens: 100,
      completion_tokens: 300,
      total_tokens: 400,
      completion_tokens_details: { reasoning_tokens: 256 },
    };
    expect(
      fromOpenAIChatResponse({ choices: [{ message: { content: "x" }, finish_reason: "stop" }], usage }).at(-1),
    ).toMatchObject({
      usage: { inputTokens: 100, outputTokens: 300, reasoningTokens: 256 },
    });
  });

  it("reads Groq's usage from x_groq and OpenRouter's reasoning_details", async () => {
    const base = chunks("vercel-ai__xai-tool-call.chunks.txt")[0]!;
    const stream = [
      {
        ...base,
        choices: [
          {
            index: 0,
            delta: {
              reasoning_details: [{ type: "reasoning.text", text: "Thinking it over.", format: "unknown", index: 0 }],
            },
          },
        ],
      },
      { ...base, choices: [{ index: 0, delta: { content: "Done." } }] },
      {
        ...base,
        choices: [{ index: 0, delta: {}, finish_reason: "stop" }],
        x_groq: { id: "req_1", usage: { prompt_tokens: 20, completion_tokens: 7, total_tokens: 27 } },
      },
    ];
    server.enqueue({ headers: sseHeaders, chunks: sse(stream, { done: true }) });
    const session = await agentLoop(model(), [], initSession("s", "u"));
    expect(withoutAnswerer(withoutTs(session).slice(2))).toStrictEqual([
      { type: "thinking", content: "Thinking it over.", signature: "reasoning", provider: "openai-chat" },
      { role: "assistant", content: "Done.", stopReason: "end_turn", usage: { inputTokens: 20, outputTokens: 7 } },
    ]);
  });

  it("two calls a server gives the same index, each with its own id, stay two calls", async () => {
    // The recorded parallel calls (index 0 and 1), both at index 0.
    const body = fixture("openai-python__parse-multiple-pydantic-tools__f82268f2.sse.txt").replaceAll(
      '"tool_calls":[{"index":1,',
      '"tool_calls":[{"index":0,',
    );
    expect(body).not.toContain('"index":1,');
    server.enqueue({ headers: sseHeaders, body });
    const inputs: unknown[] = [];
    const session = await agentLoop(model(), [], initSession("s", "u"), {
      maxIterations: 1,
      toolHandlers: {
        GetWeatherArgs: (input: unknown) => (inputs.push(input), "sunny"),
        get_stock_price: (input: unknown) => (inputs.push(input), "1"),
      },
    }).catch((error: { session: Session }) => error.session);
    const calls = session.messages.filter((message) => "type" in message && message.type === "tool_call");
    expect(calls.map((call) => ("id" in call ? call.id : ""))).toStrictEqual([
      "call_JMW1whyEaYG438VE1OIflxA2",
      "call_DNYTawLBoN8fj3KN6qU9N1Ou",
    ]);
    expect(calls.every((call) => "input" in call && Object.keys(call.input).length > 0)).toBe(true);
  });

  it("sends Mistral thinking of another turn back as parts, and nothing of it to the request when it is not its own", () => {
    const session: Session = {
      messages: [
        { role: "user", content: "u" },
        { type: "thinking", content: "hmm", signature: "content", provider: "openai-chat" },
        { role: "assistant", content: "a", stopReason: "end_turn" },
        { type: "thinking", content: "foreign", signature: "content", provider: "anthropic" },
        { role: "assistant", content: "b", stopReason: "end_turn" },
      ],
    };
    expect(toOpenAIChatRequest(session, [], { model: "m" }).messages).toStrictEqual([
      { role: "user", content: "u" },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: [{ type: "text", text: "hmm" }] },
          { type: "text", text: "a" },
        ],
      },
      { role: "assistant", content: "b" },
    ]);
  });
});
