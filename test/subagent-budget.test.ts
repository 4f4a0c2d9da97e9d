import { describe, expect, it } from "vitest";
import {
  agentLoop,
  BudgetExceededError,
  defineAgent,
  initSession,
  runAgent,
  sessionMetrics,
  subagentTool,
  tool,
  type AgentEvent,
  type ModelPrice,
  type Usage,
} from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import { expectEveryCallAnsweredOnce } from "./helpers.ts";

const usage = (inputTokens: number, outputTokens: number): Usage => ({ inputTokens, outputTokens });
const call = (id: string, name: string, input: Record<string, string> = {}, spent?: Usage, model?: string) => ({
  type: "tool_call" as const,
  id,
  name,
  input,
  ...(spent === undefined ? {} : { usage: spent, stopReason: "tool_use" as const }),
  ...(model === undefined ? {} : { model }),
});
const answer = (content: string, spent: Usage, model: string) => ({
  role: "assistant" as const,
  content,
  usage: spent,
  model,
});
const prices: Record<string, ModelPrice> = {
  big: { inputPerMTok: 10, outputPerMTok: 50 },
  small: { inputPerMTok: 1, outputPerMTok: 5 },
  tiny: { inputPerMTok: 0.1, outputPerMTok: 0.5 },
};
const cost = (model: "big" | "small" | "tiny", spent: Usage) =>
  (spent.inputTokens * prices[model]!.inputPerMTok + spent.outputTokens * prices[model]!.outputPerMTok) / 1_000_000;

function stepTool(log: string[]) {
  return tool({
    name: "step",
    description: "One step of work.",
    inputSchema: { type: "object", properties: { n: { type: "string" } } },
    handler: ({ n }: { n?: string }) => {
      log.push(`step ${String(n)}`);
      return "ok";
    },
  });
}

