// One task of the CLI: Ctrl-C once aborts the run cleanly, twice (before the abort is over) exits
// with 130; a failing model is a result, not a throw.
import { describe, expect, it } from "vitest";
import { extendSession, initSession, send, tool, type AgentEvent, type Session } from "simple-agent-loop";
import { scriptedModel, type ScriptedTurn } from "simple-agent-loop/testing";
import { runTask, type TaskContext } from "../../src/cli/run-task.ts";
import type { TaskResult } from "../../src/cli/task-output.ts";

function context(turns: ScriptedTurn[], session: Session, contextWindow = 200_000) {
  const events: AgentEvent[] = [];
  const results: TaskResult[] = [];
  const exits: number[] = [];
  let interrupt: (() => void) | undefined;
  const task: TaskContext = {
    invokeModel: scriptedModel(turns),
    tools: [],
    session,
    hooks: {},
    maxTurns: 10,
    contextWindow,
    output: {
      event: (event) => events.push(event),
      finish: (result) => results.push(result),
      interrupting: () => undefined,
      pause: () => undefined,
      resume: () => undefined,
    },
    watchInterrupts: (handler) => {
      interrupt = handler;
      return () => (interrupt = undefined);
    },
    exitNow: (code) => void exits.push(code),
  };
  return { task, events, results, exits, interrupt: () => interrupt?.() };
}

describe("runTask: --max-cost with unknown prices", () => {
  const price = { inputPerMTok: 1, outputPerMTok: 0 };
  const costly = (model?: string): ScriptedTurn => ({
    role: "assistant",
    content: "an answer",
    ...(model === undefined ? {} : { model }),
    usage: { inputTokens: 500_000, outputTokens: 0 },
  });

  it("a call whose model the provider did not name, or named without a price, costs the price of the model asked for", async () => {
    for (const answering of [undefined, "some-unlisted-model"]) {
      const run = context([costly(answering)], initSession("system", "first"));
      const warnings: string[] = [];
      Object.assign(run.task, {
        prices: { "asked-model": price },
        model: "asked-model",
        spending: { spentUsd: 0, limitUsd: 10 },
        warn: (text: string) => warnings.push(text),
      });
      const result = await runTask(run.task, "go");
      expect(result.metrics?.costUsd).toBeCloseTo(0.5, 10);
      expect(run.task.spending?.spentUsd).toBeCloseTo(0.5, 10);
      expect(warnings).toStrictEqual([]);
    }
  });

  it("no price at all: the user is told once that the cap cannot be enforced", async () => {
    const session = initSession("system", "first");
    const run = context([costly("unlisted"), costly("unlisted")], session);
    const warnings: string[] = [];
    Object.assign(run.task, {
      prices: { "other-model": price },
      model: "also-unlisted",
      spending: { spentUsd: 0, limitUsd: 10 },
      warn: (text: string) => warnings.push(text),
    });
    await runTask(run.task, "one");
    await runTask(run.task, "two");
    expect(warnings).toStrictEqual([
      "warning: --max-cost cannot be enforced: no price is known for model unlisted, so its calls count $0",
    ]);
  });
});

describe("runTask", () => {
  it("answers the task in the session and reports done with the answer and metrics", async () => {
    const session = initSession("system", "first");
    const run = context([{ role: "assistant", content: "an answer" }], session);
    const result = await runTask(run.task, "second");
    expect(result).toMatchObject({ outcome: "done", answer: "an answer", metrics: { modelCalls: 1 } });
    expect(session.messages.map((message) => ("content" in message ? message.content : ""))).toStrictEqual([
      "system",
      "first",
      "second",
      "an answer",
    ]);
    expect(run.results).toStrictEqual([result]);
  });

  it("past 80% of the context window, older turns are summarized by the model before it is called", async () => {
    const session = initSession("system", "first task");
    for (let n = 1; n <= 4; n++) {
      send(session, `task ${n}: ${"details ".repeat(50)}`);
      extendSession(session, { role: "assistant", content: `answer ${n}: ${"more ".repeat(50)}` });
    }
    const summarizer: ScriptedTurn = (summarized) => [
      { role: "assistant", content: `SUMMARY of ${summarized.messages.length} messages` },
    ];
    const run = context([summarizer, { role: "assistant", content: "the answer" }], session, 300);
    const result = await runTask(run.task, "next task");
    expect(result).toMatchObject({ outcome: "done", answer: "the answer" });
    expect(run.events.some((event) => event.type === "compaction")).toBe(true);
    expect(
      session.messages.some(
        (message) =>
          "role" in message &&
          message.role === "user" &&
          typeof message.content === "string" &&
          message.content.startsWith("Summary of the earlier conversation:\nSUMMARY of"),
      ),
    ).toBe(true);
    expect(session.messages.length).toBeLessThan(14);
    expect(session.messages.at(-2)).toMatchObject({ role: "user", content: "next task" });
  });

  it("on a first Ctrl-C aborts the run: the session ends with the loop's aborted message", async () => {
    const session = { messages: [] };
    const run = context([{ delay: 60_000, messages: [{ role: "assistant", content: "never" }] }], session);
    const pending = runTask(run.task, "wait");
    await expect.poll(() => run.events.some((event) => event.type === "turn-start")).toBe(true);
    run.interrupt();
    expect(await pending).toMatchObject({ outcome: "aborted" });
    expect(session.messages.at(-1)).toMatchObject({ role: "assistant", content: "", stopReason: "aborted" });
    expect(run.exits).toStrictEqual([]);
  });

  it("on a second Ctrl-C before the run has ended, exits with 130", async () => {
    const run = context([{ delay: 60_000, messages: [] }], { messages: [] });
    const pending = runTask(run.task, "wait");
    await expect.poll(() => run.events.some((event) => event.type === "turn-start")).toBe(true);
    run.interrupt();
    run.interrupt();
    expect(run.exits).toStrictEqual([130]);
    await pending;
  });

  it("reports a failing model as an error result", async () => {
    const run = context([{ error: new Error("the model is down") }], { messages: [] });
    const result = await runTask(run.task, "hi");
    expect(result).toMatchObject({ outcome: "error", error: new Error("the model is down") });
  });

  it("reports the time spent waiting for the user apart: the time the loop measured in the permission hook", async () => {
    const run = context(
      [
        { type: "tool_call", id: "c1", name: "touch", input: {} },
        { role: "assistant", content: "done" },
      ],
      { messages: [] },
    );
    run.task.tools = [
      tool({ name: "touch", description: "touch", inputSchema: { type: "object" }, handler: () => "ok" }),
    ];
    run.task.hooks = {
      beforeToolCall: () => new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 300)),
    };
    const first = await runTask(run.task, "touch it");
    expect(first.outcome).toBe("done");
    expect(first.waitMs).toBeGreaterThanOrEqual(250);
    expect(first.waitMs).toBeLessThanOrEqual(first.metrics!.durationMs);
    // Each task counts its own waits.
    run.task.hooks = {};
    const second = await runTask(run.task, "again");
    expect(second.waitMs).toBeUndefined();
  });
});
