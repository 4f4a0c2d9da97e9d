import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isRestateAgentError, restateAgentClient, type RestateAgentClient } from "simple-agent-loop/restate";
import { expectEveryCallAnsweredOnce } from "../helpers.ts";
import { startCluster, type Cluster } from "./cluster.ts";
import { waitFor } from "./restate-server.ts";
import { deliveries, expectDeliveredOnce } from "./task-deliveries.ts";

// Background tasks under Restate, on a real restate-server with worker processes (tasks-script.ts):
// a task's start, settling and delivery are journaled, so a worker SIGKILLed while tasks run
// leaves a run that another worker finishes, each outcome delivered exactly once.
let cluster: Cluster;
let client: RestateAgentClient;
beforeAll(async () => {
  cluster = await startCluster();
  client = restateAgentClient({ url: cluster.server.ingressUrl, name: "tasks" });
}, 120_000);
afterAll(async () => {
  await cluster?.stop();
}, 60_000);

describe("restateAgent: background tasks", () => {
  it("a task's outcome is delivered once, after the model's answer, and listed by the tasks handler", async () => {
    const tag = "plain rebuild";
    expect(await client.run(tag, { message: tag })).toStrictEqual({ outcome: "done", response: `Done with ${tag}.` });
    const session = await client.session(tag);
    expectEveryCallAnsweredOnce(session);
    expectDeliveredOnce(session);
    const [task] = await client.tasks(tag);
    expect(task).toMatchObject({
      name: "rebuild",
      status: "completed",
      delivered: true,
      attempt: 1,
      output: "rebuild finished (attempt 1)",
    });
    expect(task!.id).toMatch(/^task_[0-9a-f-]{36}$/);
    expect(deliveries(session)[0]!.content).toBe(
      `[background task ${task!.id} (rebuild) completed]\nrebuild finished (attempt 1)`,
    );
    expect(cluster.effects().get(`rebuild ${tag} start 1`)).toBe(1);
  }, 120_000);

  it("cancelTask aborts a running task; the run records it cancelled with the reason and delivers it once", async () => {
    const tag = "cancel watch";
    const { invocationId } = await client.start(tag, { message: tag });
    // In the background: the model answers while the task runs (the run then waits for it).
    await waitFor(
      async () => {
        const session = await client.session(tag).catch(() => undefined);
        return session?.messages.some((message) => "role" in message && message.role === "assistant") === true;
      },
      30_000,
      () => "the model did not answer while the task ran",
    );
    expect((await client.tasks(tag)).map((task) => task.status)).toStrictEqual(["running"]);
    // The task is listed (and cancellable) once the run has written it.
    let cancelled: Awaited<ReturnType<RestateAgentClient["cancelTask"]>> | undefined;
    await waitFor(
      async () => {
        const [task] = await client.tasks(tag).catch(() => []);
        if (task === undefined) return false;
        cancelled = await client.cancelTask(tag, task.id, "not needed").catch((error: unknown) => {
          if (isRestateAgentError(error) && error.status === 409) return undefined;
          throw error;
        });
        return cancelled !== undefined;
      },
      30_000,
      () => "the watch task was never cancellable",
    );
    expect(cancelled).toMatchObject({ name: "watch", status: "running" });
    expect(await client.attach(invocationId)).toStrictEqual({ outcome: "done", response: `Done with ${tag}.` });
    const session = await client.session(tag);
    expectDeliveredOnce(session);
    const [task] = await client.tasks(tag);
    expect(task).toMatchObject({ status: "cancelled", delivered: true, output: "The task was cancelled: not needed." });
    // Settled: returned unchanged. Unknown: 404.
    expect(await client.cancelTask(tag, task!.id, "again")).toStrictEqual(task);
    const unknown = await client.cancelTask(tag, "task_nope").catch((error: unknown) => error);
    expect(isRestateAgentError(unknown) && unknown.status).toBe(404);
    const malformed = await client.cancelTask(tag, "").catch((error: unknown) => error);
    expect(isRestateAgentError(malformed) && malformed.status).toBe(400);
  }, 120_000);

  it("a worker SIGKILLed while a rerun and a lost task run: another finishes the run, the rerun task once more, each outcome delivered once", async () => {
    const tag = "crash rebuild deploy";
    const held = tag.replaceAll(" ", "-");
    cluster.hold(`task-${held}-rebuild-1`);
    cluster.hold(`task-${held}-deploy-1`);
    const tasksClient = restateAgentClient({ url: cluster.server.ingressUrl, name: "tasks" });
    const { invocationId } = await tasksClient.start(tag, { message: tag });
    const killed = await cluster.waitAt(`task-${held}-rebuild-1`);
    expect(await cluster.waitAt(`task-${held}-deploy-1`)).toBe(killed);
    // Both starts are stored by the server (not only run by the worker) before the kill.
    await cluster.waitForSteps(
      invocationId,
      (names) => names.filter((name) => /^task task_\S+ start 1$/.test(name)).length === 2,
      "the tasks' starts",
    );
    await cluster.killWorker(killed);
    await cluster.addWorker();
    expect(await client.attach(invocationId)).toStrictEqual({ outcome: "done", response: `Done with ${tag}.` });
    const session = await client.session(tag);
    expectEveryCallAnsweredOnce(session);
    expectDeliveredOnce(session);
    const tasks = await client.tasks(tag);
    expect(tasks.map(({ name, status, attempt, delivered }) => ({ name, status, attempt, delivered }))).toStrictEqual([
      { name: "rebuild", status: "completed", attempt: 2, delivered: true },
      { name: "deploy", status: "lost", attempt: 1, delivered: true },
    ]);
    expect(tasks[0]!.output).toBe("rebuild finished (attempt 2)");
    const lost = deliveries(session).find((message) => message.deliversTask === tasks[1]!.id);
    expect(lost?.content).toContain("outcome is unknown");
    const effects = cluster.effects();
    // Attempt 1 of each started once and never finished (killed); the rerun ran once, to its end.
    expect(effects.get(`rebuild ${tag} start 1`)).toBe(1);
    expect(effects.get(`rebuild ${tag} done 1`)).toBeUndefined();
    expect(effects.get(`rebuild ${tag} start 2`)).toBe(1);
    expect(effects.get(`rebuild ${tag} done 2`)).toBe(1);
    expect(effects.get(`deploy ${tag} start 1`)).toBe(1);
    expect(effects.get(`deploy ${tag} done 1`)).toBeUndefined();
    expect(effects.get(`deploy ${tag} start 2`)).toBeUndefined();
  }, 240_000); // a worker process started, Restate's retry and a replay
});