describe("subagents count against the parent's budget", () => {
  it("stops the subagent when the parent's budget runs out, and the parent before its next model call", async () => {
    const log: string[] = [];
    // Each subagent call spends 30 tokens and asks for another step, forever.
    const worker = subagentTool({
      name: "worker",
      description: "Works.",
      systemPrompt: "Work.",
      invokeModel: scriptedModel(
        Array.from({ length: 10 }, (_, index) => [
          call(`w${index}`, "step", { n: String(index) }, usage(20, 10), "small"),
        ]),
      ),
      tools: [stepTool(log)],
    });
    let parentCalls = 0;
    const parent = scriptedModel([
      () => {
        parentCalls++;
        return [call("p1", "worker", { prompt: "work" }, usage(8, 2), "big")];
      },
      () => {
        parentCalls++;
        return [answer("never", usage(1, 1), "big")];
      },
    ]);
    const events: AgentEvent[] = [];
    const error = await agentLoop(parent, [worker], initSession("s", "go"), {
      budget: { tokens: 100 },
      onEvent: (event) => events.push(event),
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(BudgetExceededError);
    const exceeded = error as BudgetExceededError;
    expectEveryCallAnsweredOnce(exceeded.session);
    // The parent had 90 tokens left when the subagent started: its 3rd call used them up (100 >= 100),
    // so its 4th never started.
    expect(log).toStrictEqual(["step 0", "step 1", "step 2"]);
    expect(parentCalls).toBe(1);
    expect(exceeded.message).toContain("spent 100 tokens");
    const result = exceeded.session.messages.find(
      (message) => "type" in message && message.type === "tool_result" && message.id === "p1",
    );
    expect(result).toMatchObject({
      isError: true,
      subagentUsage: [{ model: "small", calls: 3, usage: usage(60, 30) }],
    });
    const end = events.at(-1);
    expect(end).toMatchObject({ type: "run-end", outcome: "max-iterations", errorType: "BudgetExceededError" });
    expect(end?.type === "run-end" && end.metrics?.subagents).toStrictEqual({
      modelCalls: 3,
      usage: { inputTokens: 60, outputTokens: 30, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
    });
  });

  it("the parent's metrics count subagent tokens and cost once, nested subagents included, in the run-end and from the session", async () => {
    const inner = subagentTool({
      name: "inner",
      description: "Inner.",
      systemPrompt: "Inner.",
      invokeModel: scriptedModel([answer("inner done", usage(100, 10), "tiny")]),
    });
    const middle = defineAgent({
      name: "middle",
      systemPrompt: "Middle.",
      invokeModel: scriptedModel([
        [call("m1", "inner", { prompt: "deeper" }, usage(500, 50), "small")],
        answer("middle done", usage(600, 60), "small"),
      ]),
      tools: [inner],
    });
    const events: AgentEvent[] = [];
    const session = await agentLoop(
      scriptedModel([
        [call("p1", "middle", { prompt: "delegate" }, usage(1000, 100), "big")],
        answer("all done", usage(1200, 20), "big"),
      ]),
      [subagentTool(middle)],
      initSession("s", "go"),
      { prices, onEvent: (event) => events.push(event) },
    );
    const result = session.messages.find(
      (message) => "type" in message && message.type === "tool_result" && message.id === "p1",
    );
    expect(result).toMatchObject({
      subagentUsage: [
        { model: "small", calls: 2, usage: usage(1100, 110) },
        { model: "tiny", calls: 1, usage: usage(100, 10) },
      ],
    });
    const own = cost("big", usage(1000, 100)) + cost("big", usage(1200, 20));
    const subagents = cost("small", usage(1100, 110)) + cost("tiny", usage(100, 10));
    const end = events.at(-1);
    if (end?.type !== "run-end") throw new Error("no run-end");
    expect(end.costUsd).toBeCloseTo(own + subagents, 12);
    const metrics = end.metrics!;
    expect(metrics.modelCalls).toBe(2);
    expect(metrics.usage).toMatchObject({ inputTokens: 2200, outputTokens: 120 });
    expect(metrics.subagents).toMatchObject({ modelCalls: 3, usage: { inputTokens: 1200, outputTokens: 120 } });
    expect(metrics.subagents?.costUsd).toBeCloseTo(subagents, 12);
    expect(metrics.costUsd).toBeCloseTo(own + subagents, 12);
    expect(metrics.costByModel).toMatchObject({ big: { calls: 2 }, small: { calls: 2 }, tiny: { calls: 1 } });
    const fromSession = sessionMetrics(session, { prices });
    expect(fromSession.costUsd).toBeCloseTo(own + subagents, 12);
    expect(fromSession.subagents).toStrictEqual(metrics.subagents);
    expect(fromSession.costByModel).toStrictEqual(metrics.costByModel);
  });

  it("runAgent: one budget for every agent of the call, and one run-end summing their metrics", async () => {
    const log: string[] = [];
    const billing = defineAgent({
      name: "billing",
      systemPrompt: "b",
      invokeModel: scriptedModel([
        [call("b1", "step", { n: "1" }, usage(50, 10), "small")],
        answer("never", usage(1, 1), "small"),
      ]),
      tools: [stepTool(log)],
    });
    const triage = defineAgent({
      name: "triage",
      systemPrompt: "t",
      invokeModel: scriptedModel([[call("t1", "transfer_to_billing", {}, usage(50, 10), "small")]]),
      handoffs: [billing],
    });
    const events: AgentEvent[] = [];
    const error = await runAgent(triage, initSession("s", "pay"), {
      budget: { tokens: 100 },
      onEvent: (event) => {
        if (event.type !== "handoff") events.push(event);
      },
    }).catch((caught: unknown) => caught);
    // 60 by triage, 60 by billing: over the call's 100 before billing's second call.
    expect(error).toBeInstanceOf(BudgetExceededError);
    expect(log).toStrictEqual(["step 1"]);
    const ends = events.filter((event) => event.type === "run-end");
    expect(ends).toHaveLength(1);
    expect(ends[0]).toMatchObject({
      outcome: "max-iterations",
      metrics: { modelCalls: 2, usage: { inputTokens: 100, outputTokens: 20 } },
    });
  });

  it("subagentTool(agent) takes the parent's prices and usd budget", async () => {
    const researcher = defineAgent({
      name: "researcher",
      systemPrompt: "r",
      invokeModel: scriptedModel(
        Array.from({ length: 5 }, (_, index) => [
          call(`r${index}`, "step", { n: String(index) }, usage(100_000, 0), "small"),
        ]),
      ),
      tools: [stepTool([])],
    });
    // $0.10 per researcher call; the parent's first call costs $0.10 too; budget $0.25.
    const error = await agentLoop(
      scriptedModel([[call("p1", "researcher", { prompt: "dig" }, usage(10_000, 0), "big")]]),
      [subagentTool(researcher)],
      initSession("s", "go"),
      { prices, budget: { usd: 0.25 } },
    ).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(BudgetExceededError);
    const exceeded = error as BudgetExceededError;
    const result = exceeded.session.messages.find((message) => "type" in message && message.type === "tool_result");
    // $0.15 left for the researcher: its 2nd call ($0.20 > $0.15) was its last.
    expect(result).toMatchObject({ isError: true, subagentUsage: [{ model: "small", calls: 2 }] });
    expect(exceeded.message).toContain("$0.3000");
  });
});
