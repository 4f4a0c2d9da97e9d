import { describe, expect, it } from "vitest";
import {
  agentLoop,
  initSession,
  pendingApprovals,
  resolveApproval,
  tool,
  type AgentEvent,
  type Session,
  type ToolCallMessage,
} from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";

function deployTool() {
  const runs: unknown[] = [];
  const deploy = tool({
    name: "deploy",
    description: "d",
    inputSchema: { type: "object" },
    requireApproval: true,
    handler: (input) => (runs.push(input), "deployed"),
  });
  return { deploy, runs };
}

const model = () =>
  scriptedModel([
    [{ type: "tool_call", id: "c1", name: "deploy", input: { env: "staging" } }],
    [{ role: "assistant", content: "done" }],
  ]);

const waitingCall = (session: Session): ToolCallMessage =>
  session.messages.find((message): message is ToolCallMessage => "type" in message && message.type === "tool_call")!;

async function run(session: Session, deploy: ReturnType<typeof deployTool>["deploy"], invoke = model()) {
  const events: AgentEvent[] = [];
  const result = await agentLoop(invoke, [deploy], session, { onEvent: (event) => events.push(event) });
  return { session: result, outcome: (events.at(-1) as { outcome?: string }).outcome };
}

describe("an approval is for the input the human saw", () => {
  for (const approved of [true, false]) {
    it(`a decision (${approved ? "approved" : "denied"}) does not carry over to an input changed after it: the call asks again`, async () => {
      const { deploy, runs } = deployTool();
      const invoke = model();
      const paused = await run(initSession("s", "u"), deploy, invoke);
      expect(paused.outcome).toBe("paused");
      resolveApproval(paused.session, "c1", { approved });
      // The waiting call's input edited after the decision (by a hook, a tool, an edited log).
      waitingCall(paused.session).input = { env: "production" };
      const resumed = await run(paused.session, deploy, invoke);
      expect(runs).toStrictEqual([]);
      expect(resumed.outcome).toBe("paused");
      expect(pendingApprovals(resumed.session).map((call) => call.input)).toStrictEqual([{ env: "production" }]);
      // Decided again, for what it now says: it runs with that.
      resolveApproval(resumed.session, "c1", { approved: true });
      const done = await run(resumed.session, deploy, invoke);
      expect(done.outcome).toBe("done");
      expect(runs).toStrictEqual([{ env: "production" }]);
    });
  }

  it("the decision keeps a copy of the input it was given for, through a JSON round trip (a log), and an unchanged input runs", async () => {
    const { deploy, runs } = deployTool();
    const invoke = model();
    const paused = await run(initSession("s", "u"), deploy, invoke);
    resolveApproval(paused.session, "c1", { approved: true });
    expect(waitingCall(paused.session).approval).toMatchObject({ status: "approved", input: { env: "staging" } });
    const restored = JSON.parse(JSON.stringify(paused.session)) as Session;
    const done = await run(restored, deploy, invoke);
    expect(done.outcome).toBe("done");
    expect(runs).toStrictEqual([{ env: "staging" }]);
  });

  it("a decision recorded without the input it was for (an older log, a hand-written approval) asks again", async () => {
    const { deploy, runs } = deployTool();
    const invoke = model();
    const paused = await run(initSession("s", "u"), deploy, invoke);
    waitingCall(paused.session).approval = { status: "approved" };
    const resumed = await run(paused.session, deploy, invoke);
    expect(runs).toStrictEqual([]);
    expect(resumed.outcome).toBe("paused");
  });
});
