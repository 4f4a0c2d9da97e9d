import { describe, expect, it } from "vitest";
import {
  agentLoop,
  BudgetExceededError,
  initSession,
  sessionMetrics,
  subagentTool,
  tool,
  type AgentEvent,
  type InvokeModel,
  type Session,
  type ToolResultMessage,
} from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import { centUsage, centWorker, prices, step } from "./cent-worker.ts";
import { expectEveryCallAnsweredOnce } from "./helpers.ts";

function researcher(counter: { calls: number }, steps: number, maxIterations = 30) {
  return subagentTool({
    name: "research",
    description: "Researches.",
    systemPrompt: "Research.",
    invokeModel: centWorker(counter, steps),
    tools: [step],
    maxIterations,
    background: true,
  });
}

// The parent: starts the research, says so, then answers once the outcome is delivered.
function parentModel(): InvokeModel {
  return scriptedModel([
    [
      {
        type: "tool_call",
        id: "c1",
        name: "research",
        input: { prompt: "find out" },
        usage: centUsage,
        model: "cheap",
        stopReason: "tool_use",
      },
    ],
    { role: "assistant", content: "Started.", usage: centUsage, model: "cheap" },
    { role: "assistant", content: "Here it is.", usage: centUsage, model: "cheap" },
  ]);
}

function taskResult(session: Session): ToolResultMessage {
  return session.messages.find(
    (message): message is ToolResultMessage =>
      "type" in message && message.type === "tool_result" && message.id === "c1",
  )!;
}

describe("background tasks: what a background subagent spends is the parent's", () => {
  it("counts in the run-end's metrics and cost, on the call's result and in sessionMetrics", async () => {
    const counter = { calls: 0 };
    const events: AgentEvent[] = [];
    const session = initSession("s", "go");
    await agentLoop(parentModel(), [researcher(counter, 2)], session, {
      prices,
      onEvent: (event) => events.push(event),
    });
    expect(counter.calls).toBe(3);
    const end = events.at(-1);
    if (end?.type !== "run-end") throw new Error("no run-end");
    // Three parent calls and three of the subagent's: $0.06.
    expect(end.costUsd).toBeCloseTo(0.06, 9);
    expect(end.metrics?.subagents).toMatchObject({ modelCalls: 3, usage: { inputTokens: 3_000 } });
    expect(end.metrics?.costUsd).toBeCloseTo(0.06, 9);
    expect(events.find((event) => event.type === "task-settled")).toMatchObject({
      subagentUsage: [{ model: "cheap", calls: 3, usage: { inputTokens: 3_000 } }],
    });
    expect(taskResult(session).subagentUsage).toStrictEqual([
      { model: "cheap", calls: 3, usage: { inputTokens: 3_000, outputTokens: 0 } },
    ]);
    const saved = sessionMetrics(JSON.parse(JSON.stringify(session)) as Session, { prices });
    expect(saved.subagents).toMatchObject({ modelCalls: 3 });
    expect(saved.costUsd).toBeCloseTo(0.06, 9);
  });

  it("the parent's budget stops a background subagent with the reason, delivered to the parent; the parent stops too", async () => {
    const counter = { calls: 0 };
    const events: AgentEvent[] = [];
    const error = await agentLoop(parentModel(), [researcher(counter, 1_000)], initSession("s", "go"), {
      prices,
      budget: { usd: 0.06 },
      onEvent: (event) => events.push(event),
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(BudgetExceededError);
    const { session } = error as BudgetExceededError;
    // $0.02 by the parent, so the subagent gets at most four calls (one more in flight at most).
    expect(counter.calls).toBeGreaterThanOrEqual(4);
    expect(counter.calls).toBeLessThanOrEqual(5);
    expect(taskResult(session).task).toMatchObject({
      status: "failed",
      isError: true,
      output: expect.stringContaining("used up budget.usd (0.06)"),
    });
    const delivery = session.messages.find((message) => "deliversTask" in message);
    expect(delivery).toMatchObject({ role: "user", content: expect.stringContaining("used up budget.usd (0.06)") });
    expectEveryCallAnsweredOnce(session);
  });

  it("with whenIdle end the ended run's budget still bounds the task", async () => {
    const counter = { calls: 0 };
    const session = initSession("s", "go");
    await agentLoop(parentModel(), [researcher(counter, 1_000)], session, {
      prices,
      budget: { usd: 0.06 },
      backgroundTasks: { whenIdle: "end" },
    });
    await new Promise<void>((resolve) => {
      const check = (): void => {
        if (taskResult(session).task?.status !== "running") resolve();
        else setTimeout(check, 10);
      };
      check();
    });
    expect(counter.calls).toBeLessThanOrEqual(5);
    expect(taskResult(session).task).toMatchObject({
      status: "failed",
      output: expect.stringContaining("used up budget.usd"),
    });
  });
});

describe("background tasks: progress", () => {
  it("context.update from a task's handler reaches the run's observers as task-update", async () => {
    const build = tool({
      name: "build",
      description: "Builds.",
      inputSchema: { type: "object", properties: {} },
      background: true,
      handler: async (_input, context) => {
        context.update({ compiled: 1 });
        await new Promise((resolve) => setTimeout(resolve, 5));
        context.update({ compiled: 2 });
        return "built";
      },
    });
    const events: AgentEvent[] = [];
    const session = initSession("s", "go");
    await agentLoop(
      scriptedModel([
        [{ type: "tool_call", id: "c1", name: "build", input: {} }],
        [{ role: "assistant", content: "Started." }],
        [{ role: "assistant", content: "Built." }],
      ]),
      [build],
      session,
      { onEvent: (event) => events.push(event) },
    );
    const id = taskResult(session).task!.id;
    expect(events.filter((event) => event.type === "task-update")).toStrictEqual([
      { type: "task-update", id, callId: "c1", name: "build", progress: { compiled: 1 } },
      { type: "task-update", id, callId: "c1", name: "build", progress: { compiled: 2 } },
    ]);
    // Reported between its start and its settling.
    const types = events.map((event) => event.type).filter((type) => type.startsWith("task-"));
    expect(types).toStrictEqual(["task-start", "task-update", "task-update", "task-settled"]);
  });

  it("a background subagent's own events come as its task's updates", async () => {
    const counter = { calls: 0 };
    const events: AgentEvent[] = [];
    await agentLoop(parentModel(), [researcher(counter, 1)], initSession("s", "go"), {
      onEvent: (event) => events.push(event),
    });
    const updates = events.filter((event) => event.type === "task-update");
    expect(updates.length).toBeGreaterThan(0);
    expect(updates.map((event) => (event.type === "task-update" ? event.progress : null))).toContainEqual(
      expect.objectContaining({ type: "run-start" }),
    );
  });
});
