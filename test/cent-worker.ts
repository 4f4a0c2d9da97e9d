// What the budget tests share: a price list where each of the worker's model calls costs $0.01,
// the worker's one tool, and the worker's model.
import { tool, type InvokeModel, type ModelPrice, type Usage } from "simple-agent-loop";

export const prices: Record<string, ModelPrice> = { cheap: { inputPerMTok: 10, outputPerMTok: 0 } };
// 1,000 input tokens at $10 per million: $0.01 a call.
export const centUsage: Usage = { inputTokens: 1_000, outputTokens: 0 };

/** The worker's tool: one step of its work. */
export const step = tool({
  name: "step",
  description: "One step.",
  inputSchema: { type: "object", properties: {} },
  handler: () => "ok",
});

/**
 * A worker model whose every call costs $0.01 (model `cheap`), each counted in `counter`: it asks
 * for one more step until it has made `steps` calls (by default never), then answers "researched".
 * Each call takes a moment, so parallel workers interleave.
 */
export function centWorker(counter: { calls: number }, steps = Number.POSITIVE_INFINITY): InvokeModel {
  return async () => {
    counter.calls++;
    await new Promise((resolve) => setTimeout(resolve, 2));
    if (counter.calls > steps) return [{ role: "assistant", content: "researched", usage: centUsage, model: "cheap" }];
    return [
      {
        type: "tool_call",
        id: `w${counter.calls}`,
        name: "step",
        input: {},
        usage: centUsage,
        model: "cheap",
        stopReason: "tool_use",
      },
    ];
  };
}
