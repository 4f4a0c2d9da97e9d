import { describe, expect, it } from "vitest";
import { agentLoop, initSession, type InvokeModel, type ModelMessage, type Usage } from "simple-agent-loop";
import { fromAnthropicResponse } from "simple-agent-loop/anthropic";
import { fromBedrockResponse } from "simple-agent-loop/bedrock";
import { fromGeminiResponse } from "simple-agent-loop/google";
import { fromOpenAIChatResponse, fromOpenAIResponsesResponse } from "simple-agent-loop/openai";

// What a server may put where a count belongs: text ("012" would add as text), negative, fractional,
// out of range (1e400 parses as Infinity), null, an object.
const bad: readonly unknown[] = ["012", -5, 2.5, Number.POSITIVE_INFINITY, null, { n: 1 }, true, 2 ** 60];

function expectCounts(usage: Usage | undefined): void {
  if (usage === undefined) return;
  for (const [name, value] of Object.entries(usage))
    expect(Number.isSafeInteger(value) && value >= 0, `${name}: ${String(value)}`).toBe(true);
}

const lastUsage = (messages: readonly ModelMessage[]): Usage | undefined => messages.at(-1)?.usage;

// Each adapter's whole-response reader, given a usage whose every count is `value`.
const readers: Record<string, (value: unknown) => ModelMessage[]> = {
  anthropic: (value) =>
    fromAnthropicResponse({
      content: [{ type: "text", text: "hi" }],
      stop_reason: "end_turn",
      usage: {
        input_tokens: value,
        output_tokens: value,
        cache_read_input_tokens: value,
        cache_creation_input_tokens: value,
        output_tokens_details: { thinking_tokens: value },
      },
    } as never),
  bedrock: (value) =>
    fromBedrockResponse({
      output: { message: { role: "assistant", content: [{ text: "hi" }] } },
      stopReason: "end_turn",
      usage: { inputTokens: value, outputTokens: value, cacheReadInputTokens: value, cacheWriteInputTokens: value },
    } as never),
  google: (value) =>
    fromGeminiResponse({
      candidates: [{ content: { role: "model", parts: [{ text: "hi" }] }, finishReason: "STOP" }],
      usageMetadata: {
        promptTokenCount: value,
        candidatesTokenCount: value,
        cachedContentTokenCount: value,
        thoughtsTokenCount: value,
        toolUsePromptTokenCount: value,
      },
    } as never),
  "openai-chat": (value) =>
    fromOpenAIChatResponse({
      choices: [{ message: { role: "assistant", content: "hi" }, finish_reason: "stop" }],
      usage: {
        prompt_tokens: value,
        completion_tokens: value,
        total_tokens: value,
        prompt_tokens_details: { cached_tokens: value },
        completion_tokens_details: { reasoning_tokens: value },
      },
    } as never),
  "openai-responses": (value) =>
    fromOpenAIResponsesResponse({
      status: "completed",
      output: [{ type: "message", content: [{ type: "output_text", text: "hi" }] }],
      usage: {
        input_tokens: value,
        output_tokens: value,
        total_tokens: value,
        input_tokens_details: { cached_tokens: value, cache_write_tokens: value },
        output_tokens_details: { reasoning_tokens: value },
      },
    } as never),
};

describe("usage from a server is non-negative finite integers or absent, in every adapter", () => {
  for (const [name, read] of Object.entries(readers)) {
    it(`${name}: counts that are not whole non-negative numbers are not taken`, () => {
      for (const value of bad) {
        const usage = lastUsage(read(value));
        expectCounts(usage);
        // Nothing of the bad value survives: no count is stored but the ones the adapter derives as 0.
        for (const count of Object.values(usage ?? {})) expect(count).toBe(0);
      }
      expect(lastUsage(read(7))).toMatchObject({ outputTokens: expect.any(Number) as number });
      expectCounts(lastUsage(read(7)));
    });
  }

  it("a model's own usage (any invokeModel) is checked the same way by the loop", async () => {
    for (const value of bad) {
      const invoke: InvokeModel = () =>
        [
          { role: "assistant", content: "hi", usage: { inputTokens: value, outputTokens: 3, reasoningTokens: value } },
        ] as never;
      const session = await agentLoop(invoke, [], initSession("s", "u"));
      const usage = (session.messages.at(-1) as { usage?: Usage }).usage;
      expect(usage?.reasoningTokens).toBeUndefined();
      expectCounts(usage);
    }
  });
});
