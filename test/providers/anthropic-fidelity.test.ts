import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentLoop, initSession, isProviderError, type AgentEvent, type Session } from "simple-agent-loop";
import { anthropic, fromAnthropicResponse } from "simple-agent-loop/anthropic";
import { withoutTs, withoutAnswerer } from "../helpers.ts";
import { sse, sseHeaders, startReplayServer, type ReplayServer } from "./replay-server.ts";
import { recordedFixtures } from "./fixtures.ts";

const { text: fixture } = recordedFixtures("anthropic");

// The `data:` payloads of a raw SSE recording, in order.
function sseEvents(text: string): Record<string, unknown>[] {
  return text
    .split("\n")
    .filter((line) => line.startsWith("data: "))
    .map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>);
}

const recordedToolUse = (): Record<string, unknown>[] =>
  sseEvents(fixture("anthropic-sdk-python__tool_use_response.txt"));
const recordedRunner = (): { response: { body: string } }[] =>
  JSON.parse(fixture("anthropic-sdk-python__tool-runner-stream__555fb399.json")) as { response: { body: string } }[];
const thinkingToolCall = (): Record<string, unknown> =>
  JSON.parse(fixture("vercel-ai__issue-13430-thinking-tool-call.json")) as Record<string, unknown>;

describe("anthropic: stream shapes beyond the common case", () => {
  let server: ReplayServer;
  beforeAll(async () => {
    server = await startReplayServer();
  });
  afterAll(async () => {
    await server.close();
  });
  const model = () =>
    anthropic({ model: "claude-sonnet-4-6", baseURL: server.origin, apiKey: "sk-ant-test-key-123456" });

  it("takes the content, stop reason and usage a message_start already carries, then runs its tool call", async () => {
    // The recorded non-streamed message, sent whole in message_start and closed by message_stop.
    const whole = thinkingToolCall();
    server.enqueue(
      {
        headers: sseHeaders,
        chunks: sse([{ type: "message_start", message: whole }, { type: "message_stop" }], { withEventNames: true }),
      },
      { headers: sseHeaders, body: recordedRunner()[1]!.response.body },
    );
    const ran: unknown[] = [];
    const session = await agentLoop(model(), [], initSession("s", "check the sandbox"), {
      toolHandlers: { checkSandboxErrors: (input: unknown) => (ran.push(input), "no errors") },
    });
    expect(ran).toStrictEqual([{}]);
    const [thinking, call, result] = withoutTs(session).slice(2, 5);
    expect(thinking).toMatchObject({
      type: "thinking",
      content: "The user wants me to call checkSandboxErrors immediately.",
      provider: "anthropic",
    });
    expect(withoutAnswerer(call)).toStrictEqual({
      type: "tool_call",
      id: "toolu_017R7ACrx7NF7sLDDtvdQ1u9",
      name: "checkSandboxErrors",
      input: {},
      stopReason: "tool_use",
      usage: { inputTokens: 599, outputTokens: 59, reasoningTokens: 18 },
    });
    expect(result).toStrictEqual({ type: "tool_result", id: "toolu_017R7ACrx7NF7sLDDtvdQ1u9", output: "no errors" });
    expect(session.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "end_turn" });
  });

  it("never merges a second message_start into the turn: the response is retried and only the good one is kept", async () => {
    // A recorded stream cut while its tool_use block is open, then another recorded message from its start.
    const first = recordedToolUse();
    const open = first.findIndex(
      (event) => event.type === "content_block_start" && (event.content_block as { type: string }).type === "tool_use",
    );
    const second = sseEvents(recordedRunner()[1]!.response.body);
    server.enqueue(
      { headers: sseHeaders, chunks: sse([...first.slice(0, open + 3), ...second], { withEventNames: true }) },
      { headers: sseHeaders, body: fixture("anthropic-sdk-python__tool_use_response.txt") },
      { headers: sseHeaders, body: recordedRunner()[1]!.response.body },
    );
    const events: AgentEvent[] = [];
    const ran: unknown[] = [];
    const session = await agentLoop(model(), [], initSession("s", "weather in Paris?"), {
      retry: { initialDelayMs: 1 },
      onEvent: (event) => events.push(event),
      toolHandlers: { get_weather: (input: unknown) => (ran.push(input), "sunny") },
    });
    const retry = events.find((event) => event.type === "retry");
    expect(retry).toBeDefined();
    expect(ran).toHaveLength(1);
    const messages = withoutTs(session).slice(2);
    expect(messages.map((message) => ("role" in message ? message.role : message.type))).toStrictEqual([
      "assistant",
      "tool_call",
      "tool_result",
      "assistant",
    ]);
    expect(messages[0]).toStrictEqual({
      role: "assistant",
      content: "I'll check the current weather in Paris for you.",
    });
    expect(messages.at(-1)).toMatchObject({ content: expect.stringContaining("San Francisco") });
  });

  it("a second message_start is a retryable error even when nothing of the first is open", async () => {
    const first = recordedToolUse().filter((event) => event.type !== "message_delta" && event.type !== "message_stop");
    const second = sseEvents(recordedRunner()[1]!.response.body);
    server.enqueue({ headers: sseHeaders, chunks: sse([...first, ...second], { withEventNames: true }) });
    const session = initSession("s", "u");
    const error = await agentLoop(model(), [], session, { retry: { maxRetries: 0 } }).catch(
      (failure: unknown) => failure,
    );
    expect(isProviderError(error) && error.retryable).toBe(true);
    expect(session.messages).toHaveLength(2);
  });

  it("keeps text whose content_block_start is missing, and blocks never stopped, in order", async () => {
    const events = recordedToolUse().filter(
      (event) => event.type !== "content_block_stop" && !(event.type === "content_block_start" && event.index === 0),
    );
    server.enqueue({ headers: sseHeaders, chunks: sse(events, { withEventNames: true }) });
    const ran: unknown[] = [];
    const session = await agentLoop(model(), [], initSession("s", "weather in Paris?"), {
      maxIterations: 1,
      toolHandlers: { get_weather: (input: unknown) => (ran.push(input), "sunny") },
    }).catch((error: { session: Session }) => error.session);
    const turn = withoutTs(session).slice(2, 5);
    expect(turn[0]).toStrictEqual({ role: "assistant", content: "I'll check the current weather in Paris for you." });
    expect(turn[1]).toMatchObject({
      type: "tool_call",
      id: "toolu_01NRLabsLyVHZPKxbKvkfSMn",
      name: "get_weather",
      stopReason: "tool_use",
    });
    expect(ran).toHaveLength(1);
  });

  it("a block started twice before its stop is a retryable error, not a silently replaced block", async () => {
    const events = recordedToolUse();
    const start = events.findIndex((event) => event.type === "content_block_start" && event.index === 1);
    server.enqueue({
      headers: sseHeaders,
      chunks: sse([...events.slice(0, start + 2), events[start]!, ...events.slice(start + 2)], {
        withEventNames: true,
      }),
    });
    const session = initSession("s", "u");
    const error = await agentLoop(model(), [], session, { retry: { maxRetries: 0 } }).catch(
      (failure: unknown) => failure,
    );
    expect(isProviderError(error) && error.retryable).toBe(true);
    expect(session.messages).toHaveLength(2);
  });

  it("records thinking tokens as reasoningTokens, streamed and not", async () => {
    expect(fromAnthropicResponse(thinkingToolCall() as never).at(-1)).toMatchObject({
      usage: { inputTokens: 599, outputTokens: 59, reasoningTokens: 18 },
    });
    // The recorded usage, reported at the end of a stream in message_delta.
    const { usage } = thinkingToolCall() as { usage: Record<string, unknown> };
    const events = recordedToolUse().map((event) => (event.type === "message_delta" ? { ...event, usage } : event));
    server.enqueue({ headers: sseHeaders, chunks: sse(events, { withEventNames: true }) });
    const session = await agentLoop(model(), [], initSession("s", "u"), {
      maxIterations: 1,
      toolHandlers: { get_weather: () => "sunny" },
    }).catch((error: { session: Session }) => error.session);
    expect(session.messages.find((message) => "usage" in message && message.usage !== undefined)).toMatchObject({
      usage: { inputTokens: 599, outputTokens: 59, reasoningTokens: 18 },
    });
  });

  it("keeps a refusal's stop_details on the message, streamed and not", async () => {
    const details = { type: "refusal", category: "cyber", explanation: "This request asks for help writing malware." };
    const body = {
      ...thinkingToolCall(),
      content: [{ type: "text", text: "I can't help with that." }],
      stop_reason: "refusal",
      stop_details: details,
    };
    expect(withoutAnswerer(fromAnthropicResponse(body as never))).toStrictEqual([
      {
        role: "assistant",
        content: "I can't help with that.",
        stopReason: "refusal",
        stopDetails: details,
        usage: { inputTokens: 599, outputTokens: 59, reasoningTokens: 18 },
      },
    ]);
    const streamed = sseEvents(recordedRunner()[1]!.response.body).map((event) =>
      event.type === "message_delta"
        ? { ...event, delta: { stop_reason: "refusal", stop_sequence: null, stop_details: details } }
        : event,
    );
    server.enqueue({ headers: sseHeaders, chunks: sse(streamed, { withEventNames: true }) });
    const session = await agentLoop(model(), [], initSession("s", "u"));
    expect(session.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "refusal", stopDetails: details });
    expect(JSON.parse(JSON.stringify(session))).toStrictEqual(session);
  });
});
