// A call decided in an earlier run runs without asking again, but a deny rule of the policy it now
// runs under still wins: the decision may come from a stored session edited since, a page's
// posted messages, or a policy that changed while the call waited.
import { describe, expect, it } from "vitest";
import {
  agentLoop,
  initSession,
  resolveApproval,
  tool,
  type ApprovalPolicy,
  type Session,
  type ToolResultMessage,
} from "simple-agent-loop";
import { fromUIMessages } from "simple-agent-loop/http";
import { scriptedModel } from "simple-agent-loop/testing";
import { expectEveryCallAnsweredOnce } from "../helpers.ts";

function bashTool(runs: string[]) {
  return tool({
    name: "bash",
    description: "Runs a command.",
    inputSchema: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
    handler: (input) => {
      runs.push(String(input.command));
      return "ran";
    },
  });
}

const noRm: ApprovalPolicy = {
  rules: [
    { id: "no-rm", tool: "bash", input: { command: { prefix: "rm" } }, action: "deny", reason: "never rm" },
    { id: "ask-bash", tool: "bash", action: "ask" },
  ],
};

const resultOf = (session: Session, id: string): ToolResultMessage | undefined =>
  session.messages.find(
    (message): message is ToolResultMessage => "type" in message && message.type === "tool_result" && message.id === id,
  );

describe("a decided call meets the deny rules of the policy it runs under", () => {
  it("approved by a human under one policy, resumed under one that denies it: denied, not run", async () => {
    const runs: string[] = [];
    const asking: ApprovalPolicy = { rules: [{ id: "ask-bash", tool: "bash", action: "ask" }] };
    const paused = await agentLoop(
      scriptedModel([[{ type: "tool_call", id: "b", name: "bash", input: { command: "rm -rf build" } }]]),
      [bashTool(runs)],
      initSession("s", "u"),
      { approvalPolicy: asking },
    );
    resolveApproval(paused, "b", { approved: true, by: "ana" });
    const done = await agentLoop(scriptedModel([[{ role: "assistant", content: "done" }]]), [bashTool(runs)], paused, {
      approvalPolicy: noRm,
    });
    expect(runs).toStrictEqual([]);
    expect(resultOf(done, "b")).toMatchObject({ isError: true, output: expect.stringContaining("never rm") });
    expect(done.messages.find((message) => "id" in message && message.id === "b" && "name" in message)).toMatchObject({
      approval: { status: "denied", decidedBy: { by: "rule", rule: "no-rm", action: "deny" } },
    });
    expectEveryCallAnsweredOnce(done);
  });

  it("approved in a page's posted messages: a deny rule still wins; an approval no rule denies runs unasked", async () => {
    const runs: string[] = [];
    const posted = (command: string) =>
      fromUIMessages([
        { role: "user", parts: [{ type: "text", text: "clean up" }] },
        {
          role: "assistant",
          parts: [
            {
              type: "tool-bash",
              toolCallId: "b",
              state: "approval-responded",
              input: { command },
              approval: { id: "a1", approved: true },
            },
          ],
        },
      ]);
    const model = () => scriptedModel([[{ role: "assistant", content: "done" }]]);
    const denied = await agentLoop(model(), [bashTool(runs)], posted("rm -rf /"), { approvalPolicy: noRm });
    expect(runs).toStrictEqual([]);
    expect(resultOf(denied, "b")).toMatchObject({ isError: true });
    const allowed = await agentLoop(model(), [bashTool(runs)], posted("ls"), { approvalPolicy: noRm });
    expect(runs).toStrictEqual(["ls"]);
    expect(resultOf(allowed, "b")).toMatchObject({ output: "ran" });
  });
});
