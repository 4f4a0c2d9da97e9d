import { describe, expect, it } from "vitest";
import {
  agentLoop,
  backgroundTasks,
  executeToolCalls,
  initSession,
  waitForTask,
  type AgentEvent,
  type Session,
  type ToolResultMessage,
} from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import { buildTool, gate } from "./task-fixtures.ts";
import { runningTaskCount } from "../src/tools/task-registry.ts";

function startThenAnswer() {
  return scriptedModel([
    [{ type: "tool_call", id: "c1", name: "build", input: {} }],
    [{ role: "assistant", content: "It runs." }],
    [{ role: "assistant", content: "Done." }],
  ]);
}

function taskId(session: Session): string {
  const result = session.messages.find(
    (message): message is ToolResultMessage => "type" in message && message.type === "tool_result",
  );
  return result!.task!.id;
}

describe("background tasks: how long this process holds them", () => {
  it("many runs whose tasks settle after the run ended hold nothing once the tasks settled (whenIdle end, wait, plain executeToolCalls)", async () => {
    const before = runningTaskCount();
    const gates: { resolve: (value: string) => void }[] = [];
    const sessions: Session[] = [];
    for (let index = 0; index < 60; index++) {
      const done = gate();
      gates.push(done);
      const session = initSession("sys", "go");
      await agentLoop(startThenAnswer(), [buildTool(() => done.promise)], session, {
        backgroundTasks: { whenIdle: "end" },
      });
      sessions.push(session);
    }
    // Running: held, as they must be (their handlers run here).
    expect(runningTaskCount()).toBe(before + 60);
    for (const done of gates) done.resolve("ok");
    await Promise.all(sessions.map((session) => waitForTask(session, taskId(session))));
    // Settled with nobody to deliver to: nothing is held for them beyond their sessions.
    expect(runningTaskCount()).toBe(before);

    for (let index = 0; index < 30; index++)
      await agentLoop(startThenAnswer(), [buildTool(async () => "ok")], initSession("sys", "go"), {});
    expect(runningTaskCount()).toBe(before);

    const results = await executeToolCalls(
      [{ type: "tool_call", id: "x1", name: "build", input: {} }],
      {},
      {
        tools: [buildTool(async () => "ok")],
      },
    );
    expect(results[0]!.task?.status).toBe("running");
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(runningTaskCount()).toBe(before);
  });

  it("a settled task is still delivered once by the next run on its session, and by a run on a copy loaded before it settled", async () => {
    const done = gate();
    const session = initSession("sys", "go");
    await agentLoop(startThenAnswer(), [buildTool(() => done.promise)], session, {
      backgroundTasks: { whenIdle: "end" },
    });
    const id = taskId(session);
    // A copy loaded while the task ran (its log says running).
    const copy = JSON.parse(JSON.stringify(session)) as Session;
    done.resolve("built");
    await waitForTask(session, id);
    expect(runningTaskCount()).toBe(0);

    const events: AgentEvent[] = [];
    await agentLoop(scriptedModel([[{ role: "assistant", content: "Seen." }]]), [], copy, {
      onEvent: (event) => events.push(event),
    });
    // Taken over, not treated as lost: the outcome itself, once, and the copy's record says so.
    expect(events.filter((event) => event.type === "task-resume")).toStrictEqual([]);
    const delivered = copy.messages.filter((message) => "deliversTask" in message && message.deliversTask === id);
    expect(delivered).toMatchObject([{ role: "user", content: expect.stringContaining("completed]\nbuilt") }]);
    expect(backgroundTasks(copy)).toMatchObject([{ id, status: "completed", delivered: true }]);

    // The original object is another copy now: its log has the outcome and no delivery, so its
    // next run delivers it from the log, once there too.
    await agentLoop(
      scriptedModel([[{ role: "assistant", content: "Seen." }]]),
      [buildTool(() => done.promise)],
      session,
    );
    const again = session.messages.filter((message) => "deliversTask" in message && message.deliversTask === id);
    expect(again).toHaveLength(1);
  });
});
