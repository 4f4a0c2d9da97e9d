import { describe, expect, it } from "vitest";
import {
  agentLoop,
  agentStream,
  initSession,
  isAgentError,
  onSessionChange,
  pendingApprovals,
  resolveApproval,
  tool,
  type AgentEvent,
  type ApprovalClassifier,
  type ApprovalPolicy,
  type Session,
  type ToolCallMessage,
} from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import { expectEveryCallAnsweredOnce, toolCallOf, toolResultOf } from "../helpers.ts";

type Input = Record<string, unknown>;

function tools(runs: string[], options: { requireApproval?: boolean } = {}) {
  const make = (name: string, requireApproval = false) =>
    tool({
      name,
      description: `The ${name} tool.`,
      inputSchema: { type: "object" },
      ...(requireApproval ? { requireApproval: true } : {}),
      handler: (input: Input) => {
        runs.push(`${name} ${JSON.stringify(input)}`);
        return `${name} done`;
      },
    });
  return [make("read"), make("write"), make("bash"), make("deploy", options.requireApproval)];
}

function modelCalling(...calls: { id: string; name: string; input: Input }[]) {
  return scriptedModel([
    calls.map((call) => ({ type: "tool_call" as const, id: call.id, name: call.name, input: call.input as never })),
    [{ role: "assistant", content: "done" }],
  ]);
}

const policy: ApprovalPolicy = {
  rules: [
    { id: "reads", tool: "read", action: "allow" },
    { id: "no-env", tool: "write", input: { path: { glob: "**/.env" } }, action: "deny", reason: "secrets live there" },
    { id: "src", tool: "write", input: { path: { glob: "src/**" } }, action: "allow" },
    { id: "rm", tool: "bash", input: { command: { prefix: "rm" } }, action: "deny" },
    { id: "bash", tool: "bash", action: "ask" },
  ],
};

