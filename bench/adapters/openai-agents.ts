// OpenAI Agents SDK (@openai/agents): Agent + run() with a custom Model object; tracing disabled.
import {
  Agent,
  Usage,
  run,
  setTracingDisabled,
  tool,
  type Model,
  type ModelRequest,
  type ModelResponse,
} from "@openai/agents";
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

setTracingDisabled(true);

function lastResultId(input: ModelRequest["input"]): string | undefined {
  if (typeof input === "string") return undefined;
  const last = input[input.length - 1];
  return last !== undefined && last.type === "function_call_result" ? last.callId : undefined;
}

function scriptedModel(w: Workload): Model {
  return {
    async getResponse(request: ModelRequest): Promise<ModelResponse> {
      const n = w.nextCall();
      w.checkLastResult(n, lastResultId(request.input));
      const usage = new Usage({ requests: 1, inputTokens: 1, outputTokens: 1, totalTokens: 2 });
      if (w.wantsTools(n)) {
        const output: ModelResponse["output"] = [];
        for (let k = 0; k < w.callsPerTurn; k++) {
          output.push({
            type: "function_call",
            callId: callId(n, k),
            name: "add",
            arguments: ADD_INPUT_JSON,
            status: "completed",
          });
        }
        return { usage, output, responseId: `resp_${n}` };
      }
      w.checkHistory(n, typeof request.input === "string" ? 1 : request.input.length);
      return {
        usage,
        output: [
          {
            type: "message",
            role: "assistant",
            status: "completed",
            content: [{ type: "output_text", text: FINAL_TEXT }],
          },
        ],
        responseId: `resp_${n}`,
      };
    },
    getStreamedResponse() {
      throw new Error("bench: streaming is not used");
    },
  };
}

export const openaiAgents: Adapter = {
  name: "@openai/agents",
  packageName: "@openai/agents",
  validation: "zod (same schema; a JSON Schema `parameters` is only JSON.parse'd)",
  modelHook: "custom Model object (getResponse) as Agent `model`; setTracingDisabled(true)",
  async run(w) {
    const agent = new Agent({
      name: "calculator",
      instructions: SYSTEM_PROMPT,
      model: scriptedModel(w),
      tools: [
        tool({
          name: "add",
          description: ADD_TOOL.description,
          parameters: ADD_ZOD,
          execute: (input) => w.tool(input),
        }),
      ],
    });
    const result = await run(agent, USER_PROMPT, { maxTurns: w.turns + 5 });
    return { text: String(result.finalOutput), keep: result };
  },
};
