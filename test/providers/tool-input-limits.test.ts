import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  agentLoop,
  initSession,
  type InvokeModel,
  type Message,
  type Session,
  type ToolSchema,
} from "simple-agent-loop";
import { anthropic, toAnthropicRequest } from "simple-agent-loop/anthropic";
import { bedrock, toBedrockRequest } from "simple-agent-loop/bedrock";
import { gemini, toGeminiRequest } from "simple-agent-loop/google";
import { openaiChat, openaiResponses, toOpenAIChatRequest, toOpenAIResponsesRequest } from "simple-agent-loop/openai";
import { eventFrames } from "./event-stream-frames.ts";
import { recordedFixtures, type FixtureFolder } from "./fixtures.ts";
import { sseHeaders, startReplayServer, type ReplayResponse, type ReplayServer } from "./replay-server.ts";

const fixture = (folder: FixtureFolder, name: string): string => recordedFixtures(folder).text(name);
const lines = (folder: FixtureFolder, name: string): Record<string, unknown>[] => recordedFixtures(folder).chunks(name);

// A tool input 20,000 levels deep: JSON.parse reads it, JSON.stringify overflows the stack on it.
const depth = 20_000;
const deepArguments = `{"location":${"[".repeat(depth)}${"]".repeat(depth)}}`;
// Where a recording's arguments object goes, as a placeholder the JSON text replaces (the test
// itself cannot stringify the deep object either).
const placeholder = "__DEEP_ARGUMENTS__";
const withDeepObject = (payload: unknown): string => JSON.stringify(payload).replace(`"${placeholder}"`, deepArguments);
const sseText = (payloads: readonly string[], done = false): string =>
  payloads.map((payload) => `data: ${payload}\n\n`).join("") + (done ? "data: [DONE]\n\n" : "");

type Case = {
  name: string;
  model: (origin: string) => InvokeModel;
  response: () => ReplayResponse;
  request: (session: Session, tools: ToolSchema[]) => unknown;
};

const key = "sk-test-key-123456";
const cases: Case[] = [
  {
    name: "anthropic",
    model: (origin) => anthropic({ model: "claude-sonnet-4", baseURL: origin, apiKey: key }),
    response: () => {
      // The recorded stream, its tool_use input sent as one fragment of the deep JSON.
      const events = fixture("anthropic", "anthropic-sdk-python__tool_use_response.txt")
        .split("\n")
        .filter((line) => line.startsWith("data: "))
        .map(
          (line) =>
            JSON.parse(line.slice(6)) as {
              type: string;
              index?: number;
              delta?: { type?: string; partial_json?: string };
            },
        );
      const first = events.findIndex((event) => event.delta?.type === "input_json_delta");
      const kept = events.filter((event, index) => event.delta?.type !== "input_json_delta" || index === first);
      kept[first] = { ...kept[first]!, delta: { type: "input_json_delta", partial_json: deepArguments } };
      return { headers: sseHeaders, body: sseText(kept.map((event) => JSON.stringify(event))) };
    },
    request: (session, tools) => toAnthropicRequest(session, tools, { model: "m" }),
  },
  {
    name: "openai-chat",
    model: (origin) => openaiChat({ model: "grok-3-mini", baseURL: origin, apiKey: key }),
    response: () => {
      const chunks = lines("openai-chat", "vercel-ai__xai-tool-call.chunks.txt").map((chunk) => {
        const delta = (chunk.choices as { delta: { tool_calls?: { function: { arguments: string } }[] } }[])[0]?.delta;
        if (delta?.tool_calls !== undefined) delta.tool_calls[0]!.function.arguments = deepArguments;
        return JSON.stringify(chunk);
      });
      return { headers: sseHeaders, body: sseText(chunks, true) };
    },
    request: (session, tools) => toOpenAIChatRequest(session, tools, { model: "m" }),
  },
  {
    name: "openai-chat (not streamed)",
    model: (origin) => openaiChat({ model: "grok-3-mini", baseURL: origin, apiKey: key, stream: false }),
    response: () => {
      const body = JSON.parse(fixture("openai-chat", "vercel-ai__xai-tool-call.json")) as {
        choices: { message: { tool_calls: { function: { arguments: string } }[] } }[];
      };
      body.choices[0]!.message.tool_calls[0]!.function.arguments = deepArguments;
      return { body: JSON.stringify(body) };
    },
    request: (session, tools) => toOpenAIChatRequest(session, tools, { model: "m" }),
  },
  {
    name: "openai-responses",
    model: (origin) => openaiResponses({ model: "gpt-5.1-codex-max", baseURL: origin, apiKey: key }),
    response: () => {
      // The second recorded response: one function_call, its arguments deep.
      const all = lines("openai-responses", "vercel-ai__openai-reasoning-encrypted-content.1.chunks.txt");
      const starts = all.flatMap((event, index) => (event.type === "response.created" ? [index] : []));
      const events = all
        .slice(starts[1], starts[2])
        .filter(
          (event, index, list) =>
            event.type !== "response.function_call_arguments.delta" ||
            list.findIndex((other) => other.type === event.type) === index,
        );
      const payloads = events.map((event) => {
        if (event.type === "response.function_call_arguments.delta")
          return JSON.stringify({ ...event, delta: deepArguments });
        if (event.type === "response.function_call_arguments.done")
          return JSON.stringify({ ...event, arguments: deepArguments });
        if (event.type === "response.output_item.done")
          return JSON.stringify({ ...event, item: { ...(event.item as object), arguments: deepArguments } });
        return JSON.stringify(event);
      });
      return { headers: sseHeaders, body: sseText(payloads) };
    },
    request: (session, tools) => toOpenAIResponsesRequest(session, tools, { model: "m" }),
  },
  {
    name: "google",
    model: (origin) => gemini({ model: "gemini-3-pro-preview", baseURL: origin, apiKey: key }),
    response: () => {
      // The recorded chunks, the functionCall's args (already parsed JSON in Gemini's format) deep.
      const [call, end] = lines("google", "vercel-ai__google-tool-call-gemini3.chunks.txt") as [
        { candidates: { content: { parts: { functionCall: { args: unknown } }[] } }[] },
        unknown,
      ];
      call.candidates[0]!.content.parts[0]!.functionCall.args = placeholder;
      return { headers: sseHeaders, body: sseText([withDeepObject(call), JSON.stringify(end)]) };
    },
    request: (session, tools) => toGeminiRequest(session, tools, { model: "gemini-3-pro-preview" }),
  },
  {
    name: "bedrock",
    model: (origin) =>
      bedrock({ model: "moonshot.kimi-k2-thinking", region: "us-east-1", baseURL: origin, apiKey: key }),
    response: () => {
      const events = lines("bedrock", "vercel-ai__issue-11409-kimi-k2-thinking-glob-search.chunks.txt").map((event) => {
        const delta = (event.contentBlockDelta as { delta?: { toolUse?: { input: string } } } | undefined)?.delta;
        if (delta?.toolUse !== undefined) delta.toolUse.input = deepArguments;
        return event;
      });
      return { headers: { "content-type": "application/vnd.amazon.eventstream" }, chunks: eventFrames(events) };
    },
    request: (session, tools) => toBedrockRequest(session, tools),
  },
];