describe("the approval chain: rules", () => {
  it("an allow runs, a deny answers with the rule and reason, an ask pauses; each decision recorded on its call", async () => {
    const runs: string[] = [];
    const model = modelCalling(
      { id: "r", name: "read", input: { path: "a" } },
      { id: "w1", name: "write", input: { path: "src/a.ts" } },
      { id: "w2", name: "write", input: { path: "src/../.env" } },
      { id: "b1", name: "bash", input: { command: "ls && rm -rf ~" } },
      { id: "b2", name: "bash", input: { command: "ls" } },
    );
    const events: AgentEvent[] = [];
    const session = await agentLoop(model, tools(runs), initSession("s", "go"), {
      approvalPolicy: policy,
      onEvent: (event) => events.push(event),
    });
    expect(runs).toStrictEqual(['read {"path":"a"}', 'write {"path":"src/a.ts"}']);
    const { at, ...read } = toolCallOf(session, "r").approval!;
    expect(read).toStrictEqual({
      status: "approved",
      input: { path: "a" },
      decidedBy: { by: "rule", rule: "reads", action: "allow" },
    });
    expect(new Date(at!).toISOString()).toBe(at);
    expect(toolCallOf(session, "w2").approval).toMatchObject({
      status: "denied",
      reason: "secrets live there",
      decidedBy: { by: "rule", rule: "no-env", action: "deny", reason: "secrets live there" },
    });
    expect(toolResultOf(session, "w2")).toMatchObject({
      output: 'Denied by rule "no-env": secrets live there',
      isError: true,
    });
    expect(toolResultOf(session, "b1")).toMatchObject({ output: 'Denied by rule "rm"', isError: true });
    expect(toolCallOf(session, "b2").approval).toStrictEqual({
      status: "pending",
      consulted: [{ by: "rule", rule: "bash", action: "ask" }],
    });
    expect(pendingApprovals(session).map((call) => call.id)).toStrictEqual(["b2"]);
    const decisions = events.filter((event) => event.type === "tool-approval");
    expect(decisions.map((event) => [event.id, event.status, event.decidedBy.by])).toStrictEqual([
      ["r", "approved", "rule"],
      ["w1", "approved", "rule"],
      ["w2", "denied", "rule"],
      ["b1", "denied", "rule"],
    ]);
    expect(JSON.parse(JSON.stringify(session))).toStrictEqual(session);
  });

  it("the decision is written as an update (reason approval) before the handler runs", async () => {
    const order: string[] = [];
    const session = initSession("s", "go");
    onSessionChange(session, (change) => {
      if (change.type === "update" && change.reason === "approval" && "type" in change.message)
        order.push(`update ${(change.message as ToolCallMessage).approval?.status}`);
    });
    const read = tool({
      name: "read",
      description: "r",
      inputSchema: { type: "object" },
      handler: () => {
        order.push("handler");
        return "ok";
      },
    });
    await agentLoop(modelCalling({ id: "r", name: "read", input: {} }), [read], session, { approvalPolicy: policy });
    expect(order).toStrictEqual(["update approved", "handler"]);
  });

  it("requireApproval is an ask rule: an allow cannot skip the human, a deny still wins", async () => {
    const runs: string[] = [];
    const allowAll: ApprovalPolicy = { rules: [{ id: "all", tool: "*", action: "allow" }] };
    const paused = await agentLoop(
      modelCalling({ id: "d", name: "deploy", input: {} }),
      tools(runs, { requireApproval: true }),
      initSession("s", "go"),
      { approvalPolicy: allowAll },
    );
    expect(toolCallOf(paused, "d").approval).toStrictEqual({
      status: "pending",
      consulted: [{ by: "rule", rule: "requireApproval", action: "ask" }],
    });
    const denyDeploy: ApprovalPolicy = { rules: [{ id: "freeze", tool: "deploy", action: "deny", reason: "frozen" }] };
    const denied = await agentLoop(
      modelCalling({ id: "d", name: "deploy", input: {} }),
      tools(runs, { requireApproval: true }),
      initSession("s", "go"),
      { approvalPolicy: denyDeploy },
    );
    expect(toolResultOf(denied, "d")).toMatchObject({ output: 'Denied by rule "freeze": frozen', isError: true });
    expect(runs).toStrictEqual([]);
  });

  it("beforeToolCall runs first: its deny is recorded { by: hook }", async () => {
    const runs: string[] = [];
    const session = await agentLoop(
      modelCalling({ id: "r", name: "read", input: {} }),
      tools(runs),
      initSession("s", "go"),
      {
        approvalPolicy: policy,
        hooks: { beforeToolCall: () => ({ deny: "not today" }) },
      },
    );
    expect(runs).toStrictEqual([]);
    expect(toolCallOf(session, "r").approval).toMatchObject({
      status: "denied",
      decidedBy: { by: "hook", reason: "not today" },
    });
    expect(toolResultOf(session, "r")).toMatchObject({ output: "Denied: not today", isError: true });
  });

  it("a call no rule decides goes to the human: pause by default, deny with human: deny, inline with AskHuman", async () => {
    const runs: string[] = [];
    const call = { id: "w", name: "write", input: { path: "README.md" } };
    const paused = await agentLoop(modelCalling(call), tools(runs), initSession("s", "go"), { approvalPolicy: policy });
    expect(toolCallOf(paused, "w").approval).toStrictEqual({ status: "pending" });
    const denied = await agentLoop(modelCalling(call), tools(runs), initSession("s", "go"), {
      approvalPolicy: { ...policy, human: "deny" },
    });
    expect(toolCallOf(denied, "w").approval?.decidedBy).toMatchObject({ by: "policy" });
    expect(toolResultOf(denied, "w")).toMatchObject({ isError: true });
    const asked: string[] = [];
    const inline = await agentLoop(modelCalling(call), tools(runs), initSession("s", "go"), {
      approvalPolicy: {
        ...policy,
        human: async (request) => {
          asked.push(`${request.tool.name}: ${request.tool.description} ${JSON.stringify(request.call.input)}`);
          return { approved: true, reason: "fine", by: "ana" };
        },
      },
    });
    expect(asked).toStrictEqual(['write: The write tool. {"path":"README.md"}']);
    expect(toolCallOf(inline, "w").approval).toMatchObject({
      status: "approved",
      decidedBy: { by: "human", user: "ana", reason: "fine" },
    });
    expect(runs).toStrictEqual(['write {"path":"README.md"}']);
  });

  it("a human told of the rule that asked; says no one is there by name; rules added mid-run decide the calls after (checked)", async () => {
    const runs: string[] = [];
    const denied = await agentLoop(
      modelCalling({ id: "b", name: "bash", input: { command: "ls" } }),
      tools(runs),
      initSession("s", "go"),
      { approvalPolicy: { ...policy, human: "deny" } },
    );
    expect(toolResultOf(denied, "b")).toMatchObject({
      isError: true,
      output: 'Denied: no one is there to approve this call (rule "bash" asks a human)',
    });
    // A prompt's "always": an allow rule added while the run goes on decides the next call.
    const live: ApprovalPolicy = { rules: [{ id: "reads", tool: "read", action: "allow" }] };
    const asked: unknown[] = [];
    live.human = async (request) => {
      asked.push(request.consulted);
      live.rules!.push({ id: "always-write", tool: "write", action: "allow" });
      return { approved: true, by: "ana" };
    };
    const model = scriptedModel([
      [{ type: "tool_call", id: "w1", name: "write", input: { path: "a" } }],
      [{ type: "tool_call", id: "w2", name: "write", input: { path: "b" } }],
      [{ role: "assistant", content: "done" }],
    ]);
    const session = await agentLoop(model, tools(runs), initSession("s", "go"), { approvalPolicy: live });
    expect(asked).toStrictEqual([undefined]);
    expect(toolCallOf(session, "w1").approval?.decidedBy).toStrictEqual({ by: "human", user: "ana" });
    expect(toolCallOf(session, "w2").approval?.decidedBy).toStrictEqual({
      by: "rule",
      rule: "always-write",
      action: "allow",
    });
    expect(runs).toStrictEqual(['write {"path":"a"}', 'write {"path":"b"}']);
    // The rule that asked is shown to the human; a malformed rule added mid-run fails the run.
    const consulted: unknown[] = [];
    await agentLoop(
      modelCalling({ id: "b", name: "bash", input: { command: "ls" } }),
      tools([]),
      initSession("s", "go"),
      {
        approvalPolicy: {
          ...policy,
          human: async (request) => {
            consulted.push(request.consulted);
            return { approved: false };
          },
        },
      },
    );
    expect(consulted).toStrictEqual([[{ by: "rule", rule: "bash", action: "ask" }]]);
    const broken: ApprovalPolicy = { rules: [] };
    broken.human = async () => {
      broken.rules!.push({ id: "", tool: "write", action: "allow" });
      return { approved: true };
    };
    const runsBroken: string[] = [];
    const failing = await agentLoop(
      scriptedModel([
        [{ type: "tool_call", id: "w1", name: "write", input: { path: "a" } }],
        [{ type: "tool_call", id: "w2", name: "write", input: { path: "b" } }],
        [{ role: "assistant", content: "done" }],
      ]),
      tools(runsBroken),
      initSession("s", "go"),
      { approvalPolicy: broken },
    );
    expect(runsBroken).toStrictEqual(['write {"path":"a"}']);
    expect(toolResultOf(failing, "w2")).toMatchObject({
      isError: true,
      output: expect.stringMatching(/approvalPolicy\.rules\[0\]\.id must be a non-empty string/),
    });
  });

  it("the loop's own tools are outside the policy unless a rule names them", async () => {
    const big = tool({
      name: "big",
      description: "b",
      inputSchema: { type: "object" },
      handler: () => "x".repeat(500),
    });
    const model = scriptedModel([
      [{ type: "tool_call", id: "b", name: "big", input: {} }],
      [{ type: "tool_call", id: "r", name: "recall_output", input: { id: "b" } }],
      [{ role: "assistant", content: "done" }],
    ]);
    const denyAll: ApprovalPolicy = {
      rules: [
        { id: "all", tool: "*", action: "deny" },
        { id: "big", tool: "big", action: "allow" },
      ],
    };
    const session = await agentLoop(model, [big], initSession("s", "go"), {
      approvalPolicy: denyAll,
      largeOutput: { maxChars: 300 },
    });
    // `*` denied big too: deny over allow. recall_output is the loop's own: `*` does not name it.
    expect(toolResultOf(session, "b")).toMatchObject({ output: 'Denied by rule "all"' });
    expect(toolCallOf(session, "r").approval).toBeUndefined();
    const named: ApprovalPolicy = { rules: [{ id: "no-recall", tool: "recall_output", action: "deny" }] };
    const again = await agentLoop(
      scriptedModel([
        [{ type: "tool_call", id: "r", name: "recall_output", input: { id: "b" } }],
        [{ role: "assistant", content: "done" }],
      ]),
      [big],
      initSession("s", "go"),
      { approvalPolicy: named },
    );
    expect(toolResultOf(again, "r")).toMatchObject({ output: 'Denied by rule "no-recall"' });
  });
});

