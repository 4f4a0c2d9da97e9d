import { describe, expect, it } from "vitest";
import {
  agentLoop,
  backgroundTasks,
  cancelTask,
  resumeTasks,
  tool,
  waitForTask,
  type AgentEvent,
  type Session,
  type TaskRecord,
} from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";

// A session as a store loads it after its process died: tasks recorded, none held by this process.
function crashedSession(records: TaskRecord[], delivered: string[] = []): Session {
  const messages: Session["messages"] = [
    { role: "system", content: "sys" },
    { role: "user", content: "go" },
  ];
  records.forEach((record, index) =>
    messages.push({ type: "tool_call", id: `c${index}`, name: nameOf(record), input: { target: `t${index}` } }),
  );
  records.forEach((record, index) =>
    messages.push({
      type: "tool_result",
      id: `c${index}`,
      output: { task: record.id, status: "running", note: "n" },
      task: record,
    }),
  );
  messages.push({ role: "assistant", content: "started" });
  for (const id of delivered) messages.push({ role: "user", content: `[background task ${id}]`, deliversTask: id });
  return JSON.parse(JSON.stringify({ messages })) as Session;
}

let counter = 0;
function record(fields: Partial<TaskRecord> & { onRestart: TaskRecord["onRestart"] }): TaskRecord {
  counter++;
  return {
    id: `task_resume_${counter}_${Date.now()}`,
    status: "running",
    attempt: 1,
    startedAt: "2026-01-01T00:00:00.000Z",
    ...fields,
  };
}

const nameOf = (record: TaskRecord): string => (record.onRestart === "rerun" ? "rebuild" : "deploy");

function tools(starts: unknown[]) {
  const make = (name: string, onRestart: "rerun" | "lost") =>
    tool({
      name,
      description: name,
      inputSchema: { type: "object", properties: { target: { type: "string" } } },
      background: { onRestart },
      handler: (input, context) => {
        starts.push({ name, input, task: context.task });
        return `${name} ok`;
      },
    });
  return [make("rebuild", "rerun"), make("deploy", "lost")];
}

describe("background tasks after a restart", () => {
  it("a run applies onRestart before its first model call: rerun (same id and input, attempt 2), lost (reported), settled (delivered), delivered (left alone)", async () => {
    const rerun = record({ onRestart: "rerun" });
    const lost = record({ onRestart: "lost" });
    const settled = record({
      onRestart: "lost",
      status: "completed",
      settledAt: "2026-01-01T00:00:01.000Z",
      output: "fine",
    });
    const delivered = record({
      onRestart: "rerun",
      status: "failed",
      output: "Error: x",
      isError: true,
      settledAt: "2026-01-01T00:00:01.000Z",
    });
    const session = crashedSession([rerun, lost, settled, delivered], [delivered.id]);
    const starts: unknown[] = [];
    const events: AgentEvent[] = [];
    const model = scriptedModel([
      [{ role: "assistant", content: "noted" }],
      [{ role: "assistant", content: "noted again" }],
    ]);
    await agentLoop(model, tools(starts), session, { onEvent: (event) => events.push(event) });

    expect(starts).toStrictEqual([{ name: "rebuild", input: { target: "t0" }, task: { id: rerun.id, attempt: 2 } }]);
    expect(events.filter((event) => event.type === "task-resume")).toStrictEqual([
      { type: "task-resume", id: rerun.id, action: "rerun" },
      { type: "task-resume", id: lost.id, action: "lost" },
      { type: "task-resume", id: settled.id, action: "deliver" },
    ]);
    // The first model call was shown the lost and the settled outcomes.
    const first = model.calls[0]!.messages.filter((message) => "deliversTask" in message).map(
      (message) => (message as { deliversTask: string }).deliversTask,
    );
    expect(first).toEqual(expect.arrayContaining([delivered.id, lost.id, settled.id]));
    const tasks = backgroundTasks(session);
    expect(tasks.map(({ id, status, attempt, delivered: given }) => [id, status, attempt, given])).toStrictEqual([
      [rerun.id, "completed", 2, true],
      [lost.id, "lost", 1, true],
      [settled.id, "completed", 1, true],
      [delivered.id, "failed", 1, true],
    ]);
    const counts = new Map<string, number>();
    for (const message of session.messages)
      if ("deliversTask" in message) counts.set(message.deliversTask, (counts.get(message.deliversTask) ?? 0) + 1);
    expect([...counts.values()]).toStrictEqual([1, 1, 1, 1]);
  });

  it("resumeTasks does the same without a model call and says what it did", async () => {
    const rerun = record({ onRestart: "rerun" });
    const lost = record({ onRestart: "lost" });
    const session = crashedSession([rerun, lost]);
    const starts: unknown[] = [];
    expect(resumeTasks(session, tools(starts))).toStrictEqual([
      { id: rerun.id, action: "rerun" },
      { id: lost.id, action: "lost" },
    ]);
    expect(await waitForTask(session, rerun.id)).toMatchObject({
      status: "completed",
      attempt: 2,
      output: "rebuild ok",
    });
    expect(backgroundTasks(session)[1]).toMatchObject({ status: "lost", delivered: false });
    // Held by this process now: a second resume does nothing.
    expect(resumeTasks(session, tools(starts))).toStrictEqual([]);
    expect(starts).toHaveLength(1);
  });

  it("cancelTask on a task no process holds records it cancelled, and it is never rerun", async () => {
    const rerun = record({ onRestart: "rerun" });
    const session = crashedSession([rerun]);
    expect(cancelTask(session, rerun.id, "obsolete")).toMatchObject({ status: "cancelled", delivered: false });
    const starts: unknown[] = [];
    await agentLoop(scriptedModel([[{ role: "assistant", content: "ok" }]]), tools(starts), session);
    expect(starts).toStrictEqual([]);
    expect(backgroundTasks(session)).toMatchObject([{ status: "cancelled", delivered: true }]);
  });
});
