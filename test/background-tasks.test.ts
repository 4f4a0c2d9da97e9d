import { describe, expect, it } from "vitest";
import {
  agentLoop,
  agentStream,
  backgroundTasks,
  cancelTask,
  initSession,
  isAgentError,
  isTimeoutError,
  onSessionChange,
  taskTools,
  tool,
  waitForTask,
  type AgentEvent,
  type JsonObject,
  type Message,
  type Session,
  type SessionChange,
  type ToolResultMessage,
  type UserMessage,
} from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import { expectEveryCallAnsweredOnce, sleep } from "./helpers.ts";
import { deliveries, gate } from "./task-fixtures.ts";

const inputSchema: JsonObject = { type: "object", properties: { path: { type: "string" } }, required: ["path"] };

function results(session: Session): ToolResultMessage[] {
  return session.messages.filter(
    (message): message is ToolResultMessage => "type" in message && message.type === "tool_result",
  );
}

describe("background tasks: starting", () => {
  it("answers a task call at once with a running result carrying the task record, and delivers the outcome once", async () => {
    const done = gate<string>();
    const seen: unknown[] = [];
    const build = tool({
      name: "build",
      description: "Builds.",
      inputSchema,
      background: true,
      handler: async (input, context) => {
        seen.push({ input, task: context.task });
        return await done.promise;
      },
    });
    const views: Message[][] = [];
    const model = scriptedModel([
      [{ type: "tool_call", id: "c1", name: "build", input: { path: "." } }],
      (session) => {
        views.push(structuredClone(session.messages));
        setTimeout(() => done.resolve("built 3 files"), 20);
        return [{ role: "assistant", content: "Started the build." }];
      },
      (session) => {
        views.push(structuredClone(session.messages));
        return [{ role: "assistant", content: "The build is done." }];
      },
    ]);
    const session = initSession("sys", "build it");
    const events: AgentEvent[] = [];
    await agentLoop(model, [build], session, { onEvent: (event) => events.push(event) });

    const [result] = results(session);
    const id = result!.task!.id;
    expect(id).toMatch(/^task_/);
    expect(result!.output).toStrictEqual({ task: id, status: "running", note: expect.stringContaining("wait_task") });
    expect(result!.task).toMatchObject({
      id,
      status: "completed",
      onRestart: "lost",
      attempt: 1,
      output: "built 3 files",
    });
    expect(typeof result!.task!.settledAt).toBe("string");
    expect(seen).toStrictEqual([{ input: { path: "." }, task: { id, attempt: 1 } }]);
    // The second call saw the running result; the third the delivery.
    expect(views[0]!.at(-1)).toMatchObject({ type: "tool_result", id: "c1", output: { status: "running" } });
    const delivered = deliveries(session);
    expect(delivered).toHaveLength(1);
    expect(delivered[0]).toMatchObject({
      role: "user",
      content: `[background task ${id} (build) completed]\nbuilt 3 files`,
      deliversTask: id,
    });
    expect(views[1]!.at(-1)).toMatchObject({ role: "user", deliversTask: id });
    expect(events.filter((event) => event.type.startsWith("task-"))).toMatchObject([
      { type: "task-start", id, callId: "c1", name: "build" },
      { type: "task-settled", id, status: "completed" },
    ]);
    expect(JSON.parse(JSON.stringify(session))).toStrictEqual(session);
    expectEveryCallAnsweredOnce(session);
  });

  it("writes the settled record as an update change with reason task", async () => {
    const build = tool({
      name: "build",
      description: "Builds.",
      inputSchema,
      background: true,
      handler: async () => {
        await sleep(10);
        return "ok";
      },
    });
    const session = initSession("sys", "go");
    const changes: SessionChange[] = [];
    onSessionChange(session, (change) => changes.push(structuredClone(change)));
    await agentLoop(
      scriptedModel([
        [{ type: "tool_call", id: "c1", name: "build", input: { path: "." } }],
        [{ role: "assistant", content: "waiting" }],
        [{ role: "assistant", content: "done" }],
      ]),
      [build],
      session,
    );
    const updates = changes.filter((change) => change.type === "update");
    expect(updates).toHaveLength(1);
    expect(updates[0]).toMatchObject({
      type: "update",
      reason: "task",
      message: { type: "tool_result", task: { status: "completed" } },
    });
  });

  it("when: asked shows run_in_background, strips it before validation, and runs other calls as before", async () => {
    const inputs: unknown[] = [];
    const lint = tool({
      name: "lint",
      description: "Lints.",
      inputSchema: {
        type: "object",
        properties: { path: { type: "string" } },
        required: ["path"],
        additionalProperties: false,
      },
      background: { when: "asked", onRestart: "rerun" },
      handler: (input) => {
        inputs.push(input);
        return "clean";
      },
    });
    const invoke = scriptedModel([
      () => {
        return [
          { type: "tool_call", id: "c1", name: "lint", input: { path: "a", run_in_background: true } },
          { type: "tool_call", id: "c2", name: "lint", input: { path: "b", run_in_background: false } },
          { type: "tool_call", id: "c3", name: "lint", input: { path: "c" } },
        ];
      },
      [{ role: "assistant", content: "ok" }],
      [{ role: "assistant", content: "ok" }],
    ]);
    const session = initSession("sys", "lint");
    await agentLoop(invoke, [lint], session);
    const shown = invoke.toolsSeen[0]!.find((schema) => schema.name === "lint")?.input_schema;
    expect(invoke.toolsSeen[0]!.find((schema) => schema.name === "lint")).not.toHaveProperty("background");
    expect(shown).toMatchObject({ properties: { run_in_background: { type: "boolean" } } });
    expect(
      [...inputs].sort((x, y) => ((x as { path: string }).path < (y as { path: string }).path ? -1 : 1)),
    ).toStrictEqual([{ path: "a" }, { path: "b" }, { path: "c" }]);
    const [first, second, third] = results(session);
    expect(first!.task).toMatchObject({ status: "completed", onRestart: "rerun" });
    expect(second).toMatchObject({ output: "clean" });
    expect(second!.task).toBeUndefined();
    expect(third!.task).toBeUndefined();
  });

  it("a call that is invalid, denied or waiting for approval never becomes a task", async () => {
    let runs = 0;
    const build = tool({
      name: "build",
      description: "Builds.",
      inputSchema,
      background: true,
      handler: () => {
        runs++;
        return "ok";
      },
    });
    const session = initSession("sys", "go");
    await agentLoop(
      scriptedModel([
        [
          { type: "tool_call", id: "bad", name: "build", input: { path: 3 } },
          { type: "tool_call", id: "denied", name: "build", input: { path: "x" } },
        ],
        [{ role: "assistant", content: "fine" }],
      ]),
      [build],
      session,
      { hooks: { beforeToolCall: ({ call }) => (call.id === "denied" ? { deny: "no" } : undefined) } },
    );
    expect(runs).toBe(0);
    expect(results(session).map((result) => [result.isError, result.task])).toStrictEqual([
      [true, undefined],
      [true, undefined],
    ]);
    expect(backgroundTasks(session)).toStrictEqual([]);

    const gated = tool({ ...build, name: "deploy", requireApproval: true, handler: build.handler, background: true });
    const paused = initSession("sys", "deploy");
    await agentLoop(
      scriptedModel([[{ type: "tool_call", id: "d1", name: "deploy", input: { path: "." } }]]),
      [gated],
      paused,
    );
    expect(runs).toBe(0);
    expect(backgroundTasks(paused)).toStrictEqual([]);
  });

  it("refuses a bad background option with an AgentError naming it", () => {
    const base = { name: "t", description: "d", inputSchema, handler: () => "x" };
    for (const background of [
      "yes",
      { when: "sometimes" },
      { onRestart: "maybe" },
      1,
      null,
      { when: "always", extra: 1 },
    ]) {
      let thrown: unknown;
      try {
        tool({ ...base, background: background as never });
      } catch (error) {
        thrown = error;
      }
      expect(isAgentError(thrown), JSON.stringify(background)).toBe(true);
      expect(String((thrown as Error).message)).toContain('tool "t": background');
    }
    // A bare schema is checked at run start.
    const schema = {
      name: "bare",
      description: "d",
      input_schema: { type: "object" },
      background: { onRestart: "maybe" },
    };
    return expect(
      agentLoop(scriptedModel([]), [schema as never], initSession("s", "u"), { toolHandlers: { bare: () => "" } }),
    ).rejects.toThrow(/tool "bare": background.onRestart/);
  });

  it("refuses a bad backgroundTasks run option with an AgentError naming it", async () => {
    for (const backgroundTasks of [{ whenIdle: "later" }, { onTaskSettled: 3 }, "end"]) {
      await expect(
        agentLoop(scriptedModel([]), [], initSession("s", "u"), { backgroundTasks: backgroundTasks as never }),
      ).rejects.toThrow(/backgroundTasks/);
    }
  });
});

