// One budget and one deadline for the whole call, on the paths code mode and background tasks
// added: a program's calls (five subagents in parallel from one program) spend from the run's
// ledger and run under its deadline; a background task the run waits for is bounded by the run's
// runMs and cancelled with it, and a background subagent spends from the same ledger.
import { describe, expect, it } from "vitest";
import {
  agentLoop,
  backgroundTasks,
  BudgetExceededError,
  codeModeName,
  initSession,
  subagentTool,
  tool,
  type AgentEvent,
} from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import { centUsage, centWorker, prices, step } from "./cent-worker.ts";
import { expectEveryCallAnsweredOnce } from "./helpers.ts";

function worker(counter: { calls: number }, background?: true) {
  return subagentTool({
    name: "worker",
    description: "Works.",
    systemPrompt: "Work.",
    invokeModel: centWorker(counter),
    tools: [step],
    ...(background === undefined ? {} : { background }),
  });
}

// A tool that answers after `ms`, or stops at its signal.
function slow(ms: number, background?: true) {
  return tool({
    name: "slow",
    description: "Slow.",
    inputSchema: { type: "object" },
    ...(background === undefined ? {} : { background }),
    handler: (_input, context) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => resolve("late"), ms);
        context.signal.addEventListener("abort", () => (clearTimeout(timer), reject(context.signal.reason)));
      }),
  });
}

describe("one budget and one deadline across program calls and background tasks", () => {
  it("five subagents started in parallel by one program share the run's budget.usd call by call", async () => {
    const counter = { calls: 0 };
    const code = "return await Promise.all([0, 1, 2, 3, 4].map((i) => tools.worker({ prompt: 'part ' + i })));";
    const error = await agentLoop(
      scriptedModel([
        [{ type: "tool_call", id: "c", name: codeModeName, input: { code }, usage: centUsage, model: "cheap" }],
        { role: "assistant", content: "never", usage: centUsage, model: "cheap" },
      ]),
      [worker(counter)],
      initSession("s", "go"),
      { prices, budget: { usd: 0.1 }, codeMode: true },
    ).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(BudgetExceededError);
    expectEveryCallAnsweredOnce((error as BudgetExceededError).session);
    // $0.01 by the parent, the nine calls $0.09 pays for, at most one in flight per worker.
    expect(counter.calls).toBeGreaterThanOrEqual(9);
    expect(counter.calls).toBeLessThanOrEqual(9 + 5);
  });

  it("five background subagents share it too", async () => {
    const counter = { calls: 0 };
    const calls = Array.from({ length: 5 }, (_, index) => ({
      type: "tool_call" as const,
      id: `p${index}`,
      name: "worker",
      input: { prompt: `part ${index}` },
      usage: centUsage,
      model: "cheap",
    }));
    const error = await agentLoop(
      scriptedModel([
        calls,
        { role: "assistant", content: "waiting", usage: centUsage, model: "cheap" },
        { role: "assistant", content: "never", usage: centUsage, model: "cheap" },
      ]),
      [worker(counter, true)],
      initSession("s", "go"),
      { prices, budget: { usd: 0.1 } },
    ).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(BudgetExceededError);
    expect(counter.calls).toBeLessThanOrEqual(9 + 5);
  });

  it("runMs stops a program whose calls outlast it, whatever the program's own timeoutMs", async () => {
    const events: AgentEvent[] = [];
    const started = Date.now();
    await agentLoop(
      scriptedModel([
        [{ type: "tool_call", id: "c", name: codeModeName, input: { code: "await tools.slow({}); return 1;" } }],
        { role: "assistant", content: "never" },
      ]),
      [slow(20_000)],
      initSession("s", "go"),
      { codeMode: { timeoutMs: 60_000 }, timeouts: { runMs: 300 }, onEvent: (event) => events.push(event) },
    );
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(events.at(-1)).toMatchObject({ type: "run-end", outcome: "timeout" });
  });

  it("runMs bounds the wait for a background task, and the timeout cancels the task", async () => {
    const events: AgentEvent[] = [];
    const started = Date.now();
    const session = initSession("s", "go");
    await agentLoop(
      scriptedModel([
        [{ type: "tool_call", id: "c", name: "slow", input: {} }],
        { role: "assistant", content: "waiting for it" },
        { role: "assistant", content: "never" },
      ]),
      [slow(20_000, true)],
      session,
      { timeouts: { runMs: 300 }, onEvent: (event) => events.push(event) },
    );
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(events.at(-1)).toMatchObject({ type: "run-end", outcome: "timeout" });
    await expect.poll(() => backgroundTasks(session)[0]?.status, { timeout: 10_000 }).toBe("cancelled");
  });
});
