import { describe, expect, it } from "vitest";
import {
  agentLoop,
  backgroundTasks,
  resumeTasks,
  tool,
  waitForTask,
  type AgentEvent,
  type Guardrail,
  type Session,
  type TaskRecord,
  type ToolCallMessage,
} from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";

let counter = 0;

// A session as a store loads it after its process died: one rerun task recorded running, held by no process.
function crashedSession(target: string, approval?: ToolCallMessage["approval"]): { session: Session; id: string } {
  counter++;
  const id = `task_checks_${counter}_${Date.now()}`;
  const record: TaskRecord = {
    id,
    status: "running",
    onRestart: "rerun",
    attempt: 1,
    startedAt: "2026-01-01T00:00:00.000Z",
  };
  const call: ToolCallMessage = { type: "tool_call", id: "c0", name: "deploy", input: { target } };
  if (approval !== undefined) call.approval = approval;
  const session = JSON.parse(
    JSON.stringify({
      messages: [
        { role: "system", content: "sys" },
        { role: "user", content: "go" },
        call,
        { type: "tool_result", id: "c0", output: { task: id, status: "running", note: "n" }, task: record },
        { role: "assistant", content: "started" },
      ],
    }),
  ) as Session;
  return { session, id };
}

function deployTool(runs: unknown[]) {
  return tool({
    name: "deploy",
    description: "Deploys.",
    inputSchema: { type: "object", properties: { target: { type: "string" } } },
    background: { onRestart: "rerun" },
    handler: (input) => {
      runs.push(input);
      return `deployed ${input.target}`;
    },
  });
}

const noProd: Guardrail = {
  name: "no-prod",
  check: ({ text }) =>
    text?.includes("prod") === true ? { action: "block", message: "no deploys to prod" } : { action: "allow" },
};

async function resumedRun(
  session: Session,
  tools: ReturnType<typeof deployTool>[],
  options: object,
): Promise<AgentEvent[]> {
  const events: AgentEvent[] = [];
  await agentLoop(
    scriptedModel([[{ role: "assistant", content: "ok" }], [{ role: "assistant", content: "ok" }]]),
    tools,
    session,
    {
      ...options,
      onEvent: (event) => events.push(event),
    },
  );
  return events;
}

describe("background tasks: a rerun goes through the checks of a call", () => {
  it("a run's toolInput guardrail blocks a rerun: the handler never runs again, the block is recorded and delivered", async () => {
    const runs: unknown[] = [];
    const { session, id } = crashedSession("prod");
    const events = await resumedRun(session, [deployTool(runs)], { guardrails: { toolInput: [noProd] } });
    expect(runs).toStrictEqual([]);
    expect(events).toContainEqual(expect.objectContaining({ type: "task-resume", id, action: "rerun" }));
    expect(backgroundTasks(session)).toMatchObject([
      { id, status: "failed", attempt: 2, delivered: true, output: expect.stringContaining("no deploys to prod") },
    ]);
    // An allowed input reruns as before.
    const allowed = crashedSession("staging");
    await resumedRun(allowed.session, [deployTool(runs)], { guardrails: { toolInput: [noProd] } });
    expect(runs).toStrictEqual([{ target: "staging" }]);
  });

  it("a run's beforeToolCall hook and approval policy decide a rerun as they decide a call", async () => {
    const runs: unknown[] = [];
    const denied = crashedSession("staging");
    await resumedRun(denied.session, [deployTool(runs)], {
      approvalPolicy: { rules: [{ id: "no-deploys", tool: "deploy", action: "deny", reason: "frozen" }] },
    });
    expect(backgroundTasks(denied.session)[0]).toMatchObject({
      status: "failed",
      output: expect.stringContaining("frozen"),
    });

    const hooked = crashedSession("staging");
    await resumedRun(hooked.session, [deployTool(runs)], {
      hooks: { beforeToolCall: () => ({ deny: "hook says no" }) },
    });
    expect(backgroundTasks(hooked.session)[0]).toMatchObject({
      status: "failed",
      output: expect.stringContaining("hook says no"),
    });

    // A human is asked (the run's policy); a rerun that would wait for one fails, never runs unasked.
    const asked: unknown[] = [];
    const human = crashedSession("staging");
    await resumedRun(human.session, [deployTool(runs)], {
      approvalPolicy: {
        rules: [{ id: "ask", tool: "deploy", action: "ask" }],
        human: (request: { call: ToolCallMessage }) => {
          asked.push(request.call.input);
          return { approved: false, reason: "not now" };
        },
      },
    });
    expect(asked).toStrictEqual([{ target: "staging" }]);
    expect(backgroundTasks(human.session)[0]).toMatchObject({ status: "failed" });
    const paused = crashedSession("staging");
    await resumedRun(paused.session, [deployTool(runs)], {
      approvalPolicy: { rules: [{ id: "ask", tool: "deploy", action: "ask" }], human: "pause" },
    });
    expect(backgroundTasks(paused.session)[0]).toMatchObject({
      status: "failed",
      output: expect.stringContaining("approval"),
    });
    expect(runs).toStrictEqual([]);

    // Approved for this input before the crash: the decision holds, nobody is asked again.
    const approved = crashedSession("staging", {
      status: "approved",
      input: { target: "staging" },
      decidedBy: { by: "human" },
      at: "2026-01-01T00:00:00.000Z",
    });
    await resumedRun(approved.session, [deployTool(runs)], {
      approvalPolicy: { rules: [{ id: "ask", tool: "deploy", action: "ask" }], human: "pause" },
    });
    expect(runs).toStrictEqual([{ target: "staging" }]);
    expect(backgroundTasks(approved.session)[0]).toMatchObject({ status: "completed", output: "deployed staging" });
  });

  it("resumeTasks takes the same checks as options", async () => {
    const runs: unknown[] = [];
    const blocked = crashedSession("prod");
    const events: AgentEvent[] = [];
    expect(
      resumeTasks(blocked.session, [deployTool(runs)], {
        guardrails: { toolInput: [noProd] },
        onEvent: (event) => events.push(event),
      }),
    ).toStrictEqual([{ id: blocked.id, action: "rerun" }]);
    const settled = await waitForTask(blocked.session, blocked.id);
    expect(settled).toMatchObject({ status: "failed", output: expect.stringContaining("no deploys to prod") });
    expect(events).toContainEqual(expect.objectContaining({ type: "guardrail", name: "no-prod" }));

    const denied = crashedSession("staging");
    resumeTasks(denied.session, [deployTool(runs)], {
      approvalPolicy: { rules: [{ id: "no-deploys", tool: "deploy", action: "deny", reason: "frozen" }] },
    });
    expect(await waitForTask(denied.session, denied.id)).toMatchObject({ status: "failed" });
    expect(runs).toStrictEqual([]);

    const fine = crashedSession("staging");
    resumeTasks(fine.session, [deployTool(runs)], { guardrails: { toolInput: [noProd] } });
    expect(await waitForTask(fine.session, fine.id)).toMatchObject({ status: "completed" });
    expect(runs).toStrictEqual([{ target: "staging" }]);
  });

  it("resumeTasks refuses a bad option with an AgentError naming it", () => {
    const { session } = crashedSession("staging");
    expect(() => resumeTasks(session, [], { toolTimeout: -1 })).toThrow(/toolTimeout/);
  });
});
