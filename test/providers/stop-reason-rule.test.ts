import { describe, expect, it } from "vitest";
import type { ModelMessage } from "simple-agent-loop";
import { fromAnthropicResponse } from "simple-agent-loop/anthropic";
import { fromBedrockResponse } from "simple-agent-loop/bedrock";
import { fromGeminiResponse } from "simple-agent-loop/google";
import { fromOpenAIChatResponse, fromOpenAIResponsesResponse } from "simple-agent-loop/openai";

type Ended = { stopReason?: string; rawStopReason?: string };

// Each adapter's last message for a text answer ended with the provider's `raw` reason.
const adapters: Record<string, (raw: string, withCall?: boolean) => ModelMessage> = {
  anthropic: (raw, withCall) =>
    fromAnthropicResponse({
      content: [
        { type: "text", text: "x" },
        ...(withCall === true ? [{ type: "tool_use", id: "t", name: "f", input: {} }] : []),
      ],
      stop_reason: raw,
    }).at(-1)!,
  bedrock: (raw, withCall) =>
    fromBedrockResponse({
      output: {
        message: {
          content: [
            { text: "x" },
            ...(withCall === true ? [{ toolUse: { toolUseId: "t", name: "f", input: {} } }] : []),
          ],
        },
      },
      stopReason: raw,
    }).at(-1)!,
  google: (raw, withCall) =>
    fromGeminiResponse({
      candidates: [
        {
          content: {
            parts: [{ text: "x" }, ...(withCall === true ? [{ functionCall: { name: "f", args: {} } }] : [])],
          },
          finishReason: raw,
        },
      ],
    }).at(-1)!,
  "openai-chat": (raw, withCall) =>
    fromOpenAIChatResponse({
      choices: [
        {
          message: {
            content: "x",
            ...(withCall === true ? { tool_calls: [{ id: "t", function: { name: "f", arguments: "{}" } }] } : {}),
          },
          finish_reason: raw,
        },
      ],
    }).at(-1)!,
  "openai-responses": (raw) =>
    fromOpenAIResponsesResponse({
      status: "incomplete",
      incomplete_details: { reason: raw },
      output: [{ type: "message", content: [{ type: "output_text", text: "x" }] }],
    }).at(-1)!,
};

const ended = (message: ModelMessage): Ended => {
  const { stopReason, rawStopReason } = message as Ended;
  return {
    ...(stopReason === undefined ? {} : { stopReason }),
    ...(rawStopReason === undefined ? {} : { rawStopReason }),
  };
};

describe("rawStopReason: one rule for every adapter", () => {
  // The provider's plain name for a normalized reason: `stopReason` says it all.
  const plain: [string, string, string][] = [
    ["anthropic", "end_turn", "end_turn"],
    ["anthropic", "max_tokens", "max_tokens"],
    ["anthropic", "refusal", "refusal"],
    ["bedrock", "end_turn", "end_turn"],
    ["bedrock", "max_tokens", "max_tokens"],
    ["google", "STOP", "end_turn"],
    ["google", "MAX_TOKENS", "max_tokens"],
    ["openai-chat", "stop", "end_turn"],
    ["openai-chat", "length", "max_tokens"],
    ["openai-chat", "content_filter", "content_filter"],
    ["openai-responses", "max_output_tokens", "max_tokens"],
    ["openai-responses", "content_filter", "content_filter"],
  ];
  it.each(plain)("%s: plain %s is %s, without rawStopReason", (adapter, raw, stopReason) => {
    expect(ended(adapters[adapter]!(raw))).toStrictEqual({ stopReason });
  });

  // A value that shares its normalized reason with others, or that the adapter does not know: kept.
  const kept: [string, string, string][] = [
    ["anthropic", "model_context_window_exceeded", "max_tokens"],
    ["anthropic", "compaction", "other"],
    ["bedrock", "guardrail_intervened", "content_filter"],
    ["bedrock", "content_filtered", "content_filter"],
    ["bedrock", "malformed_model_output", "other"],
    ["google", "SAFETY", "content_filter"],
    ["google", "MALFORMED_FUNCTION_CALL", "other"],
    ["openai-chat", "function_call", "tool_use"],
    ["openai-chat", "eos", "end_turn"],
    ["openai-chat", "model_length", "max_tokens"],
    ["openai-chat", "insufficient_system_resource", "other"],
    ["openai-responses", "some_new_reason", "other"],
  ];
  it.each(kept)("%s: %s is %s, with rawStopReason", (adapter, raw, stopReason) => {
    expect(ended(adapters[adapter]!(raw))).toStrictEqual({ stopReason, rawStopReason: raw });
  });

  // Corrected by the adapter: a turn with tool calls that the server said ended normally.
  const corrected: [string, string][] = [
    ["bedrock", "end_turn"],
    ["google", "STOP"],
    ["openai-chat", "stop"],
  ];
  it.each(corrected)("%s: %s with tool calls is tool_use, with rawStopReason", (adapter, raw) => {
    expect(ended(adapters[adapter]!(raw, true))).toStrictEqual({ stopReason: "tool_use", rawStopReason: raw });
  });
});