function countingClassifier(verdict: unknown, name = "judge"): ApprovalClassifier & { asked: string[] } {
  const asked: string[] = [];
  return {
    name,
    asked,
    classify: ({ call }) => {
      asked.push(call.id);
      return (typeof verdict === "function" ? (verdict as () => unknown)() : verdict) as never;
    },
  };
}

describe("the approval chain: classifier", () => {
  const call = { id: "w", name: "write", input: { path: "README.md" } };

  it("decides what no rule decided; its usage and model are recorded and priced", async () => {
    const runs: string[] = [];
    const classifier = countingClassifier({
      decision: "allow",
      reason: "a readme edit",
      confidence: 0.9,
      usage: { inputTokens: 1000, outputTokens: 100 },
      model: "judge-1",
    });
    const events: AgentEvent[] = [];
    const session = await agentLoop(modelCalling(call), tools(runs), initSession("s", "go"), {
      approvalPolicy: { ...policy, classifier },
      prices: { "judge-1": { inputPerMTok: 1, outputPerMTok: 10 } },
      onEvent: (event) => events.push(event),
    });
    expect(runs).toHaveLength(1);
    expect(toolCallOf(session, "w").approval?.decidedBy).toStrictEqual({
      by: "classifier",
      name: "judge",
      decision: "allow",
      reason: "a readme edit",
      confidence: 0.9,
      usage: { inputTokens: 1000, outputTokens: 100 },
      model: "judge-1",
      costUsd: 0.002,
    });
    const end = events.find((event) => event.type === "run-end");
    expect(end).toMatchObject({ metrics: { costUsd: expect.closeTo(0.002, 6) } });
    // Rules decide first: the classifier is not asked about a read.
    await agentLoop(modelCalling({ id: "r", name: "read", input: {} }), tools(runs), initSession("s", "go"), {
      approvalPolicy: { ...policy, classifier },
    });
    expect(classifier.asked).toStrictEqual(["w"]);
  });

  it("a deny answers with the classifier's name and reason", async () => {
    const runs: string[] = [];
    const session = await agentLoop(modelCalling(call), tools(runs), initSession("s", "go"), {
      approvalPolicy: { ...policy, classifier: countingClassifier({ decision: "deny", reason: "looks risky" }) },
    });
    expect(toolResultOf(session, "w")).toMatchObject({
      output: 'Denied by classifier "judge": looks risky',
      isError: true,
    });
    expect(runs).toStrictEqual([]);
  });

  const unsure: [string, () => unknown][] = [
    ["unsure", () => ({ decision: "unsure", reason: "cannot tell" })],
    [
      "throws",
      () => {
        throw new Error("model down");
      },
    ],
    ["answers garbage", () => ({ decision: "yes", reason: 3 })],
    ["answers nothing", () => undefined],
    ["rejects", () => Promise.reject(new Error("nope"))],
  ];
  for (const [what, verdict] of unsure)
    it(`a classifier that ${what} is unsure: it never allows, the human decides`, async () => {
      const runs: string[] = [];
      const session = await agentLoop(modelCalling(call), tools(runs), initSession("s", "go"), {
        approvalPolicy: { ...policy, classifier: countingClassifier(verdict), human: "deny" },
      });
      expect(runs).toStrictEqual([]);
      const approval = toolCallOf(session, "w").approval!;
      expect(approval.decidedBy).toMatchObject({ by: "policy" });
      expect(approval.consulted).toHaveLength(1);
      expect(approval.consulted![0]).toMatchObject({ by: "classifier", name: "judge", decision: "unsure" });
      if (what !== "unsure") expect(approval.consulted![0]).toHaveProperty("error");
    });

  it("a classifier that does not answer in time is unsure", async () => {
    const runs: string[] = [];
    const session = await agentLoop(modelCalling(call), tools(runs), initSession("s", "go"), {
      approvalPolicy: {
        ...policy,
        classifier: { name: "slow", timeoutMs: 50, classify: () => new Promise(() => undefined) },
      },
    });
    expect(toolCallOf(session, "w").approval).toMatchObject({
      status: "pending",
      consulted: [{ by: "classifier", name: "slow", decision: "unsure", error: "no verdict within 50 ms" }],
    });
    expect(runs).toStrictEqual([]);
  });

  it("decisions are bound to the input: a changed input goes through the chain again; a decided call resumes without asking", async () => {
    const runs: string[] = [];
    const classifier = countingClassifier({ decision: "unsure", reason: "ask a human" });
    const approvalPolicy: ApprovalPolicy = { ...policy, classifier };
    const paused = await agentLoop(modelCalling(call), tools(runs), initSession("s", "go"), { approvalPolicy });
    expect(classifier.asked).toStrictEqual(["w"]);
    resolveApproval(paused, "w", { approved: true, by: "ana" });
    expect(toolCallOf(paused, "w").approval).toMatchObject({
      status: "approved",
      decidedBy: { by: "human", user: "ana" },
      consulted: [{ by: "classifier", decision: "unsure" }],
    });
    // Edited after the decision: the old approval does not hold.
    const edited = structuredClone(paused);
    toolCallOf(edited, "w").input = { path: ".env" };
    await agentLoop(scriptedModel([[{ role: "assistant", content: "ok" }]]), tools(runs), edited, { approvalPolicy });
    expect(toolResultOf(edited, "w")).toMatchObject({ output: 'Denied by rule "no-env": secrets live there' });
    // Unchanged: runs on the human's decision, without a second classifier bill.
    await agentLoop(scriptedModel([[{ role: "assistant", content: "ok" }]]), tools(runs), paused, { approvalPolicy });
    expect(classifier.asked).toStrictEqual(["w"]);
    expect(runs).toStrictEqual(['write {"path":"README.md"}']);
    expectEveryCallAnsweredOnce(paused);
  });

  it("a call decided and not run (a crash) runs on resume without asking again", async () => {
    const runs: string[] = [];
    const classifier = countingClassifier({ decision: "allow", reason: "fine" });
    const session = initSession("s", "go");
    const crashed: Session[] = [];
    onSessionChange(session, (change) => {
      if (change.type === "update" && change.reason === "approval") crashed.push(structuredClone(session));
    });
    await agentLoop(modelCalling(call), tools(runs), session, { approvalPolicy: { ...policy, classifier } });
    const atCrash = crashed[0]!;
    expect(toolCallOf(atCrash, "w").approval?.status).toBe("approved");
    await agentLoop(scriptedModel([[{ role: "assistant", content: "ok" }]]), tools(runs), atCrash, {
      approvalPolicy: { ...policy, classifier },
    });
    expect(classifier.asked).toStrictEqual(["w"]);
    expect(runs).toHaveLength(2);
    expectEveryCallAnsweredOnce(atCrash);
  });
});

