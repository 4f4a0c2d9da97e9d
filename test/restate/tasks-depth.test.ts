import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Session, ToolResultMessage } from "simple-agent-loop";
import { isRestateAgentError, restateAgentClient, type RestateAgentClient } from "simple-agent-loop/restate";
import { expectEveryCallAnsweredOnce } from "../helpers.ts";
import { startCluster, type Cluster } from "./cluster.ts";
import { waitFor } from "./restate-server.ts";
import { deliveries, expectDeliveredOnce } from "./task-deliveries.ts";

// Background tasks under Restate beyond the plain paths (tasks-crash.test.ts), on a real
// restate-server with worker processes (tasks-depth-script.ts, the object `taskDepth`): the task
// tools, a run failing while a task runs, an approval pause while a task runs, a guardrail on an
// outcome, a background subagent's spending. Each: every call answered once, every outcome
// delivered exactly once, across replays and worker kills.
let cluster: Cluster;
let client: RestateAgentClient;
// The same agent as a run of agents (restateAgent({ agent })).
let agentsClient: RestateAgentClient;
beforeAll(async () => {
  // One worker: a later attempt of an invocation replays where the earlier one ran (a kill adds one).
  cluster = await startCluster({ workers: 1 });
  client = restateAgentClient({ url: cluster.server.ingressUrl, name: "taskDepth" });
  agentsClient = restateAgentClient({ url: cluster.server.ingressUrl, name: "taskDepthAgents" });
}, 120_000);
afterAll(async () => {
  await cluster?.stop();
}, 60_000);

describe("restateAgent: the task tools", () => {
  it("check_task shows the running task, cancel_task cancels it: recorded cancelled with the reason, delivered once", async () => {
    const tag = "tools plain";
    expect(await client.run(tag, { message: tag })).toStrictEqual({ outcome: "done", response: `Done with ${tag}.` });
    const session = await client.session(tag);
    expectEveryCallAnsweredOnce(session);
    expectDeliveredOnce(session);
    const [task] = await client.tasks(tag);
    expect(task).toMatchObject({ name: "watch", status: "cancelled", delivered: true });
    expect(task!.output).toBe("The task was cancelled: not needed.");
    expect(resultOf(session, "check_task-tools-plain").output).toStrictEqual([
      { id: task!.id, name: "watch", status: "running", elapsedSeconds: expect.any(Number) },
    ]);
    expect(resultOf(session, "cancel_task-tools-plain")).toMatchObject({ output: { id: task!.id, name: "watch" } });
    expect(resultOf(session, "cancel_task-tools-plain").isError).toBeUndefined();
    expect(cluster.effects().get(`watch ${tag} aborted`)).toBe(1);
  }, 120_000);

  for (const form of ["loop", "agents"] as const)
    it(`a worker SIGKILLed after cancel_task's step and before the next safe point: the replay still cancels the task (${form})`, async () => {
      const target = form === "loop" ? client : agentsClient;
      const tag = form === "loop" ? "tools crash" : "tools crash agents";
      const slug = tag.replaceAll(" ", "-");
      cluster.hold(`tool-slow-${slug}`);
      const { invocationId } = await target.start(tag, { message: tag });
      const killed = await cluster.waitAt(`tool-slow-${slug}`);
      await cluster.waitForSteps(
        invocationId,
        (names) => names.includes(`tool cancel_task-${slug}`),
        "cancel_task's step",
      );
      await cluster.killWorker(killed);
      await cluster.addWorker();
      cluster.release(`tool-slow-${slug}`);
      expect(await target.attach(invocationId)).toMatchObject({ outcome: "done", response: `Done with ${tag}.` });
      const session = await target.session(tag);
      expectEveryCallAnsweredOnce(session);
      expectDeliveredOnce(session);
      const [task] = await target.tasks(tag);
      // Cancelled as the model asked, not lost (the worker running it stopped) nor run again.
      expect(task).toMatchObject({ name: "watch", status: "cancelled", delivered: true, attempt: 1 });
      expect(task!.output).toBe("The task was cancelled: not needed.");
    }, 240_000);
});

