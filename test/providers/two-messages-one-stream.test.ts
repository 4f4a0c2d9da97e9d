import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  agentLoop,
  initSession,
  isProviderError,
  type InvokeModel,
  type Session,
  type ToolSchema,
} from "simple-agent-loop";
import { bedrock } from "simple-agent-loop/bedrock";
import { openaiResponses } from "simple-agent-loop/openai";
import { eventFrames } from "./event-stream-frames.ts";
import { sse, sseHeaders, startReplayServer, type ReplayResponse, type ReplayServer } from "./replay-server.ts";
import { recordedFixtures, type FixtureFolder } from "./fixtures.ts";

const lines = (folder: FixtureFolder, name: string): Record<string, unknown>[] => recordedFixtures(folder).chunks(name);

type Case = {
  name: string;
  model: (origin: string) => InvokeModel;
  broken: () => ReplayResponse;
  whole: () => ReplayResponse;
  tools: ToolSchema[];
};

const responsesEvents = (): Record<string, unknown>[][] => {
  const all = lines("openai-responses", "vercel-ai__openai-reasoning-encrypted-content.1.chunks.txt");
  const starts = all.flatMap((event, index) => (event.type === "response.created" ? [index] : []));
  return starts.map((start, index) => all.slice(start, starts[index + 1]));
};
const bedrockEvents = (): Record<string, unknown>[] =>
  lines("bedrock", "vercel-ai__issue-11409-kimi-k2-thinking-glob-search.chunks.txt");
const schema = (name: string): ToolSchema => ({ name, description: "A tool.", input_schema: { type: "object" } });

// Each case: a recorded response cut while one of its items is open, then another recorded
// response from its start (a proxy that retried upstream and kept the connection).
const cases: Case[] = [
  {
    name: "openai-responses",
    model: (origin) => openaiResponses({ model: "gpt-5.1-codex-max", baseURL: origin, apiKey: "sk-test-key-123456" }),
    broken: () => {
      const [first, second] = responsesEvents();
      const open = first!.findIndex((event) => event.type === "response.function_call_arguments.delta");
      return { headers: sseHeaders, chunks: sse([...first!.slice(0, open + 2), ...second!], { withEventNames: true }) };
    },
    whole: () => ({ headers: sseHeaders, chunks: sse(responsesEvents()[1]!, { withEventNames: true }) }),
    tools: [schema("calculator")],
  },
  {
    name: "bedrock",
    model: (origin) =>
      bedrock({ model: "moonshot.kimi-k2-thinking", region: "us-east-1", baseURL: origin, apiKey: "test-key-123456" }),
    broken: () => {
      const events = bedrockEvents();
      const open = events.findIndex((event) => "contentBlockStart" in event);
      return {
        headers: { "content-type": "application/vnd.amazon.eventstream" },
        chunks: eventFrames([...events.slice(0, open + 1), ...events]),
      };
    },
    whole: () => ({
      headers: { "content-type": "application/vnd.amazon.eventstream" },
      chunks: eventFrames(bedrockEvents()),
    }),
    tools: [schema("glob_search")],
  },
];

describe("two messages (or two starts of one block) in one stream are never merged", () => {
  let server: ReplayServer;
  beforeAll(async () => {
    server = await startReplayServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it.each(cases)("$name: a retryable error, nothing of it kept", async ({ model, broken, tools }) => {
    server.enqueue(broken());
    const session = initSession("s", "u");
    const error = await agentLoop(model(server.origin), tools, session, { retry: { maxRetries: 0 } }).catch(
      (failure: unknown) => failure,
    );
    expect(isProviderError(error) && error.retryable).toBe(true);
    expect(session.messages).toHaveLength(2);
  });

  it("bedrock: a block started twice before its stop is a retryable error", async () => {
    const events = bedrockEvents();
    const start = events.findIndex((event) => "contentBlockStart" in event);
    server.enqueue({
      headers: { "content-type": "application/vnd.amazon.eventstream" },
      chunks: eventFrames([...events.slice(0, start + 2), events[start]!, ...events.slice(start + 2)]),
    });
    const session = initSession("s", "u");
    const error = await agentLoop(cases[1]!.model(server.origin), cases[1]!.tools, session, {
      retry: { maxRetries: 0 },
    }).catch((failure: unknown) => failure);
    expect(isProviderError(error) && error.retryable).toBe(true);
    expect(session.messages).toHaveLength(2);
  });

  it.each(cases)("$name: retried, the turn is the good response alone", async ({ model, broken, whole, tools }) => {
    server.enqueue(broken(), whole());
    const ran: unknown[] = [];
    const handlers = Object.fromEntries(tools.map((tool) => [tool.name, (input: unknown) => (ran.push(input), "ok")]));
    const session: Session = await agentLoop(model(server.origin), tools, initSession("s", "u"), {
      retry: { initialDelayMs: 1 },
      maxIterations: 1,
      toolHandlers: handlers,
    }).catch((failure: { session: Session }) => failure.session);
    expect(ran).toHaveLength(1);
    const calls = session.messages.filter((message) => "type" in message && message.type === "tool_call");
    expect(calls).toHaveLength(1);
  });
});