describe("every run mode", () => {
  it("agentStream reports tool-approval events as agentLoop does", async () => {
    const runs: string[] = [];
    const stream = agentStream(
      modelCalling({ id: "r", name: "read", input: {} }),
      tools(runs),
      initSession("s", "go"),
      {
        approvalPolicy: policy,
      },
    );
    const events: AgentEvent[] = [];
    for await (const event of stream) events.push(event);
    expect(events.find((event) => event.type === "tool-approval")).toStrictEqual({
      type: "tool-approval",
      id: "r",
      name: "read",
      status: "approved",
      decidedBy: { by: "rule", rule: "reads", action: "allow" },
    });
  });

  it("a bad policy is an AgentError at run start, before the model is called", async () => {
    const model = modelCalling({ id: "r", name: "read", input: {} });
    await expect(
      agentLoop(model, [], initSession("s", "go"), {
        approvalPolicy: { rules: [{ id: "x", tool: "read", action: "allow", input: { path: { regex: "(" } } }] },
      }),
    ).rejects.toSatisfy(
      (error: unknown) => isAgentError(error) && /rules\[0\] \("x"\)\.input\.path\.regex/.test(String(error)),
    );
    expect(model.callCount).toBe(0);
  });

  it("resolveApproval records by; a by that is not a string is an AgentError changing nothing", async () => {
    const runs: string[] = [];
    const paused = await agentLoop(
      modelCalling({ id: "w", name: "write", input: { path: "x" } }),
      tools(runs),
      initSession("s", "go"),
      {
        approvalPolicy: policy,
      },
    );
    const before = structuredClone(paused);
    expect(() => resolveApproval(paused, "w", { approved: true, by: 7 as never })).toThrow(/by/);
    expect(paused).toStrictEqual(before);
    resolveApproval(paused, [{ id: "w", approved: false, reason: "no", by: "bo" }]);
    expect(toolCallOf(paused, "w").approval).toMatchObject({
      status: "denied",
      reason: "no",
      decidedBy: { by: "human", user: "bo", reason: "no" },
    });
  });
});
