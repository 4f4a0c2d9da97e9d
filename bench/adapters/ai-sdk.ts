// Vercel AI SDK (`ai` v7): generateText with a LanguageModelV4 object written inline (not the
// MockLanguageModelV4 of `ai/test`, which records every call's options and so keeps every prompt).
import { generateText, stepCountIs, tool, type LanguageModel } from "ai";
import {
  ADD_INPUT_JSON,
  ADD_TOOL,
  ADD_ZOD,
  FINAL_TEXT,
  SYSTEM_PROMPT,
  USER_PROMPT,
  callId,
  type Adapter,
  type Workload,
} from "../common.ts";

// The v4 model spec, taken from `ai`'s own types (its @ai-sdk/provider is nested, not top-level).
type LanguageModelV4 = Extract<LanguageModel, { specificationVersion: "v4" }>;
type LanguageModelV4CallOptions = Parameters<LanguageModelV4["doGenerate"]>[0];
type LanguageModelV4GenerateResult = Awaited<ReturnType<LanguageModelV4["doGenerate"]>>;

const usage: LanguageModelV4GenerateResult["usage"] = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

function scriptedModel(w: Workload): LanguageModelV4 {
  return {
    specificationVersion: "v4",
    provider: "bench",
    modelId: "scripted",
    supportedUrls: {},
    async doGenerate(options: LanguageModelV4CallOptions): Promise<LanguageModelV4GenerateResult> {
      const n = w.nextCall();
      const prompt = options.prompt;
      const last = prompt[prompt.length - 1];
      const lastPart = last?.role === "tool" ? last.content[last.content.length - 1] : undefined;
      w.checkLastResult(n, lastPart?.type === "tool-result" ? lastPart.toolCallId : undefined);
      if (w.wantsTools(n)) {
        const content: LanguageModelV4GenerateResult["content"] = [];
        for (let k = 0; k < w.callsPerTurn; k++) {
          content.push({ type: "tool-call", toolCallId: callId(n, k), toolName: "add", input: ADD_INPUT_JSON });
        }
        return { content, finishReason: { unified: "tool-calls", raw: "tool_calls" }, usage, warnings: [] };
      }
      w.checkHistory(n, prompt.length);
      return {
        content: [{ type: "text", text: FINAL_TEXT }],
        finishReason: { unified: "stop", raw: "stop" },
        usage,
        warnings: [],
      };
    },
    doStream() {
      throw new Error("bench: doStream is not used");
    },
  };
}

export const aiSdk: Adapter = {
  name: "ai (Vercel AI SDK)",
  packageName: "ai",
  validation: "zod (same schema; ai passes a bare jsonSchema() through unchecked)",
  modelHook: "LanguageModelV4 object (doGenerate) passed as `model` to generateText",
  async run(w) {
    const result = await generateText({
      model: scriptedModel(w),
      system: SYSTEM_PROMPT,
      prompt: USER_PROMPT,
      tools: {
        add: tool({ description: ADD_TOOL.description, inputSchema: ADD_ZOD, execute: (input) => w.tool(input) }),
      },
      stopWhen: stepCountIs(w.turns + 1),
      maxRetries: 0,
    });
    return { text: result.text, keep: result };
  },
};
