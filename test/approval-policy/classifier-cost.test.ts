// What the classifier spent on a call that paused for a human (its verdict `unsure`) is counted
// once: in the paused run's `run-end` (`costUsd`, the budget's sum), in `sessionMetrics` of the
// paused session and of a stored copy, and still once after the call is decided and run in a later
// run (on the call's result, `subagentUsage`), never twice. Likewise a call the classifier allowed
// whose run stopped before it ran.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  agentLoop,
  defineAgent,
  send,
  initSession,
  resolveApproval,
  runAgent,
  sessionMetrics,
  tool,
  type AgentEvent,
  type AgentRunEvent,
  type ApprovalClassifier,
  type Session,
  type ToolResultMessage,
} from "simple-agent-loop";
import { closeSession, fileStore } from "simple-agent-loop/store";
import { scriptedModel } from "simple-agent-loop/testing";
import { expectEveryCallAnsweredOnce } from "../helpers.ts";

// Whole dollars per token, so sums are exact: the model's turn 10 + 1, the judge's 100 + 5.
const prices = {
  worker: { inputPerMTok: 1_000_000, outputPerMTok: 1_000_000 },
  judge: { inputPerMTok: 1_000_000, outputPerMTok: 1_000_000 },
};
const judgeUsd = 105;
const turnUsd = 11;

const directories: string[] = [];
afterAll(() => {
  for (const directory of directories) rmSync(directory, { recursive: true, force: true });
});

function unsureJudge(asked: string[]): ApprovalClassifier {
  return {
    name: "judge",
    classify: ({ call }) => {
      asked.push(call.id);
      return { decision: "unsure", reason: "a deploy", model: "judge", usage: { inputTokens: 100, outputTokens: 5 } };
    },
  };
}

const deploy = tool({ name: "deploy", description: "Deploys.", inputSchema: { type: "object" }, handler: () => "ok" });

function deployModel() {
  return scriptedModel([
    [
      {
        type: "tool_call",
        id: "d1",
        name: "deploy",
        input: {},
        model: "worker",
        usage: { inputTokens: 10, outputTokens: 1 },
      },
    ],
    [{ role: "assistant", content: "Deployed.", model: "worker", usage: { inputTokens: 10, outputTokens: 1 } }],
  ]);
}

const runEnd = (events: readonly { type: string }[]) => events.find((event) => event.type === "run-end");

describe("the classifier's cost on a call that paused for a human", () => {
  it("is in the paused run's run-end, in sessionMetrics of the paused session and its stored copy, and once after the resumed run", async () => {
    const asked: string[] = [];
    const model = deployModel();
    const events: AgentEvent[] = [];
    // Recorded by the file store as it runs (the approval is an update entry).
    const directory = mkdtempSync(join(tmpdir(), "simple-agent-loop-classifier-cost-"));
    directories.push(directory);
    const store = fileStore(directory);
    const session = await store.open("paused");
    send(session, "Deploy it.");
    const options = { prices, approvalPolicy: { classifier: unsureJudge(asked) } };
    await agentLoop(model, [deploy], session, { ...options, onEvent: (event) => events.push(event) });
    await closeSession(session);
    expect(runEnd(events)).toMatchObject({ outcome: "paused", costUsd: turnUsd + judgeUsd });
    expect(sessionMetrics(session, { prices })).toMatchObject({
      outcome: "paused",
      costUsd: turnUsd + judgeUsd,
      costByModel: { worker: { costUsd: turnUsd, calls: 1 }, judge: { costUsd: judgeUsd, calls: 1 } },
    });
    // The stored copy says the same.
    const loaded = await store.load("paused");
    expect(sessionMetrics(loaded, { prices })).toMatchObject({ outcome: "paused", costUsd: turnUsd + judgeUsd });

    // Decided by a human and resumed from the stored copy: the classifier is not asked again, its
    // cost is counted once, on the call's result.
    resolveApproval(loaded, "d1", { approved: true, by: "ops" });
    const resumed: AgentEvent[] = [];
    await agentLoop(model, [deploy], loaded, { ...options, onEvent: (event) => resumed.push(event) });
    expect(asked).toStrictEqual(["d1"]);
    expect(runEnd(resumed)).toMatchObject({ outcome: "done", costUsd: turnUsd });
    const result = loaded.messages.find(
      (message): message is ToolResultMessage => "type" in message && message.type === "tool_result",
    )!;
    expect(result.subagentUsage).toStrictEqual([
      { model: "judge", calls: 1, usage: { inputTokens: 100, outputTokens: 5 } },
    ]);
    expect(sessionMetrics(loaded, { prices })).toMatchObject({
      outcome: "done",
      costUsd: 2 * turnUsd + judgeUsd,
      costByModel: { worker: { costUsd: 2 * turnUsd, calls: 2 }, judge: { costUsd: judgeUsd, calls: 1 } },
    });
    expectEveryCallAnsweredOnce(loaded);
    expect(JSON.parse(JSON.stringify(loaded))).toStrictEqual(loaded);
  });

  it("runAgent: the paused run's summed run-end counts it", async () => {
    const events: AgentRunEvent[] = [];
    const agent = defineAgent({
      name: "deployer",
      systemPrompt: "You deploy.",
      invokeModel: deployModel(),
      tools: [deploy],
      options: { approvalPolicy: { classifier: unsureJudge([]) } },
    });
    const session: Session = await runAgent(agent, initSession("You deploy.", "Deploy it."), {
      prices,
      onEvent: (event) => events.push(event),
    });
    expect(runEnd(events)).toMatchObject({ outcome: "paused", costUsd: turnUsd + judgeUsd });
    expect(sessionMetrics(session, { prices })).toMatchObject({ costUsd: turnUsd + judgeUsd });
  });

  it("a call the classifier allowed whose run stopped before it ran: counted while unrun, and once when a later run runs it", async () => {
    const asked: string[] = [];
    const judge: ApprovalClassifier = {
      name: "judge",
      classify: ({ call }) => {
        asked.push(call.id);
        return { decision: "allow", reason: "fine", model: "judge", usage: { inputTokens: 100, outputTokens: 5 } };
      },
    };
    const controller = new AbortController();
    const slow = tool({
      name: "deploy",
      description: "Deploys.",
      inputSchema: { type: "object" },
      handler: (_input, { signal }) =>
        new Promise((_resolve, reject) => {
          controller.abort();
          signal.addEventListener("abort", () => reject(signal.reason as Error));
        }),
    });
    const session = initSession("You deploy.", "Deploy it.");
    const options = { prices, approvalPolicy: { classifier: judge } };
    // A crash between the decision and the result, as a copy of the session taken then.
    let copy: Session | undefined;
    const model = deployModel();
    await agentLoop(model, [slow], session, {
      ...options,
      signal: controller.signal,
      onEvent: (event) => {
        if (event.type === "tool-approval") copy = structuredClone(session);
      },
    });
    expect(copy!.messages.at(-1)).toMatchObject({ id: "d1", approval: { status: "approved" } });
    expect(sessionMetrics(copy!, { prices })).toMatchObject({ costUsd: turnUsd + judgeUsd });
    await agentLoop(model, [deploy], copy!, options);
    expect(asked).toStrictEqual(["d1"]);
    expect(sessionMetrics(copy!, { prices })).toMatchObject({ costUsd: turnUsd + judgeUsd + turnUsd });
    expectEveryCallAnsweredOnce(copy!);
  });
});
