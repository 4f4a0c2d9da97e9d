// A classifier is a model call the run pays for: once the run's budget is used up none is asked
// (the call goes to the human, the verdict recorded `unsure` with why), and an answer whose very
// reading throws is an `unsure` verdict like any other malformed answer, recorded on the call.
import { describe, expect, it } from "vitest";
import {
  agentLoop,
  initSession,
  pendingApprovals,
  tool,
  type AgentEvent,
  type ApprovalClassifier,
  type ToolCallMessage,
} from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import { expectEveryCallAnsweredOnce } from "../helpers.ts";

// Whole dollars per token: one verdict costs 105 USD, the worker's turns nothing.
const prices = {
  judge: { inputPerMTok: 1_000_000, outputPerMTok: 1_000_000 },
  worker: { inputPerMTok: 0, outputPerMTok: 0 },
};

const deployCall = (id: string) => ({ type: "tool_call" as const, id, name: "deploy", input: {}, model: "worker" });

function deployTool(runs: string[]) {
  return tool({
    name: "deploy",
    description: "Deploys.",
    inputSchema: { type: "object" },
    handler: () => {
      runs.push("deploy");
      return "deployed";
    },
  });
}

const callOf = (messages: readonly unknown[], id: string): ToolCallMessage =>
  messages.find(
    (message) => (message as ToolCallMessage).type === "tool_call" && (message as ToolCallMessage).id === id,
  ) as ToolCallMessage;

describe("the classifier and the run's budget", () => {
  it("is not asked once the budget is used up: the calls after go to the human, recorded unsure", async () => {
    const asked: string[] = [];
    const judge: ApprovalClassifier = {
      name: "judge",
      classify: ({ call }) => {
        asked.push(call.id);
        return { decision: "allow", reason: "fine", model: "judge", usage: { inputTokens: 100, outputTokens: 5 } };
      },
    };
    const runs: string[] = [];
    const model = scriptedModel([
      [deployCall("a"), deployCall("b"), deployCall("c")],
      [{ role: "assistant", content: "done" }],
    ]);
    const events: AgentEvent[] = [];
    const session = initSession("s", "u");
    await agentLoop(model, [deployTool(runs)], session, {
      approvalPolicy: { classifier: judge },
      budget: { usd: 50 },
      prices,
      maxParallelTools: 1,
      onEvent: (event) => events.push(event),
    }).catch(() => undefined);
    // The first verdict used the budget up (105 of 50 USD): no second one was bought.
    expect(asked).toStrictEqual(["a"]);
    expect(runs).toStrictEqual(["deploy"]);
    expect(pendingApprovals(session).map((call) => call.id)).toStrictEqual(["b", "c"]);
    const consulted = callOf(session.messages, "b").approval?.consulted;
    expect(consulted).toMatchObject([{ by: "classifier", name: "judge", decision: "unsure" }]);
    expect(consulted?.[0]).toHaveProperty("error", expect.stringMatching(/budget/));
    const runEnd = events.find((event) => event.type === "run-end");
    expect(runEnd).toMatchObject({ costUsd: 105 });
  });
});

describe("a classifier's answer that throws when read", () => {
  const throwing = {
    "a decision getter": {
      get decision(): string {
        throw new Error("boom");
      },
      reason: "x",
    },
    "a usage getter": {
      decision: "allow",
      reason: "x",
      get usage(): unknown {
        throw new Error("boom");
      },
    },
  };
  for (const [label, answer] of Object.entries(throwing)) {
    it(`is unsure with the error recorded (${label}), and the human decides`, async () => {
      const runs: string[] = [];
      const judge: ApprovalClassifier = { name: "judge", classify: () => answer as never };
      const model = scriptedModel([[deployCall("a")], [{ role: "assistant", content: "done" }]]);
      const session = await agentLoop(model, [deployTool(runs)], initSession("s", "u"), {
        approvalPolicy: { classifier: judge, human: "deny" },
      });
      expect(runs).toStrictEqual([]);
      const approval = callOf(session.messages, "a").approval;
      expect(approval).toMatchObject({
        status: "denied",
        decidedBy: { by: "policy" },
        consulted: [{ by: "classifier", name: "judge", decision: "unsure", error: expect.stringContaining("boom") }],
      });
      expectEveryCallAnsweredOnce(session);
    });
  }
});
