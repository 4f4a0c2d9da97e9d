// A policy's rules may change while runs use it (a prompt's "always", a mode change, a revoked
// rule): each call is matched against the rules of its moment, however the list was changed:
// replaced, grown, or a rule swapped in place at the same index.
import { describe, expect, it } from "vitest";
import { agentLoop, initSession, matchPolicy, tool, type ApprovalPolicy } from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";

describe("rules changed in place", () => {
  it("a rule replaced at its index decides the next call of the run (a revoked allow no longer allows)", async () => {
    const runs: string[] = [];
    const policy: ApprovalPolicy = { rules: [{ id: "deploys", tool: "deploy", action: "allow" }], human: "deny" };
    const deploy = tool({
      name: "deploy",
      description: "Deploys.",
      inputSchema: { type: "object" },
      handler: () => {
        runs.push("deploy");
        // Revoked after the first deploy: the list keeps its length.
        policy.rules![0] = { id: "no-deploys", tool: "deploy", action: "deny", reason: "revoked" };
        return "deployed";
      },
    });
    const model = scriptedModel([
      [{ type: "tool_call", id: "d1", name: "deploy", input: {} }],
      [{ type: "tool_call", id: "d2", name: "deploy", input: {} }],
      [{ role: "assistant", content: "done" }],
    ]);
    const session = await agentLoop(model, [deploy], initSession("s", "u"), { approvalPolicy: policy });
    expect(runs).toStrictEqual(["deploy"]);
    const second = session.messages.find(
      (message) => "type" in message && message.type === "tool_result" && message.id === "d2",
    );
    expect(second).toMatchObject({ isError: true, output: expect.stringContaining("revoked") });
  });

  it("matchPolicy reads the rules as they are now: swapped at an index, or one removed and another added", () => {
    const policy: ApprovalPolicy = {
      rules: [
        { id: "a", tool: "deploy", action: "allow" },
        { id: "b", tool: "read", action: "allow" },
      ],
    };
    const deploy = { name: "deploy", input: {} };
    expect(matchPolicy(policy, deploy)).toStrictEqual({ action: "allow", rule: "a" });
    policy.rules![0] = { id: "c", tool: "deploy", action: "deny" };
    expect(matchPolicy(policy, deploy)).toStrictEqual({ action: "deny", rule: "c" });
    policy.rules!.splice(0, 1);
    policy.rules!.push({ id: "d", tool: "deploy", action: "ask" });
    expect(matchPolicy(policy, deploy)).toStrictEqual({ action: "ask", rule: "d" });
  });
});
