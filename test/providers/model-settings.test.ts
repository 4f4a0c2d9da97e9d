import { describe, expect, it } from "vitest";
import { initSession, isAgentError, type ModelSettings, type Session, type ToolSchema } from "simple-agent-loop";
import { toAnthropicRequest } from "simple-agent-loop/anthropic";
import { toBedrockRequest } from "simple-agent-loop/bedrock";
import { toGeminiRequest } from "simple-agent-loop/google";
import { toOpenAIChatRequest, toOpenAIResponsesRequest } from "simple-agent-loop/openai";

const lookup: ToolSchema = {
  name: "lookup",
  description: "Look a word up.",
  input_schema: { type: "object", properties: { word: { type: "string" } } },
};

const every: ModelSettings = {
  model: "other-model",
  maxTokens: 4000,
  temperature: 0.2,
  topP: 0.9,
  stopSequences: ["END"],
  toolChoice: { name: "lookup" },
  providerOptions: { metadata: { user_id: "u1" }, extra: [1, 2] },
};

function withCall(): Session {
  const session = initSession("Be brief.", "Look up cat.");
  session.messages.push(
    { type: "tool_call", id: "c1", name: "lookup", input: { word: "cat" } },
    { type: "tool_result", id: "c1", output: "a small feline" },
  );
  return session;
}

function refusal(build: () => unknown): string {
  try {
    build();
  } catch (error) {
    expect(isAgentError(error)).toBe(true);
    return (error as Error).message;
  }
  throw new Error("expected a refusal");
}