describe("restateAgent: a cancel while the model is called", () => {
  it("cancelTask during a model call aborts the task's handler at once; the record and delivery follow at the next safe point", async () => {
    const tag = "midcall watch";
    cluster.hold("model-midcall-watch-answer");
    const { invocationId } = await client.start(tag, { message: tag });
    await cluster.waitAt("model-midcall-watch-answer");
    const [running] = await client.tasks(tag);
    expect(running).toMatchObject({ name: "watch", status: "running" });
    expect(await client.cancelTask(tag, running!.id, "changed my mind")).toMatchObject({ status: "running" });
    // Seen while the model call is still held, not only once the run waits for its tasks.
    await waitFor(
      () => cluster.effects().get(`watch ${tag} aborted`) === 1,
      30_000,
      () => "the cancel was not seen during the model call",
    );
    cluster.release("model-midcall-watch-answer");
    expect(await client.attach(invocationId)).toStrictEqual({ outcome: "done", response: `Done with ${tag}.` });
    const session = await client.session(tag);
    expectEveryCallAnsweredOnce(session);
    expectDeliveredOnce(session);
    expect(await client.tasks(tag)).toMatchObject([
      { name: "watch", status: "cancelled", delivered: true, output: "The task was cancelled: changed my mind." },
    ]);
  }, 120_000);
});

