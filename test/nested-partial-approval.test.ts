import { describe, expect, it } from "vitest";
import {
  agentLoop,
  codeModeName,
  initSession,
  pendingApprovalEntries,
  resolveApproval,
  subagentTool,
  tool,
  type Session,
  type ToolResultMessage,
} from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import { expectEveryCallAnsweredOnce } from "./helpers.ts";

// Two calls wait inside one call (a program's, a subagent's); one is decided, the run goes on and
// pauses again for the other: the waiting call must keep its record (`approval.nested`), so the
// decided call is not lost or run twice and the other is still listed by its path.

function deployTool(ran: string[]) {
  return tool({
    name: "deploy",
    description: "Deploys.",
    inputSchema: { type: "object", properties: { target: { type: "string" } }, required: ["target"] },
    requireApproval: true,
    handler: (input) => {
      ran.push(String(input.target));
      return `deployed ${String(input.target)}`;
    },
  });
}

function resultOf(session: Session, id: string): ToolResultMessage | undefined {
  return session.messages.find(
    (message): message is ToolResultMessage => "type" in message && message.type === "tool_result" && message.id === id,
  );
}

const copy = (session: Session): Session => JSON.parse(JSON.stringify(session)) as Session;

describe("a call waiting on two nested calls, one decided at a time", () => {
  it("a program's: the second pause keeps the record, the decided call runs once, the other is still listed", async () => {
    const ran: string[] = [];
    const code =
      "const [x, y] = await Promise.all([tools.deploy({ target: 'x' }), tools.deploy({ target: 'y' })]); return [x, y];";
    const paused = await agentLoop(
      scriptedModel([[{ type: "tool_call", id: "call_7", name: codeModeName, input: { code } }]]),
      [deployTool(ran)],
      initSession("s", "u"),
      { codeMode: true },
    );
    expect(pendingApprovalEntries(paused).map((entry) => entry.path)).toStrictEqual([
      "call_7/call_7.1",
      "call_7/call_7.2",
    ]);
    const first = copy(paused);
    resolveApproval(first, "call_7.1", { approved: true });
    const half = await agentLoop(scriptedModel([]), [deployTool(ran)], first, { codeMode: true });
    expect(pendingApprovalEntries(half).map((entry) => entry.path)).toStrictEqual(["call_7/call_7.2"]);
    const second = copy(half);
    resolveApproval(second, "call_7/call_7.2", { approved: true });
    const done = await agentLoop(scriptedModel([[{ role: "assistant", content: "ok" }]]), [deployTool(ran)], second, {
      codeMode: true,
    });
    expect(resultOf(done, "call_7")?.output).toStrictEqual(["deployed x", "deployed y"]);
    expect(ran.toSorted()).toStrictEqual(["x", "y"]);
    expectEveryCallAnsweredOnce(done);
  });

  it("a subagent's: the second pause keeps the subagent's session, each call runs once", async () => {
    const ran: string[] = [];
    const subagent = (model: ReturnType<typeof scriptedModel>) =>
      subagentTool({
        name: "deployer",
        description: "Deploys things.",
        systemPrompt: "You deploy.",
        invokeModel: model,
        tools: [deployTool(ran)],
      });
    const childTurns = [
      [
        { type: "tool_call" as const, id: "d1", name: "deploy", input: { target: "x" } },
        { type: "tool_call" as const, id: "d2", name: "deploy", input: { target: "y" } },
      ],
    ];
    const paused = await agentLoop(
      scriptedModel([[{ type: "tool_call", id: "p1", name: "deployer", input: { prompt: "go" } }]]),
      [subagent(scriptedModel(childTurns))],
      initSession("s", "u"),
    );
    expect(pendingApprovalEntries(paused).map((entry) => entry.path)).toStrictEqual(["p1/d1", "p1/d2"]);
    const first = copy(paused);
    resolveApproval(first, "d1", { approved: true });
    const half = await agentLoop(scriptedModel([]), [subagent(scriptedModel([]))], first);
    expect(pendingApprovalEntries(half).map((entry) => entry.path)).toStrictEqual(["p1/d2"]);
    const second = copy(half);
    resolveApproval(second, "p1/d2", { approved: true });
    const done = await agentLoop(
      scriptedModel([[{ role: "assistant", content: "ok" }]]),
      [subagent(scriptedModel([[{ role: "assistant", content: "both deployed" }]]))],
      second,
    );
    expect(resultOf(done, "p1")?.output).toBe("both deployed");
    expect(ran).toStrictEqual(["x", "y"]);
    expectEveryCallAnsweredOnce(done);
  });
});