describe("ModelSettings: every adapter maps every field to its provider's own", () => {
  const session = initSession("Be brief.", "Hi");

  it("anthropic: model, max_tokens, sampling, stop_sequences, tool_choice tool, thinking budget, provider options last", () => {
    const request = toAnthropicRequest(session, [lookup], { model: "claude-x", settings: every });
    expect(request).toMatchObject({
      model: "other-model",
      max_tokens: 4000,
      temperature: 0.2,
      top_p: 0.9,
      stop_sequences: ["END"],
      tool_choice: { type: "tool", name: "lookup" },
      metadata: { user_id: "u1" },
      extra: [1, 2],
    });
    const required = toAnthropicRequest(session, [lookup], { model: "m", settings: { toolChoice: "required" } });
    expect(required.tool_choice).toStrictEqual({ type: "any" });
    const thinking = toAnthropicRequest(session, [lookup], {
      model: "m",
      settings: { reasoning: { budgetTokens: 10_000 } },
    });
    // No maxTokens given: raised above the budget.
    expect(thinking.thinking).toStrictEqual({ type: "enabled", budget_tokens: 10_000 });
    expect(thinking.max_tokens).toBeGreaterThan(10_000);
    expect(
      refusal(() =>
        toAnthropicRequest(session, [], {
          model: "m",
          settings: { maxTokens: 2000, reasoning: { budgetTokens: 4000 } },
        }),
      ),
    ).toMatch(/budget \(4000\) must be below maxTokens \(2000\)/);
    expect(
      refusal(() => toAnthropicRequest(session, [], { model: "m", settings: { reasoning: { effort: "low" } } })),
    ).toMatch(/reasoning\.effort/);
    expect(
      refusal(() => toAnthropicRequest(session, [lookup], { model: "m", settings: { toolChoice: { name: "nope" } } })),
    ).toMatch(/no tool named "nope"/);
  });

  it("openai chat: model, max tokens, sampling, stop, tool_choice, reasoning_effort, cache key and retention", () => {
    const request = toOpenAIChatRequest(session, [lookup], {
      model: "gpt-x",
      settings: { ...every, reasoning: { effort: "low" }, cache: { key: "k1", retention: "long" } },
    });
    expect(request).toMatchObject({
      model: "other-model",
      max_completion_tokens: 4000,
      temperature: 0.2,
      top_p: 0.9,
      stop: ["END"],
      tool_choice: { type: "function", function: { name: "lookup" } },
      reasoning_effort: "low",
      prompt_cache_key: "k1",
      prompt_cache_retention: "24h",
      metadata: { user_id: "u1" },
    });
    expect(
      refusal(() => toOpenAIChatRequest(session, [], { model: "m", settings: { reasoning: { budgetTokens: 100 } } })),
    ).toMatch(/budgetTokens/);
  });

  it("openai responses: the same, with reasoning.effort; stop sequences are refused (the API has none)", () => {
    const { stopSequences: _stop, ...rest } = every;
    const request = toOpenAIResponsesRequest(session, [lookup], {
      model: "gpt-x",
      settings: { ...rest, toolChoice: "required", reasoning: { effort: "high" }, cache: { key: "k" } },
    });
    expect(request).toMatchObject({
      model: "other-model",
      max_output_tokens: 4000,
      temperature: 0.2,
      top_p: 0.9,
      tool_choice: "required",
      reasoning: { effort: "high" },
      prompt_cache_key: "k",
    });
    const named = toOpenAIResponsesRequest(session, [lookup], {
      model: "m",
      settings: { toolChoice: { name: "lookup" } },
    });
    expect(named.tool_choice).toStrictEqual({ type: "function", name: "lookup" });
    expect(refusal(() => toOpenAIResponsesRequest(session, [], { model: "m", settings: every }))).toMatch(
      /stopSequences/,
    );
  });

  it("gemini: generationConfig, toolConfig.functionCallingConfig, thinkingConfig", () => {
    const request = toGeminiRequest(session, [lookup], {
      model: "gemini-x",
      settings: { ...every, reasoning: { effort: "low", budgetTokens: 512 } },
    });
    expect(request.generationConfig).toMatchObject({
      maxOutputTokens: 4000,
      temperature: 0.2,
      topP: 0.9,
      stopSequences: ["END"],
      thinkingConfig: { thinkingBudget: 512, thinkingLevel: "low" },
    });
    expect(request.toolConfig).toStrictEqual({
      functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["lookup"] },
    });
    expect(request).toMatchObject({ metadata: { user_id: "u1" } });
    const none = toGeminiRequest(session, [lookup], { model: "m", settings: { toolChoice: "none" } });
    expect(none.toolConfig).toStrictEqual({ functionCallingConfig: { mode: "NONE" } });
  });

  it("bedrock: inferenceConfig, toolChoice, Claude's thinking in additionalModelRequestFields; no 'none' with tool history", () => {
    const { temperature: _temperature, topP: _topP, ...unsampled } = every;
    const request = toBedrockRequest(session, [lookup], {
      model: "anthropic.claude-x",
      settings: { ...unsampled, model: "anthropic.claude-y", toolChoice: "auto", reasoning: { budgetTokens: 2000 } },
    });
    expect(request.inferenceConfig).toStrictEqual({ maxTokens: 4000, stopSequences: ["END"] });
    expect(request.toolConfig?.toolChoice).toStrictEqual({ auto: {} });
    expect(request.additionalModelRequestFields).toStrictEqual({ thinking: { type: "enabled", budget_tokens: 2000 } });
    expect(
      toBedrockRequest(session, [lookup], { model: "anthropic.claude-x", settings: { toolChoice: "required" } })
        .toolConfig?.toolChoice,
    ).toStrictEqual({ any: {} });
    // As on Anthropic's own API: no forced tool call and no sampling changes while Claude thinks.
    for (const sampling of [{ temperature: 0.2 }, { topP: 0.9 }])
      for (const refuse of [
        () =>
          toBedrockRequest(session, [lookup], {
            model: "anthropic.claude-x",
            settings: { ...sampling, reasoning: { budgetTokens: 2000 } },
          }),
        () =>
          toAnthropicRequest(session, [lookup], {
            model: "m",
            settings: { ...sampling, reasoning: { budgetTokens: 2000 } },
          }),
      ])
        expect(refusal(refuse)).toMatch(/while it thinks/);
    expect(
      toAnthropicRequest(session, [], {
        model: "m",
        settings: { temperature: 1, topP: 0.95, reasoning: { budgetTokens: 2000 } },
      }).temperature,
    ).toBe(1);
    for (const toolChoice of ["required", { name: "lookup" }] as const)
      expect(
        refusal(() =>
          toBedrockRequest(session, [lookup], {
            model: "anthropic.claude-x",
            settings: { toolChoice, reasoning: { budgetTokens: 2000 } },
          }),
        ),
      ).toMatch(/toolChoice.*while it thinks/);
    expect(request).toMatchObject({ metadata: { user_id: "u1" } });
    // "none": no tools at all while the history has no tool blocks.
    const none = toBedrockRequest(session, [lookup], { model: "anthropic.claude-x", settings: { toolChoice: "none" } });
    expect(none.toolConfig).toBeUndefined();
    expect(
      refusal(() =>
        toBedrockRequest(withCall(), [lookup], { model: "anthropic.claude-x", settings: { toolChoice: "none" } }),
      ),
    ).toMatch(/no "none" choice/);
    expect(
      refusal(() =>
        toBedrockRequest(session, [], { model: "amazon.nova-pro", settings: { reasoning: { effort: "low" } } }),
      ),
    ).toMatch(/additionalModelRequestFields/);
  });

  it("providerOptions are deep-merged last: nested objects field by field, anything else replaced", () => {
    const request = toAnthropicRequest(session, [], {
      model: "m",
      temperature: 1,
      settings: { providerOptions: { temperature: 0, thinking: { type: "enabled", budget_tokens: 2048 } } },
    });
    expect(request.temperature).toBe(0);
    expect(request.thinking).toStrictEqual({ type: "enabled", budget_tokens: 2048 });
  });
});