describe("restateAgent: a run that fails while tasks run", () => {
  it("the model fails after Restate's retries: the run fails, the session stays valid; the next run applies onRestart and delivers each once", async () => {
    const tag = "fail rebuild";
    for (let attempt = 1; attempt <= 4; attempt++) {
      cluster.hold(`task-fail-rebuild-rebuild-${attempt}`);
      cluster.hold(`task-fail-rebuild-scan-${attempt}`);
    }
    const failed = await client.run(tag, { message: tag }).catch((error: unknown) => error);
    expect(isRestateAgentError(failed) && failed.message).toContain("model overloaded");
    expect(await client.status(tag)).toMatchObject({ state: "failed" });
    const after = await client.session(tag);
    expectEveryCallAnsweredOnce(after);
    expect(
      (await client.tasks(tag)).map(({ name, status, attempt, delivered }) => ({ name, status, attempt, delivered })),
    ).toStrictEqual([
      { name: "rebuild", status: "running", attempt: 1, delivered: false },
      { name: "scan", status: "running", attempt: 1, delivered: false },
    ]);
    // Each handler ran once: Restate's retries of the model step did not start it again.
    const effects = cluster.effects();
    expect(effects.get(`rebuild ${tag} start 1`)).toBe(1);
    expect(effects.get(`rebuild ${tag} start 2`)).toBeUndefined();
    expect(effects.get(`scan ${tag} start 1`)).toBe(1);
    // The failed run let its tasks go: no run holds them.
    const held = await client.cancelTask(tag, (await client.tasks(tag))[0]!.id).catch((error: unknown) => error);
    expect(isRestateAgentError(held) && held.status).toBe(409);

    for (let attempt = 1; attempt <= 4; attempt++) {
      cluster.release(`task-fail-rebuild-rebuild-${attempt}`);
      cluster.release(`task-fail-rebuild-scan-${attempt}`);
    }
    expect(await client.run(tag, { message: "go on" })).toStrictEqual({
      outcome: "done",
      response: `Done with ${tag}.`,
    });
    const session = await client.session(tag);
    expectEveryCallAnsweredOnce(session);
    expectDeliveredOnce(session);
    const tasks = await client.tasks(tag);
    expect(tasks.map(({ name, status, attempt, delivered }) => ({ name, status, attempt, delivered }))).toStrictEqual([
      { name: "rebuild", status: "completed", attempt: 2, delivered: true },
      { name: "scan", status: "lost", attempt: 1, delivered: true },
    ]);
    expect(tasks[0]!.output).toBe("rebuild finished (attempt 2)");
    expect(cluster.effects().get(`rebuild ${tag} start 2`)).toBe(1);
    expect(cluster.effects().get(`scan ${tag} done 1`)).toBeUndefined();
  }, 240_000);

  it("a task that ended during the failing model call is recorded at the failure and delivered once by the next run", async () => {
    const tag = "fail late";
    cluster.hold("task-fail-late-scan-1");
    const failed = await client.run(tag, { message: tag }).catch((error: unknown) => error);
    expect(isRestateAgentError(failed) && failed.message).toContain("bad request");
    expectEveryCallAnsweredOnce(await client.session(tag));
    // Recorded, not delivered: its outcome is kept, not left to onRestart ("lost").
    expect(await client.tasks(tag)).toMatchObject([{ name: "scan", status: "completed", delivered: false }]);
    expect(await client.run(tag, { message: "go on" })).toStrictEqual({
      outcome: "done",
      response: `Done with ${tag}.`,
    });
    const session = await client.session(tag);
    expectEveryCallAnsweredOnce(session);
    expectDeliveredOnce(session);
    expect(await client.tasks(tag)).toMatchObject([
      { name: "scan", status: "completed", delivered: true, output: "scan finished (attempt 1)" },
    ]);
  }, 120_000);

  it("maxIterations ends the run while a task runs: the run fails, the task is let go; the next run reports it lost, once", async () => {
    const limited = restateAgentClient({ url: cluster.server.ingressUrl, name: "taskDepthLimit" });
    const tag = "fail limit";
    cluster.hold("task-fail-limit-scan-1");
    const failed = await limited.run(tag, { message: tag }).catch((error: unknown) => error);
    expect(isRestateAgentError(failed) && failed.message).toMatch(/maxIterations|iterations/i);
    expect(await limited.status(tag)).toMatchObject({ state: "failed" });
    expectEveryCallAnsweredOnce(await limited.session(tag));
    expect(await limited.tasks(tag)).toMatchObject([{ name: "scan", status: "running", delivered: false }]);
    cluster.release("task-fail-limit-scan-1");
    expect(await limited.run(tag, { message: "go on" })).toStrictEqual({
      outcome: "done",
      response: `Done with ${tag}.`,
    });
    const session = await limited.session(tag);
    expectEveryCallAnsweredOnce(session);
    expectDeliveredOnce(session);
    expect(await limited.tasks(tag)).toMatchObject([{ name: "scan", status: "lost", delivered: true }]);
    // The failed run aborted the handler: it never finished.
    expect(cluster.effects().get(`scan ${tag} start 1`)).toBe(1);
    expect(cluster.effects().get(`scan ${tag} done 1`)).toBeUndefined();
  }, 120_000);

  it("a task settled and delivered before the failing model call is not delivered again by the next run", async () => {
    const tag = "fail quick";
    const failed = await client.run(tag, { message: tag }).catch((error: unknown) => error);
    expect(isRestateAgentError(failed) && failed.message).toContain("model overloaded");
    const after = await client.session(tag);
    expectEveryCallAnsweredOnce(after);
    expectDeliveredOnce(after);
    expect(await client.run(tag, { message: "go on" })).toStrictEqual({
      outcome: "done",
      response: `Done with ${tag}.`,
    });
    const session = await client.session(tag);
    expectEveryCallAnsweredOnce(session);
    expectDeliveredOnce(session);
    expect(await client.tasks(tag)).toMatchObject([
      { name: "quick", status: "completed", attempt: 1, delivered: true },
    ]);
    expect(cluster.effects().get(`quick ${tag} start 1`)).toBe(1);
  }, 240_000);
});

