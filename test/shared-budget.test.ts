import { describe, expect, it } from "vitest";
import {
  agentLoop,
  BudgetExceededError,
  defineAgent,
  initSession,
  runAgent,
  subagentTool,
  summarizeOlderTurns,
  withFallback,
  type AgentEvent,
  type AgentLoopOptions,
  type InvokeModel,
  type Tool,
} from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import { centUsage, centWorker, prices, step } from "./cent-worker.ts";
import { expectEveryCallAnsweredOnce } from "./helpers.ts";

function fiveWorkersAtOnce(): InvokeModel {
  return scriptedModel([
    Array.from({ length: 5 }, (_, index) => ({
      type: "tool_call" as const,
      id: `p${index}`,
      name: "worker",
      input: { prompt: `part ${index}` },
      usage: centUsage,
      model: "cheap",
      stopReason: "tool_use" as const,
    })),
    { role: "assistant", content: "never", usage: centUsage, model: "cheap" },
  ]);
}

// The "worker" subagent: calls its step tool for as long as it may, each call counted in `counter`.
function workerTool(counter: { calls: number }, loopOptions?: AgentLoopOptions): Tool {
  return subagentTool({
    name: "worker",
    description: "Works.",
    systemPrompt: "Work.",
    invokeModel: centWorker(counter),
    tools: [step],
    ...(loopOptions === undefined ? {} : { loopOptions }),
  });
}