describe("background tasks: outcome and idle", () => {
  it("whenIdle wait: a final answer while a task runs waits for it, then delivers and calls the model again", async () => {
    const build = tool({
      name: "build",
      description: "Builds.",
      inputSchema,
      background: true,
      handler: async () => {
        await sleep(50);
        throw new Error("compile error in a.ts");
      },
    });
    const session = initSession("sys", "go");
    await agentLoop(
      scriptedModel([
        [{ type: "tool_call", id: "c1", name: "build", input: { path: "." } }],
        [{ role: "assistant", content: "It runs." }],
        [{ role: "assistant", content: "It failed." }],
      ]),
      [build],
      session,
    );
    const [result] = results(session);
    expect(result!.task).toMatchObject({ status: "failed", isError: true, output: "Error: compile error in a.ts" });
    expect(deliveries(session)).toMatchObject([
      { content: expect.stringContaining(") failed]\nError: compile error in a.ts") },
    ]);
    expect(session.messages.at(-1)).toMatchObject({ role: "assistant", content: "It failed." });
  });

  it("whenIdle end: the run ends done with runningTasks, the outcome is recorded as it comes and delivered by the next run", async () => {
    const done = gate<string>();
    const build = tool({
      name: "build",
      description: "Builds.",
      inputSchema,
      background: true,
      handler: () => done.promise,
    });
    const session = initSession("sys", "go");
    const settled: unknown[] = [];
    const events: AgentEvent[] = [];
    await agentLoop(
      scriptedModel([
        [{ type: "tool_call", id: "c1", name: "build", input: { path: "." } }],
        [{ role: "assistant", content: "It runs." }],
      ]),
      [build],
      session,
      {
        backgroundTasks: {
          whenIdle: "end",
          onTaskSettled: (task, settledSession) => {
            // The record is written when the hook hears of it.
            settled.push([task.status, results(settledSession)[0]!.task!.status]);
          },
        },
        onEvent: (event) => events.push(event),
      },
    );
    const id = results(session)[0]!.task!.id;
    expect(events.at(-1)).toMatchObject({ type: "run-end", outcome: "done", runningTasks: [id] });
    expect(backgroundTasks(session)).toMatchObject([{ id, status: "running", delivered: false }]);
    done.resolve("green");
    await waitForTask(session, id);
    expect(settled).toStrictEqual([["completed", "completed"]]);
    expect(deliveries(session)).toStrictEqual([]);

    const asked: Message[][] = [];
    await agentLoop(
      scriptedModel([
        (seen) => {
          asked.push(structuredClone(seen.messages));
          return [{ role: "assistant", content: "Green." }];
        },
      ]),
      [build],
      session,
    );
    expect(asked[0]!.at(-1)).toMatchObject({ role: "user", deliversTask: id });
    expect(deliveries(session)).toHaveLength(1);
    expect(backgroundTasks(session)).toMatchObject([{ id, status: "completed", delivered: true, output: "green" }]);
  });

  it("an abort of the run cancels its running tasks (their signal aborts; recorded cancelled)", async () => {
    let aborted = false;
    const build = tool({
      name: "build",
      description: "Builds.",
      inputSchema,
      background: true,
      handler: (_input, context) =>
        new Promise((_resolve, reject) => {
          context.signal.addEventListener("abort", () => {
            aborted = true;
            reject(context.signal.reason);
          });
        }),
    });
    const session = initSession("sys", "go");
    const stream = agentStream(
      scriptedModel([
        [{ type: "tool_call", id: "c1", name: "build", input: { path: "." } }],
        [{ role: "assistant", content: "It runs." }],
      ]),
      [build],
      session,
    );
    const ends: AgentEvent[] = [];
    for await (const event of stream) {
      if (event.type === "turn-end" && event.iteration === 2) setTimeout(() => stream.abort(), 10);
      if (event.type === "run-end") ends.push(event);
    }
    expect(ends).toMatchObject([{ outcome: "aborted" }]);
    expect(aborted).toBe(true);
    expect(backgroundTasks(session)).toMatchObject([{ status: "cancelled" }]);
    expectEveryCallAnsweredOnce(session);
  });
});

