import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentLoop, initSession } from "simple-agent-loop";
import { fromGeminiResponse, gemini, type GeminiResponse } from "simple-agent-loop/google";
import { withoutTs, withoutAnswerer } from "../helpers.ts";
import { sse, sseHeaders, startReplayServer, type ReplayServer } from "./replay-server.ts";
import { recordedFixtures } from "./fixtures.ts";

const { text: fixture } = recordedFixtures("google");
const codeExecution = (): GeminiResponse =>
  JSON.parse(fixture("vercel-ai__google-code-execution-multiple-results.json")) as GeminiResponse;

describe("google: parts and stops beyond text and calls", () => {
  let server: ReplayServer;
  beforeAll(async () => {
    server = await startReplayServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it("keeps executed code and its results as text, with the signature they came with (not streamed)", () => {
    const messages = fromGeminiResponse(codeExecution());
    expect(messages).toHaveLength(2);
    const [code, answer] = messages as unknown as [{ content: string; signature: string }, { content: string }];
    expect(code).toMatchObject({
      role: "assistant",
      signature: "EjQKMgFyyNp8VRG2uDen0QENDjUJEy6ZQlvEGUhI8VcgTgNaspEC3M5Cao6lhYRGpmCcClR1",
      provider: "google",
    });
    expect(code.content).toContain("```python\nprint('ok')\nprint(1/0)\n```");
    expect(code.content).toContain("Output:\n```\nok\n");
    expect(code.content).toContain("Output (OUTCOME_FAILED):\n```\ndivision by zero\nTraceback");
    expect(answer).toMatchObject({
      role: "assistant",
      content: expect.stringMatching(/^The code execution resulted/),
      stopReason: "end_turn",
      usage: { inputTokens: 312, outputTokens: 35 },
    });
  });

  it("streams executed code as text deltas, one part per chunk, the same turn as not streamed", async () => {
    const body = codeExecution();
    const candidate = body.candidates![0]!;
    const parts = candidate.content!.parts!;
    const chunks = parts.map((part, index) => ({
      ...body,
      candidates: [
        { content: { parts: [part], role: "model" }, ...(index === parts.length - 1 ? { finishReason: "STOP" } : {}) },
      ],
    }));
    server.enqueue({ headers: sseHeaders, chunks: sse(chunks) });
    const deltas: string[] = [];
    const session = await agentLoop(
      gemini({ model: "gemini-3-flash-preview", baseURL: server.origin, apiKey: "test-key-123456" }),
      [],
      initSession("s", "run it"),
      {
        onEvent: (event) => void (event.type === "text-delta" && deltas.push(event.delta)),
      },
    );
    const streamed = withoutTs(session).slice(2);
    expect(streamed).toStrictEqual(fromGeminiResponse(codeExecution()));
    expect(streamed[0]).toMatchObject({
      role: "assistant",
      content: expect.stringContaining("```python\nprint('ok')"),
    });
    expect(deltas.join("")).toBe(
      streamed
        .map((message) => ("content" in message && typeof message.content === "string" ? message.content : ""))
        .join(""),
    );
  });

  it("a blocked prompt is content_filter with the block reason", () => {
    const body = JSON.parse(fixture("vercel-ai__issue-19758-prompt-block.json")) as GeminiResponse;
    expect(withoutAnswerer(fromGeminiResponse(body))).toStrictEqual([
      {
        role: "assistant",
        content: "",
        stopReason: "content_filter",
        rawStopReason: "PROHIBITED_CONTENT",
        usage: { inputTokens: 9, outputTokens: 0 },
      },
    ]);
  });

  it("keeps finishMessage as stopDetails when the turn did not end normally, not for a plain stop", () => {
    const recorded = JSON.parse(fixture("vercel-ai__google-tool-call-gemini3.json")) as GeminiResponse;
    expect(fromGeminiResponse(recorded).at(-1)).not.toHaveProperty("stopDetails");
    const malformed: GeminiResponse = {
      ...recorded,
      candidates: [
        { finishReason: "MALFORMED_FUNCTION_CALL", finishMessage: "Malformed function call: get_weather(location=" },
      ],
    };
    expect(fromGeminiResponse(malformed).at(-1)).toMatchObject({
      stopReason: "other",
      rawStopReason: "MALFORMED_FUNCTION_CALL",
      stopDetails: { explanation: "Malformed function call: get_weather(location=" },
    });
  });
});