describe("one budget for the whole call: a live ledger", () => {
  it("five subagents started in one turn share the parent's budget.usd as they spend it", async () => {
    const counter = { calls: 0 };
    const worker = workerTool(counter);
    const events: AgentEvent[] = [];
    const error = await agentLoop(fiveWorkersAtOnce(), [worker], initSession("s", "go"), {
      prices,
      budget: { usd: 0.1 },
      onEvent: (event) => events.push(event),
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(BudgetExceededError);
    expectEveryCallAnsweredOnce((error as BudgetExceededError).session);
    // $0.01 by the parent, then at most the nine calls the $0.09 left pays for, plus at most one
    // call in flight per worker when it ran out: never the 50 a snapshot per worker allowed.
    expect(counter.calls).toBeGreaterThanOrEqual(9);
    expect(counter.calls).toBeLessThanOrEqual(9 + 5);
    const end = events.at(-1);
    expect(end).toMatchObject({ type: "run-end", outcome: "max-iterations" });
    expect(end?.type === "run-end" ? end.costUsd : undefined).toBeLessThanOrEqual(0.1 + 0.05 + 1e-9);
  });

  it("the same through subagentTool(agent) and runAgent: nested calls count where they are made, at once", async () => {
    const counter = { calls: 0 };
    const inner = defineAgent({ name: "inner", systemPrompt: "i", invokeModel: centWorker(counter), tools: [step] });
    const worker = defineAgent({
      name: "worker",
      systemPrompt: "w",
      invokeModel: async () => [
        {
          type: "tool_call",
          id: `m${Math.random()}`,
          name: "inner",
          input: { prompt: "deeper" },
          usage: centUsage,
          model: "cheap",
          stopReason: "tool_use",
        },
      ],
      tools: [subagentTool(inner)],
    });
    const parent = defineAgent({
      name: "parent",
      systemPrompt: "p",
      invokeModel: fiveWorkersAtOnce(),
      tools: [subagentTool(worker)],
    });
    const error = await runAgent(parent, initSession("s", "go"), { prices, budget: { usd: 0.1 } }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(BudgetExceededError);
    // Six calls ($0.06) by the parent and the five workers, then at most what the rest pays for
    // plus one call in flight per innermost agent.
    expect(counter.calls).toBeLessThanOrEqual(4 + 5);
  });

  it("a subagent's own budget is a further limit within the parent's", async () => {
    const counter = { calls: 0 };
    const worker = workerTool(counter, { prices, budget: { usd: 0.02 } });
    const session = await agentLoop(
      scriptedModel([
        [{ type: "tool_call", id: "p0", name: "worker", input: { prompt: "x" }, usage: centUsage, model: "cheap" }],
        { role: "assistant", content: "done", usage: centUsage, model: "cheap" },
      ]),
      [worker],
      initSession("s", "go"),
      { prices, budget: { usd: 1 } },
    );
    expect(counter.calls).toBe(2);
    expect(session.messages.at(-1)).toMatchObject({ role: "assistant", content: "done" });
  });

  it("the compaction summarizer's call counts against the run's budget, and none starts past it", async () => {
    const summarizerCalls = { calls: 0 };
    const summarizer: InvokeModel = () => {
      summarizerCalls.calls++;
      return [{ role: "assistant", content: "short", usage: { inputTokens: 5_000, outputTokens: 0 }, model: "cheap" }];
    };
    const long = "x".repeat(4_000);
    let mainCalls = 0;
    const main: InvokeModel = () => {
      mainCalls++;
      return [
        {
          type: "tool_call",
          id: `c${mainCalls}`,
          name: "step",
          input: { n: `${mainCalls} ${long}` },
          usage: centUsage,
          model: "cheap",
          stopReason: "tool_use",
        },
      ];
    };
    const events: AgentEvent[] = [];
    const error = await agentLoop(main, [step], initSession("s", "go"), {
      prices,
      // $0.01 per main call, $0.05 per summary.
      budget: { usd: 0.1 },
      compaction: summarizeOlderTurns({ invokeModel: summarizer, contextWindow: 1_000, keepTurns: 1 }),
      onEvent: (event) => events.push(event),
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(BudgetExceededError);
    expect(summarizerCalls.calls).toBeGreaterThan(0);
    const end = events.at(-1);
    const costUsd = end?.type === "run-end" ? (end.costUsd ?? 0) : 0;
    // The summaries are in the run's cost, and the run stopped once the whole reached $0.10.
    expect(costUsd).toBeCloseTo(mainCalls * 0.01 + summarizerCalls.calls * 0.05, 9);
    expect(costUsd).toBeGreaterThanOrEqual(0.1 - 1e-9);
    expect(costUsd).toBeLessThan(0.1 + 0.05 + 1e-9);
  });

  it("budget: spent >= limit is used up: a call that spends exactly the budget is the last", async () => {
    let calls = 0;
    const model: InvokeModel = () => {
      calls++;
      return [
        { type: "tool_call", id: `c${calls}`, name: "step", input: {}, usage: { inputTokens: 50, outputTokens: 0 } },
      ];
    };
    const error = await agentLoop(model, [step], initSession("s", "go"), { budget: { tokens: 100 } }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(BudgetExceededError);
    expect(calls).toBe(2);
    expect((error as BudgetExceededError).spent).toStrictEqual({ tokens: 100 });
  });
});

describe("fallback models and retries share the ledger", () => {
  it("a fallback to the next model and a retry do not start once a sibling used the budget up", async () => {
    let spent: () => void = () => undefined;
    const siblingSpent = new Promise<void>((resolve) => (spent = resolve));
    let secondaryCalls = 0;
    const primary: InvokeModel = async () => {
      await siblingSpent;
      throw Object.assign(new Error("overloaded"), { retryable: true });
    };
    const secondary: InvokeModel = () => {
      secondaryCalls++;
      return [{ role: "assistant", content: "from the fallback", usage: centUsage, model: "cheap" }];
    };
    const slow = subagentTool({
      name: "slow",
      description: "Slow.",
      systemPrompt: "s",
      invokeModel: withFallback([primary, secondary]),
      loopOptions: { retry: { maxRetries: 3, initialDelayMs: 1 } },
    });
    const spender = subagentTool({
      name: "spender",
      description: "Spends.",
      systemPrompt: "s",
      invokeModel: () => {
        setTimeout(spent, 5);
        return [
          { role: "assistant", content: "spent", usage: { inputTokens: 20_000, outputTokens: 0 }, model: "cheap" },
        ];
      },
    });
    const error = await agentLoop(
      scriptedModel([
        [
          { type: "tool_call", id: "a", name: "slow", input: { prompt: "x" }, usage: centUsage, model: "cheap" },
          { type: "tool_call", id: "b", name: "spender", input: { prompt: "y" }, usage: centUsage, model: "cheap" },
        ],
        { role: "assistant", content: "never", usage: centUsage, model: "cheap" },
      ]),
      [slow, spender],
      initSession("s", "go"),
      { prices, budget: { usd: 0.1 } },
    ).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(BudgetExceededError);
    expect(secondaryCalls).toBe(0);
    const slowResult = (error as BudgetExceededError).session.messages.find(
      (message) => "type" in message && message.type === "tool_result" && message.id === "a",
    );
    expect(slowResult).toMatchObject({ isError: true });
    expect(JSON.stringify(slowResult)).toContain("used up budget.usd");
  });
});