const toolNames = ["get_weather", "weather", "calculator", "glob_search"];
const tools: ToolSchema[] = toolNames.map((name) => ({
  name,
  description: "A tool.",
  input_schema: { type: "object" },
}));

describe("tool inputs nested too deep: an invalid-input error result, the session stays usable", () => {
  let server: ReplayServer;
  beforeAll(async () => {
    server = await startReplayServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it.each(cases)("$name", async ({ model, response, request }) => {
    server.enqueue(response());
    const ran: unknown[] = [];
    const handlers = Object.fromEntries(toolNames.map((name) => [name, (input: unknown) => (ran.push(input), "ran")]));
    const session = await agentLoop(model(server.origin), tools, initSession("s", "u"), {
      maxIterations: 1,
      toolHandlers: handlers,
    }).catch((error: { session?: Session }) => {
      if (error.session === undefined) throw error;
      return error.session;
    });
    expect(ran).toStrictEqual([]);
    const call = session.messages.find((message) => "type" in message && message.type === "tool_call") as Extract<
      Message,
      { type: "tool_call" }
    >;
    expect(call.input).toStrictEqual({});
    expect(call.inputError).toMatch(/nested more than 100 levels deep/);
    const result = session.messages.find((message) => "type" in message && message.type === "tool_result");
    expect(result).toMatchObject({
      id: call.id,
      isError: true,
      output: expect.stringMatching(
        /^Error: invalid input for tool ".+": the arguments are nested more than 100 levels deep/,
      ),
    });
    // The session is plain JSON again, and the next request can be built and serialized.
    expect(JSON.parse(JSON.stringify(session))).toStrictEqual(session);
    expect(() => JSON.stringify(request(session, tools))).not.toThrow();
  });

  it("arguments over the size limit are refused the same way", async () => {
    const big = `{"location":"${"x".repeat(17 * 1024 * 1024)}"}`;
    const body = JSON.parse(fixture("openai-chat", "vercel-ai__xai-tool-call.json")) as {
      choices: { message: { tool_calls: { function: { arguments: string } }[] } }[];
    };
    body.choices[0]!.message.tool_calls[0]!.function.arguments = big;
    server.enqueue({ body: JSON.stringify(body) });
    const ran: unknown[] = [];
    const session = await agentLoop(
      openaiChat({ model: "m", baseURL: server.origin, apiKey: key, stream: false }),
      tools,
      initSession("s", "u"),
      {
        maxIterations: 1,
        toolHandlers: { weather: (input: unknown) => (ran.push(input), "ran") },
      },
    ).catch((error: { session: Session }) => error.session);
    expect(ran).toStrictEqual([]);
    expect(session.messages.find((message) => "type" in message && message.type === "tool_result")).toMatchObject({
      isError: true,
      output: expect.stringContaining("characters long, more than the 16777216 allowed"),
    });
  }, 60_000);
});