describe("background tasks: control", () => {
  it("waitForTask times out with a TimeoutError and the task goes on; cancelTask cancels, drops a late value, and leaves a settled task as it is", async () => {
    const done = gate<string>();
    const build = tool({
      name: "build",
      description: "Builds.",
      inputSchema,
      background: true,
      handler: () => done.promise,
    });
    const session = initSession("sys", "go");
    await agentLoop(
      scriptedModel([
        [
          { type: "tool_call", id: "c1", name: "build", input: { path: "a" } },
          { type: "tool_call", id: "c2", name: "build", input: { path: "b" } },
        ],
        [{ role: "assistant", content: "runs" }],
      ]),
      [build],
      session,
      { backgroundTasks: { whenIdle: "end" } },
    );
    const [first, second] = backgroundTasks(session);
    const timedOut = await waitForTask(session, first!.id, { timeoutMs: 20 }).catch((error: unknown) => error);
    expect(isTimeoutError(timedOut)).toBe(true);
    expect(backgroundTasks(session)[0]!.status).toBe("running");

    const cancelled = cancelTask(session, first!.id, "not needed");
    expect(cancelled).toMatchObject({ id: first!.id, status: "cancelled" });
    done.resolve("late");
    const settled = await waitForTask(session, second!.id);
    expect(settled).toMatchObject({
      status: "completed",
      output: "late",
      input: { path: "b" },
      name: "build",
      callId: "c2",
    });
    await sleep(5);
    expect(backgroundTasks(session)[0]).toMatchObject({ status: "cancelled" });
    expect(cancelTask(session, second!.id)).toStrictEqual(settled);
    expect(() => cancelTask(session, "task_nope")).toThrow(/task_nope/);
    await expect(waitForTask(session, "task_nope")).rejects.toThrow(/task_nope/);
  });

  it("taskTools: check_task shows status without output, wait_task gives the outcome as its result (deliversTask, no message after), cancel_task; unknown ids are error results", async () => {
    const build = tool({
      name: "build",
      description: "Builds.",
      inputSchema,
      background: true,
      handler: async () => {
        await sleep(30);
        return "secret output";
      },
    });
    let id = "";
    const session = initSession("sys", "go");
    await agentLoop(
      scriptedModel([
        [{ type: "tool_call", id: "c1", name: "build", input: { path: "." } }],
        (seen) => {
          id = results(seen)[0]!.task!.id;
          return [
            { type: "tool_call", id: "k1", name: "check_task", input: { id } },
            { type: "tool_call", id: "k2", name: "check_task", input: { id: "task_unknown" } },
            { type: "tool_call", id: "k3", name: "cancel_task", input: { id: "task_unknown" } },
          ];
        },
        () => [{ type: "tool_call", id: "w1", name: "wait_task", input: { id, timeoutSeconds: 30 } }],
        [{ role: "assistant", content: "done" }],
      ]),
      [build, ...taskTools()],
      session,
    );
    const byId = new Map(results(session).map((result) => [result.id, result]));
    expect(byId.get("k1")!.output).toMatchObject({ id, name: "build", status: "running" });
    expect(JSON.stringify(byId.get("k1")!.output)).not.toContain("secret");
    expect(byId.get("k2")).toMatchObject({ isError: true, output: expect.stringContaining("task_unknown") });
    expect(byId.get("k3")).toMatchObject({ isError: true });
    expect(byId.get("w1")).toMatchObject({ deliversTask: id, output: expect.stringContaining("secret output") });
    expect(deliveries(session)).toHaveLength(1);
    expect(session.messages.filter((message) => "role" in message && message.role === "user")).toHaveLength(1);
  });
});

// Keeps the type import used where a test needs only the shape.
export type { UserMessage };