describe("prompt caching: breakpoints and keys", () => {
  const session = withCall();

  it("anthropic: tools, system and the last message (and the one that ended the previous request), at most four; off marks none; long is one hour", () => {
    const marked = (request: unknown): number => JSON.stringify(request).split('"cache_control"').length - 1;
    const request = toAnthropicRequest(session, [lookup], { model: "m" });
    expect(marked(request)).toBeLessThanOrEqual(4);
    expect(request.tools?.at(-1)).toHaveProperty("cache_control", { type: "ephemeral" });
    expect(request.system?.at(-1)).toHaveProperty("cache_control", { type: "ephemeral" });
    expect(request.messages.at(-1)!.content.at(-1)).toHaveProperty("cache_control", { type: "ephemeral" });
    expect(
      marked(toAnthropicRequest(session, [lookup], { model: "m", settings: { cache: { breakpoints: "off" } } })),
    ).toBe(0);
    const long = toAnthropicRequest(session, [lookup], { model: "m", settings: { cache: { retention: "long" } } });
    expect(long.system?.at(-1)).toHaveProperty("cache_control", { type: "ephemeral", ttl: "1h" });
  });

  it("bedrock: cache points for Claude by default on tools, system, the last message and the one that ended the previous request (none for other models unless asked), one hour when long", () => {
    const points = (request: unknown): string[] =>
      [...JSON.stringify(request).matchAll(/"cachePoint":(\{[^}]*\})/g)].map((match) => match[1]!);
    const claude = toBedrockRequest(session, [lookup], { model: "us.anthropic.claude-x" });
    expect(points(claude)).toHaveLength(4);
    expect(claude.messages.map((message) => message.content.some((block) => "cachePoint" in block))).toStrictEqual([
      true,
      false,
      true,
    ]);
    expect(points(toBedrockRequest(session, [lookup], { model: "amazon.nova-pro" }))).toHaveLength(0);
    expect(
      points(
        toBedrockRequest(session, [lookup], {
          model: "anthropic.claude-x",
          settings: { cache: { retention: "long" } },
        }),
      ),
    ).toStrictEqual([
      '{"type":"default","ttl":"1h"}',
      '{"type":"default","ttl":"1h"}',
      '{"type":"default","ttl":"1h"}',
      '{"type":"default","ttl":"1h"}',
    ]);
  });
});