describe("restateAgent: an approval pause while a task runs", () => {
  it("the task finishes during the pause; after resolveApproval its outcome is delivered once", async () => {
    const tag = "approval plain";
    cluster.hold("task-approval-plain-rebuild-1");
    const { invocationId } = await client.start(tag, { message: tag });
    await waitPaused(client, tag);
    cluster.release("task-approval-plain-rebuild-1");
    await waitFor(
      () => cluster.effects().get(`rebuild ${tag} done 1`) === 1,
      30_000,
      () => "the task did not finish",
    );
    expect(await client.resolveApproval(tag, `ship-approval-plain`, { approved: true })).toStrictEqual({
      resolved: ["ship-approval-plain"],
    });
    expect(await client.attach(invocationId)).toStrictEqual({ outcome: "done", response: `Done with ${tag}.` });
    const session = await client.session(tag);
    expectEveryCallAnsweredOnce(session);
    expectDeliveredOnce(session);
    expect(await client.tasks(tag)).toMatchObject([{ name: "rebuild", status: "completed", attempt: 1 }]);
    expect(resultOf(session, "ship-approval-plain").output).toBe("shipped to prod");
  }, 120_000);

  for (const form of ["loop", "agents"] as const)
    it(`the task finishes during the pause, then every worker is SIGKILLed: its outcome is kept, not run again, delivered once (${form})`, async () => {
      const target = form === "loop" ? client : agentsClient;
      const tag = form === "loop" ? "approval kill" : "approval kill agents";
      const slug = tag.replaceAll(" ", "-");
      cluster.hold(`task-${slug}-rebuild-1`);
      const { invocationId } = await target.start(tag, { message: tag });
      await waitPaused(target, tag);
      cluster.release(`task-${slug}-rebuild-1`);
      // The outcome is recorded during the pause (the record in the state says completed).
      await waitFor(
        async () => (await target.tasks(tag))[0]?.status === "completed",
        30_000,
        () => "the task's outcome was not recorded during the pause",
      );
      for (const worker of [...cluster.workers]) await cluster.killWorker(worker.pid);
      await cluster.addWorker();
      expect(await target.resolveApproval(tag, `ship-${slug}`, { approved: true })).toStrictEqual({
        resolved: [`ship-${slug}`],
      });
      expect(await target.attach(invocationId)).toMatchObject({ outcome: "done", response: `Done with ${tag}.` });
      const session = await target.session(tag);
      expectEveryCallAnsweredOnce(session);
      expectDeliveredOnce(session);
      expect(await target.tasks(tag)).toMatchObject([
        { name: "rebuild", status: "completed", attempt: 1, output: "rebuild finished (attempt 1)" },
      ]);
      expect(cluster.effects().get(`rebuild ${tag} start 1`)).toBe(1);
      expect(cluster.effects().get(`rebuild ${tag} start 2`)).toBeUndefined();
    }, 240_000);
});

