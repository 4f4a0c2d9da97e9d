import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentLoop, initSession, type Message, type ToolSchema } from "simple-agent-loop";
import { toAnthropicRequest } from "simple-agent-loop/anthropic";
import { toBedrockRequest } from "simple-agent-loop/bedrock";
import { openaiChat, toOpenAIResponsesRequest } from "simple-agent-loop/openai";
import { expectEveryCallAnsweredOnce, withoutTs } from "../helpers.ts";
import { sseHeaders, startReplayServer, type ReplayServer } from "./replay-server.ts";
import { recordedFixtures } from "./fixtures.ts";

const { text: fixture } = recordedFixtures("openai-chat");
// A chunks file (one payload per line) as the raw SSE body it was recorded from.
const sseBody = (name: string): string =>
  fixture(name)
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => `data: ${line}\n\n`)
    .join("") + "data: [DONE]\n\n";

const weather: ToolSchema = {
  name: "weather",
  description: "The weather at a place.",
  input_schema: { type: "object", properties: { location: { type: "string" } } },
};
type Call = Extract<Message, { type: "tool_call" }>;
const callsOf = (messages: readonly Message[]): Call[] =>
  messages.filter((message): message is Call => "type" in message && message.type === "tool_call");

describe("tool-call ids stay unique in the session when a server reuses them", () => {
  let server: ReplayServer;
  beforeAll(async () => {
    server = await startReplayServer();
  });
  afterAll(async () => {
    await server.close();
  });

  for (const stream of [true, false]) {
    it(`a reused id gets a fresh session id; the server gets its own ids back, other providers unique ones (${stream ? "streamed" : "not streamed"})`, async () => {
      // The same recorded tool call twice: the server answers two turns with the same call id.
      const toolTurn = stream
        ? { headers: sseHeaders, body: sseBody("vercel-ai__mistral-tool-call.chunks.txt") }
        : { body: fixture("vercel-ai__xai-tool-call.json") };
      const wireId = stream ? "gSIMJiOkT" : "call_93562515";
      const answer = stream
        ? { headers: sseHeaders, body: sseBody("vercel-ai__mistral-reasoning.chunks.txt") }
        : { body: fixture("vercel-ai__mistral-reasoning.json") };
      server.enqueue(toolTurn, toolTurn, answer);
      const before = server.requests.length;
      const seen: string[] = [];
      const session = await agentLoop(
        openaiChat({ model: "mistral-small-latest", baseURL: server.origin, apiKey: "sk-test-key-123456", stream }),
        [weather],
        initSession("s", "weather twice"),
        {
          toolHandlers: { weather: (_input, context) => (seen.push(context.id), `sunny ${seen.length}`) },
        },
      );
      expectEveryCallAnsweredOnce(session);
      const calls = callsOf(session.messages);
      expect(calls.map((call) => call.id)).toStrictEqual([wireId, `${wireId}_2`]);
      expect(calls[1]).toMatchObject({ wireId, provider: "openai-chat" });
      expect(calls[0]).not.toHaveProperty("wireId");
      expect(seen).toStrictEqual([wireId, `${wireId}_2`]);
      expect(JSON.parse(JSON.stringify(session))).toStrictEqual(session);

      // The server's own ids go back to it, each followed by its own result.
      const sent = server.requests[before + 2]!.body as {
        messages: { role: string; tool_calls?: { id: string }[]; tool_call_id?: string; content?: unknown }[];
      };
      const wire = sent.messages.filter((message) => message.role !== "system" && message.role !== "user");
      expect(wire.map((message) => message.tool_calls?.[0]?.id ?? message.tool_call_id)).toStrictEqual([
        wireId,
        wireId,
        wireId,
        wireId,
      ]);
      expect(wire.filter((message) => message.role === "tool").map((message) => message.content)).toStrictEqual([
        "sunny 1",
        "sunny 2",
      ]);

      // Providers that pair calls and results by id get the session's unique ids.
      const anthropic = toAnthropicRequest(session, [weather], { model: "m" }).messages.flatMap(
        (message) => message.content,
      );
      expect(anthropic.filter((block) => block.type === "tool_use").map((block) => block.id)).toStrictEqual([
        wireId,
        `${wireId}_2`,
      ]);
      expect(anthropic.filter((block) => block.type === "tool_result").map((block) => block.tool_use_id)).toStrictEqual(
        [wireId, `${wireId}_2`],
      );
      const responses = toOpenAIResponsesRequest(session, [weather], { model: "m" }).input.flatMap((item) =>
        "call_id" in item ? [item.call_id] : [],
      );
      expect(responses).toStrictEqual([wireId, wireId, `${wireId}_2`, `${wireId}_2`]);
      const bedrock = toBedrockRequest(session, [weather]).messages.flatMap((message) => message.content);
      expect(
        bedrock.flatMap((block) => ("toolUse" in block ? [(block.toolUse as { toolUseId: string }).toolUseId] : [])),
      ).toStrictEqual([wireId, `${wireId}_2`]);
      expect(withoutTs(session).at(-1)).toMatchObject({ role: "assistant", content: "2 + 2 = 4" });
    });
  }
});
