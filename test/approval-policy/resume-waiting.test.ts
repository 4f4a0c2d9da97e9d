// A call a paused run left waiting for a human is decided by the next run's human when that run
// has one to ask inline (an AskHuman, the CLI's prompt) or none ("deny"), from the links consulted
// before: a classifier is not asked twice, a rule's ask still reaches the human, a deny still wins.
import { describe, expect, it } from "vitest";
import {
  agentLoop,
  agentStream,
  initSession,
  tool,
  type ApprovalPolicy,
  type ApprovalRequest,
  type AskHuman,
  type Session,
  type ToolCallMessage,
} from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import { expectEveryCallAnsweredOnce, toolCallOf, toolResultOf } from "../helpers.ts";

type Input = Record<string, unknown>;

function tools(runs: string[]) {
  return ["write", "bash"].map((name) =>
    tool({
      name,
      description: `The ${name} tool.`,
      inputSchema: { type: "object" },
      handler: (input: Input) => {
        runs.push(`${name} ${JSON.stringify(input)}`);
        return `${name} done`;
      },
    }),
  );
}

const modelCalling = (...calls: { id: string; name: string; input: Input }[]) =>
  scriptedModel([
    calls.map((call) => ({ type: "tool_call" as const, id: call.id, name: call.name, input: call.input as never })),
    [{ role: "assistant", content: "done" }],
  ]);

const answered = () => scriptedModel([[{ role: "assistant", content: "ok" }]]);

const judge = () => {
  const asked: string[] = [];
  return {
    asked,
    classifier: {
      name: "judge",
      classify: ({ call }: { call: ToolCallMessage }) => {
        asked.push(call.id);
        return {
          decision: "unsure" as const,
          reason: "a human should see this",
          usage: { inputTokens: 10, outputTokens: 2 },
        };
      },
    },
  };
};

const bashAsks = { id: "bash", tool: "bash", action: "ask" as const, reason: "commands are asked about" };

// A library run under human "pause": the write waits after the classifier was unsure, the bash
// after its rule asked.
async function pausedSession(runs: string[], classifier: ApprovalPolicy["classifier"]): Promise<Session> {
  const session = await agentLoop(
    modelCalling(
      { id: "w", name: "write", input: { path: "a.txt" } },
      { id: "b", name: "bash", input: { command: "ls" } },
    ),
    tools(runs),
    initSession("s", "go"),
    { approvalPolicy: { rules: [bashAsks], ...(classifier === undefined ? {} : { classifier }) } },
  );
  expect(toolCallOf(session, "w").approval?.status).toBe("pending");
  expect(toolCallOf(session, "b").approval?.status).toBe("pending");
  return session;
}

function human(answer: (request: ApprovalRequest) => boolean, asked: ApprovalRequest[]): AskHuman {
  return async (request) => {
    asked.push(request);
    return { approved: answer(request), by: "ana" };
  };
}

describe("a waiting call resumed under a policy whose human decides now", () => {
  it("an AskHuman is asked with what was consulted before; the classifier is not asked again", async () => {
    const runs: string[] = [];
    const { asked: judged, classifier } = judge();
    const session = await pausedSession(runs, classifier);
    expect(judged).toStrictEqual(["w"]);
    const asked: ApprovalRequest[] = [];
    // Resumed as the CLI does: a policy whose rules allow everything, its human the prompt.
    await agentLoop(answered(), tools(runs), session, {
      approvalPolicy: {
        rules: [{ id: "--yes", tool: "*", action: "allow" }],
        classifier,
        human: human((request) => request.call.id === "b", asked),
      },
    });
    expect(judged).toStrictEqual(["w"]);
    // The bash's rule asked for a human: "--yes" cannot skip them. The write waited only because the
    // classifier was unsure: a rule of this run that allows it decides.
    expect(asked.map((request) => [request.call.id, request.consulted])).toStrictEqual([
      ["b", [{ by: "rule", rule: "bash", action: "ask", reason: "commands are asked about" }]],
    ]);
    expect(toolCallOf(session, "w").approval).toMatchObject({
      status: "approved",
      decidedBy: { by: "rule", rule: "--yes", action: "allow" },
      consulted: [{ by: "classifier", name: "judge", decision: "unsure", usage: { inputTokens: 10 } }],
    });
    expect(toolCallOf(session, "b").approval).toMatchObject({
      status: "approved",
      decidedBy: { by: "human", user: "ana" },
      consulted: [{ by: "rule", rule: "bash" }],
    });
    expect(toolCallOf(session, "b").approval?.consulted).toHaveLength(1);
    expect(runs).toStrictEqual(['write {"path":"a.txt"}', 'bash {"command":"ls"}']);
    expectEveryCallAnsweredOnce(session);
  });

  it("no rule decides: the human is asked, the unsure verdict shown, and a no answers the call denied", async () => {
    const runs: string[] = [];
    const { asked: judged, classifier } = judge();
    const session = await pausedSession(runs, classifier);
    const asked: ApprovalRequest[] = [];
    const stream = agentStream(answered(), tools(runs), session, {
      approvalPolicy: { rules: [bashAsks], classifier, human: human(() => false, asked) },
    });
    for await (const event of stream) void event;
    expect(judged).toStrictEqual(["w"]);
    expect(asked.map((request) => request.call.id).sort()).toStrictEqual(["b", "w"]);
    expect(asked.find((request) => request.call.id === "w")?.consulted).toMatchObject([
      { by: "classifier", decision: "unsure", reason: "a human should see this" },
    ]);
    expect(toolCallOf(session, "w").approval).toMatchObject({
      status: "denied",
      decidedBy: { by: "human", user: "ana" },
    });
    expect(toolResultOf(session, "w")).toMatchObject({ isError: true });
    expect(runs).toStrictEqual([]);
    expectEveryCallAnsweredOnce(session);
  });

  it('"deny" answers the waiting calls denied, naming the rule that asked; a deny rule of this run wins', async () => {
    const runs: string[] = [];
    const session = await pausedSession(runs, undefined);
    const asked: ApprovalRequest[] = [];
    await agentLoop(answered(), tools(runs), session, {
      approvalPolicy: {
        rules: [bashAsks, { id: "no-writes", tool: "write", action: "deny", reason: "read-only now" }],
        human: "deny",
      },
    });
    expect(asked).toStrictEqual([]);
    expect(toolResultOf(session, "w")).toMatchObject({
      isError: true,
      output: 'Denied by rule "no-writes": read-only now',
    });
    expect(toolResultOf(session, "b")).toMatchObject({
      isError: true,
      output: 'Denied: no one is there to approve this call (rule "bash" asks a human: commands are asked about)',
    });
    expect(runs).toStrictEqual([]);
    expectEveryCallAnsweredOnce(session);
  });

  it('under "pause" (the default) the calls keep waiting, unasked and unrun', async () => {
    const runs: string[] = [];
    const { asked: judged, classifier } = judge();
    const session = await pausedSession(runs, classifier);
    await agentLoop(answered(), tools(runs), session, { approvalPolicy: { rules: [bashAsks], classifier } });
    expect(judged).toStrictEqual(["w"]);
    expect(toolCallOf(session, "w").approval?.status).toBe("pending");
    expect(toolCallOf(session, "b").approval?.status).toBe("pending");
    expect(runs).toStrictEqual([]);
  });
});