describe("restateAgent: toolOutput guardrails on a task's outcome", () => {
  it("a blocked outcome is delivered as the guardrail's replacement: never in the session or the object's state", async () => {
    const tag = "guard leak";
    expect(await client.run(tag, { message: tag })).toStrictEqual({ outcome: "done", response: `Done with ${tag}.` });
    const session = await client.session(tag);
    expectEveryCallAnsweredOnce(session);
    expectDeliveredOnce(session);
    expect(deliveries(session)[0]!.content).toContain("[blocked by vault]");
    expect(await client.tasks(tag)).toMatchObject([{ name: "leak", status: "failed", isError: true }]);
    expect(JSON.stringify(session)).not.toContain("SECRET");
    expect(await client.export(tag)).not.toContain("SECRET");
    const state = await cluster.server.query(
      `SELECT key, value_utf8 FROM state WHERE service_name = 'taskDepth' AND service_key = '${tag}'`,
    );
    expect(state.length).toBeGreaterThan(0);
    expect(JSON.stringify(state)).not.toContain("SECRET");
    expect(JSON.stringify(state)).toContain("[blocked by vault]");
  }, 120_000);

  it("across a worker SIGKILL after the verdict, the replay blocks the same outcome without asking the guardrail again", async () => {
    const tag = "guard crash";
    const blocks = cluster.effects().get("vault block") ?? 0;
    cluster.hold("model-guard-crash-delivered");
    const { invocationId } = await client.start(tag, { message: tag });
    const killed = await cluster.waitAt("model-guard-crash-delivered");
    expect(cluster.effects().get("vault block")).toBe(blocks + 1);
    await cluster.killWorker(killed);
    await cluster.addWorker();
    cluster.release("model-guard-crash-delivered");
    expect(await client.attach(invocationId)).toStrictEqual({ outcome: "done", response: `Done with ${tag}.` });
    const session = await client.session(tag);
    expectEveryCallAnsweredOnce(session);
    expectDeliveredOnce(session);
    expect(deliveries(session)[0]!.content).toContain("[blocked by vault]");
    expect(JSON.stringify(session)).not.toContain("SECRET");
    expect(cluster.effects().get("vault block")).toBe(blocks + 1);
  }, 240_000);
});

describe("restateAgent: a background subagent's spending", () => {
  it("counts against the run's budget: the subagent stops within it (not at its 30 iterations), and the run fails on it", async () => {
    const tag = "spend research";
    const failed = await client.run(tag, { message: tag }).catch((error: unknown) => error);
    expect(isRestateAgentError(failed) && failed.message).toContain("used up budget.usd (0.06)");
    const calls = cluster.effects().get(`research ${tag} call`) ?? 0;
    expect(calls).toBeGreaterThanOrEqual(5);
    expect(calls).toBeLessThanOrEqual(7);
    expectEveryCallAnsweredOnce(await client.session(tag));
    // The next run (a budget of its own) finds the task's outcome or lets it go; each delivered once.
    expect(await client.run(tag, { message: "go on" })).toMatchObject({ outcome: "done" });
    const session = await client.session(tag);
    expectEveryCallAnsweredOnce(session);
    expectDeliveredOnce(session);
    expect(cluster.effects().get(`research ${tag} call`)).toBe(calls);
  }, 120_000);

  it("a replay after a worker SIGKILL charges what the subagent spent once: the run stays within its budget", async () => {
    const tag = "spend brief";
    cluster.hold("model-spend-brief-delivered");
    const { invocationId } = await client.start(tag, { message: tag });
    const killed = await cluster.waitAt("model-spend-brief-delivered");
    await cluster.killWorker(killed);
    await cluster.addWorker();
    cluster.release("model-spend-brief-delivered");
    // $0.04 of a $0.06 budget: charged twice by the replay, the next model call would be refused.
    expect(await client.attach(invocationId)).toStrictEqual({ outcome: "done", response: `Done with ${tag}.` });
    const session = await client.session(tag);
    expectEveryCallAnsweredOnce(session);
    expectDeliveredOnce(session);
    expect(cluster.effects().get(`research ${tag} call`)).toBe(4);
    const [task] = await client.tasks(tag);
    expect(task).toMatchObject({ name: "research", status: "completed", attempt: 1 });
    expect(resultOf(session, "research-spend-brief").subagentUsage).toStrictEqual([
      { model: "cheap", calls: 4, usage: { inputTokens: 4_000, outputTokens: 0 } },
    ]);
  }, 240_000);
});

async function waitPaused(target: RestateAgentClient, tag: string): Promise<void> {
  await waitFor(
    async () => (await target.status(tag).catch(() => undefined))?.state === "paused",
    30_000,
    () => `${tag} never paused`,
  );
}

function resultOf(session: Session, id: string): ToolResultMessage {
  const found = session.messages.find(
    (message): message is ToolResultMessage => "type" in message && message.type === "tool_result" && message.id === id,
  );
  if (found === undefined) throw new Error(`no result of ${id}`);
  return found;
}
