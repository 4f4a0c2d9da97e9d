import { describe, expect, it } from "vitest";
import { agentLoop, costOf, initSession, sessionMetrics, type AgentEvent, type ModelMessage } from "simple-agent-loop";
import { modelPrices, modelPricesDate } from "simple-agent-loop/prices";
import { scriptedModel } from "simple-agent-loop/testing";

const price = { inputPerMTok: 3, outputPerMTok: 15, cacheReadPerMTok: 0.3 };
const answer = (model: string, inputTokens: number, outputTokens: number, content = "ok"): ModelMessage => ({
  role: "assistant",
  content,
  usage: { inputTokens, outputTokens },
  model,
});

describe("what a run costs", () => {
  it("sessionMetrics with prices: costUsd, costByModel (calls and cost by the model that answered), cost per turn", async () => {
    const session = initSession("s", "hi");
    await agentLoop(
      scriptedModel([[{ type: "tool_call", id: "c1", name: "work", input: {} }], [answer("gpt-5", 2_000_000, 0)]]),
      [],
      session,
      { toolHandlers: { work: () => "done" }, loopGuard: false },
    );
    // The first turn is one tool call without a recorded model: counted, not priced.
    session.messages.push({ role: "user", content: "again" });
    await agentLoop(scriptedModel([[answer("claude-sonnet-4-5-20250929", 1_000_000, 100_000)]]), [], session);
    const metrics = sessionMetrics(session, { prices: { "claude-sonnet-4-5": price, "gpt-5": modelPrices["gpt-5"]! } });
    const sonnet = costOf({ inputTokens: 1_000_000, outputTokens: 100_000 }, price);
    expect(sonnet).toBeCloseTo(4.5, 10);
    expect(metrics.costByModel).toStrictEqual({
      "gpt-5": { calls: 1, costUsd: 2.5 },
      "claude-sonnet-4-5-20250929": { calls: 1, costUsd: sonnet },
    });
    expect(metrics.costUsd).toBeCloseTo(2.5 + 4.5, 10);
    expect(metrics.turns.map((turn) => turn.costUsd)).toStrictEqual([undefined, 2.5, sonnet]);
    // Without prices nothing is priced.
    expect(sessionMetrics(session).costUsd).toBeUndefined();
  });

  it("run-end carries costUsd (also in its metrics) when the run has prices", async () => {
    const events: AgentEvent[] = [];
    await agentLoop(scriptedModel([[answer("gpt-5", 1_000_000, 1_000_000)]]), [], initSession("s", "hi"), {
      prices: { "gpt-5": { inputPerMTok: 1, outputPerMTok: 2 } },
      onEvent: (event) => events.push(event),
    });
    const end = events.at(-1) as Extract<AgentEvent, { type: "run-end" }>;
    expect(end.costUsd).toBe(3);
    expect(end.metrics?.costUsd).toBe(3);
    const unpriced: AgentEvent[] = [];
    await agentLoop(scriptedModel([[answer("gpt-5", 10, 10)]]), [], initSession("s", "hi"), {
      onEvent: (event) => unpriced.push(event),
    });
    expect(unpriced.at(-1)).not.toHaveProperty("costUsd");
  });

  it("simple-agent-loop/prices is a dated table of plain prices", () => {
    expect(modelPricesDate).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    for (const [model, entry] of Object.entries(modelPrices)) {
      expect(entry.inputPerMTok, model).toBeGreaterThan(0);
      expect(entry.outputPerMTok, model).toBeGreaterThanOrEqual(entry.inputPerMTok);
    }
  });
});
