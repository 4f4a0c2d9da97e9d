import { describe, expect, it } from "vitest";
import {
  agentLoop,
  initSession,
  onSessionChange,
  pendingApprovals,
  resolveApproval,
  response,
  tool,
  type AgentEvent,
  type Session,
} from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import { expectEveryCallAnsweredOnce, withoutTs } from "./helpers.ts";

function deployAgent() {
  const runs: string[] = [];
  const deploy = tool({
    name: "deploy",
    description: "Deploy a service.",
    inputSchema: { type: "object", properties: { service: { type: "string" } }, required: ["service"] },
    requireApproval: true,
    handler: (input) => {
      runs.push(String(input.service));
      return `deployed ${String(input.service)}`;
    },
  });
  const status = tool({
    name: "status",
    description: "Status.",
    inputSchema: { type: "object" },
    handler: () => "all green",
  });
  const model = scriptedModel([
    [
      { type: "tool_call", id: "s", name: "status", input: {} },
      { type: "tool_call", id: "d1", name: "deploy", input: { service: "api" } },
      { type: "tool_call", id: "d2", name: "deploy", input: { service: "web" } },
    ],
    [{ role: "assistant", content: "done" }],
  ]);
  return { runs, tools: [deploy, status], model };
}

// A tool's `requireApproval` is an `ask` rule: the waiting call records it as the link asked before the human.
const asked = { status: "pending", consulted: [{ by: "rule", rule: "requireApproval", action: "ask" }] };

describe("human approval: pause, persist, resume", () => {
  it("pauses on a tool that requires approval: other calls are answered, the paused session is plain JSON", async () => {
    const { runs, tools, model } = deployAgent();
    const events: AgentEvent[] = [];
    const session = await agentLoop(model, tools, initSession("s", "deploy api and web"), {
      onEvent: (event) => events.push(event),
    });
    expect(runs).toStrictEqual([]);
    expect(events.at(-1)).toStrictEqual({
      type: "run-end",
      outcome: "paused",
      metrics: expect.objectContaining({ modelCalls: 1 }),
      pending: [
        { id: "d1", name: "deploy", input: { service: "api" } },
        { id: "d2", name: "deploy", input: { service: "web" } },
      ],
    });
    expect(
      events.filter((event) => event.type === "tool-approval-request").map((event) => "id" in event && event.id),
    ).toStrictEqual(["d1", "d2"]);
    expect(pendingApprovals(session).map((call) => call.id)).toStrictEqual(["d1", "d2"]);
    expect(withoutTs(session).slice(2)).toStrictEqual([
      { type: "tool_call", id: "s", name: "status", input: {} },
      { type: "tool_call", id: "d1", name: "deploy", input: { service: "api" }, approval: asked },
      { type: "tool_call", id: "d2", name: "deploy", input: { service: "web" }, approval: asked },
      { type: "tool_result", id: "s", output: "all green" },
    ]);
    expect(JSON.parse(JSON.stringify(session))).toStrictEqual(session);
    expect(model.callCount).toBe(1);
  });

  it("resumes from saved JSON: approved calls run, denied ones are rejected, the model is not called again for that turn", async () => {
    const first = deployAgent();
    const paused = await agentLoop(first.model, first.tools, initSession("s", "deploy"));
    // Saved anywhere, loaded later, in another process.
    const saved: Session = JSON.parse(JSON.stringify(paused)) as Session;
    resolveApproval(saved, [
      { id: "d1", approved: true },
      { id: "d2", approved: false, reason: "web is frozen this week" },
    ]);
    const later = deployAgent();
    const resumed = scriptedModel([[{ role: "assistant", content: "api deployed, web rejected" }]]);
    await agentLoop(resumed, later.tools, saved);
    expect(later.runs).toStrictEqual(["api"]);
    expect(resumed.callCount).toBe(1);
    expect(resumed.calls[0]!.messages.at(-1)).toMatchObject({
      type: "tool_result",
      id: "d2",
      output: "Rejected: web is frozen this week",
      isError: true,
    });
    expect(withoutTs(saved).slice(6)).toStrictEqual([
      { type: "tool_result", id: "d1", output: "deployed api" },
      { type: "tool_result", id: "d2", output: "Rejected: web is frozen this week", isError: true },
      { role: "assistant", content: "api deployed, web rejected" },
    ]);
    expectEveryCallAnsweredOnce(saved);
    expect(pendingApprovals(saved)).toStrictEqual([]);
  });

  it("resuming twice never runs a tool twice", async () => {
    const agent = deployAgent();
    const session = await agentLoop(agent.model, agent.tools, initSession("s", "deploy"));
    resolveApproval(session, "d1", { approved: true });
    resolveApproval(session, "d2", { approved: true });
    await agentLoop(agent.model, agent.tools, session);
    const afterFirst = structuredClone(session);
    await agentLoop(scriptedModel([[{ role: "assistant", content: "nothing more" }]]), agent.tools, session);
    expect(agent.runs).toStrictEqual(["api", "web"]);
    expect(session.messages.slice(0, afterFirst.messages.length)).toStrictEqual(afterFirst.messages);
  });

  it("a partly resolved session stays paused on the undecided call", async () => {
    const agent = deployAgent();
    const session = await agentLoop(agent.model, agent.tools, initSession("s", "deploy"));
    resolveApproval(session, "d1", { approved: true });
    const events: AgentEvent[] = [];
    await agentLoop(agent.model, agent.tools, session, { onEvent: (event) => events.push(event) });
    expect(agent.runs).toStrictEqual(["api"]);
    expect(events.at(-1)).toMatchObject({ type: "run-end", outcome: "paused", pending: [{ id: "d2" }] });
    expect(pendingApprovals(session).map((call) => call.id)).toStrictEqual(["d2"]);
  });

  it("bad resolve input is a clear error that changes nothing", async () => {
    const agent = deployAgent();
    const session = await agentLoop(agent.model, agent.tools, initSession("s", "deploy"));
    const before = structuredClone(session);
    expect(() => resolveApproval(session, "nope", { approved: true })).toThrow('no tool call "nope"');
    expect(() => resolveApproval(session, "s", { approved: true })).toThrow('"s" is not waiting for approval');
    expect(() =>
      resolveApproval(session, [
        { id: "d1", approved: true },
        { id: "d2", approved: "yes" as never },
      ]),
    ).toThrow("approved: true or false");
    expect(session).toStrictEqual(before);
    resolveApproval(session, "d1", { approved: true });
    expect(() => resolveApproval(session, "d1", { approved: false })).toThrow("not waiting for approval");
  });

  it("beforeToolCall can require approval dynamically, deny, or fail closed", async () => {
    const ran: string[] = [];
    const model = scriptedModel([
      [
        { type: "tool_call", id: "a", name: "shell", input: { command: "ls" } },
        { type: "tool_call", id: "b", name: "shell", input: { command: "rm -rf /" } },
        { type: "tool_call", id: "c", name: "shell", input: { command: "curl evil" } },
        { type: "tool_call", id: "d", name: "shell", input: { command: "boom" } },
      ],
      [{ role: "assistant", content: "ok" }],
    ]);
    const events: AgentEvent[] = [];
    const session = await agentLoop(model, [], initSession("s", "u"), {
      toolHandlers: { shell: (input: { command: string }) => void ran.push(input.command) },
      onEvent: (event) => events.push(event),
      hooks: {
        beforeToolCall: ({ call }) => {
          const command = call.input.command as string;
          if (command.startsWith("rm")) return { deny: "destructive command" };
          if (command.startsWith("curl")) return { requireApproval: true };
          if (command === "boom") throw new Error("policy service down");
          return undefined;
        },
      },
    });
    expect(ran).toStrictEqual(["ls"]);
    const results = withoutTs(session).filter((message) => "type" in message && message.type === "tool_result");
    // Results enter in call order: d's result waits (held on its call) until c is answered.
    expect(results).toStrictEqual([
      { type: "tool_result", id: "a", output: "" },
      { type: "tool_result", id: "b", output: "Denied: destructive command", isError: true },
    ]);
    expect(
      session.messages.find((message) => "id" in message && message.id === "d" && message.type === "tool_call"),
    ).toMatchObject({
      heldResult: { output: "Denied: the beforeToolCall hook failed: policy service down", isError: true },
    });
    expect(pendingApprovals(session).map((call) => call.id)).toStrictEqual(["c"]);
    expect(events).toContainEqual({
      type: "hook-error",
      hook: "beforeToolCall",
      id: "d",
      error: "policy service down",
    });
  });

  it("results stay in call order across a pause: a later call's result is held, never rerun, and enters after the waiting one", async () => {
    let freeRuns = 0;
    const tools = [
      tool({
        name: "guarded",
        description: "d",
        inputSchema: { type: "object" },
        requireApproval: true,
        handler: () => "guarded ran",
      }),
      tool({
        name: "free",
        description: "d",
        inputSchema: { type: "object" },
        handler: () => `free ran ${++freeRuns}`,
      }),
    ];
    const model = scriptedModel([
      [
        { type: "tool_call", id: "g", name: "guarded", input: {} },
        { type: "tool_call", id: "f", name: "free", input: {} },
      ],
      [{ role: "assistant", content: "done" }],
    ]);
    const session = await agentLoop(model, tools, initSession("s", "u"));
    expect(session.messages.filter((message) => "type" in message && message.type === "tool_result")).toStrictEqual([]);
    const saved = JSON.parse(JSON.stringify(session)) as Session;
    resolveApproval(saved, "g", { approved: true });
    await agentLoop(model, tools, saved);
    expect(freeRuns).toBe(1);
    expect(withoutTs(saved).filter((message) => "type" in message && message.type === "tool_result")).toStrictEqual([
      { type: "tool_result", id: "g", output: "guarded ran" },
      { type: "tool_result", id: "f", output: "free ran 1" },
    ]);
  });

  it("resolveApproval takes a list of ids sharing one decision", async () => {
    const agent = deployAgent();
    const session = await agentLoop(agent.model, agent.tools, initSession("s", "deploy"));
    resolveApproval(session, ["d1", "d2"], { approved: false, reason: "freeze" });
    expect(pendingApprovals(session)).toStrictEqual([]);
    await agentLoop(agent.model, agent.tools, session);
    expect(agent.runs).toStrictEqual([]);
  });

  it("two runs at once on one session are refused: a tool can never be answered twice", async () => {
    const agent = deployAgent();
    const session = await agentLoop(agent.model, agent.tools, initSession("s", "deploy"));
    resolveApproval(session, ["d1", "d2"], { approved: true });
    const results = await Promise.allSettled([
      agentLoop(agent.model, agent.tools, session),
      agentLoop(agent.model, agent.tools, session),
    ]);
    expect(results.map((result) => result.status).sort()).toStrictEqual(["fulfilled", "rejected"]);
    expect(agent.runs).toStrictEqual(["api", "web"]);
    expectEveryCallAnsweredOnce(session);
  });

  it("an aborted run does not pause: waiting calls are answered as aborted", async () => {
    const agent = deployAgent();
    const session = await agentLoop(agent.model, agent.tools, initSession("s", "deploy"), {
      signal: AbortSignal.abort(),
    });
    expectEveryCallAnsweredOnce(session);
    expect(response(session)?.stopReason).toBe("aborted");
  });
});

describe("hooks", () => {
  it("afterToolCall may replace a result; if it throws, the result becomes an error (fail closed)", async () => {
    const model = scriptedModel([
      [
        { type: "tool_call", id: "1", name: "secret", input: {} },
        { type: "tool_call", id: "2", name: "other", input: {} },
      ],
      [{ role: "assistant", content: "ok" }],
    ]);
    const session = await agentLoop(model, [], initSession("s", "u"), {
      toolHandlers: { secret: () => "password=hunter2", other: () => "fine" },
      hooks: {
        afterToolCall: ({ call, result }) => {
          if (call.name === "other") throw new Error("scanner crashed");
          return { output: (result.output as string).replace(/password=\S+/, "password=[redacted]") };
        },
      },
    });
    expect(withoutTs(session).slice(4, 6)).toStrictEqual([
      { type: "tool_result", id: "1", output: "password=[redacted]" },
      { type: "tool_result", id: "2", output: "Error: the afterToolCall hook failed: scanner crashed", isError: true },
    ]);
  });

  it("beforeModelCall replaces messages, tools and settings for one call only; afterModelCall may rewrite the answer", async () => {
    const model = scriptedModel([
      (session, context) => [
        {
          role: "assistant",
          content: `saw ${session.messages.length} messages, temperature ${JSON.stringify(context.settings?.temperature)}`,
        },
      ],
    ]);
    const session = initSession("s", "u");
    await agentLoop(model, [{ name: "t", description: "d", input_schema: {} }], session, {
      hooks: {
        beforeModelCall: ({ session: current }) => ({
          messages: current.messages.slice(1),
          tools: [],
          settings: { temperature: 0 },
        }),
        afterModelCall: ({ messages }) => ({
          messages: messages.map((message) =>
            "role" in message ? { ...message, content: `${message.content}!` } : message,
          ),
        }),
      },
    });
    expect(model.toolsSeen[0]).toStrictEqual([]);
    expect(response(session)?.content).toBe("saw 1 messages, temperature 0!");
    expect(session.messages).toHaveLength(3);
  });

  it("a model hook that throws ends the run with its error, reported, session untouched", async () => {
    const session = initSession("s", "u");
    const events: AgentEvent[] = [];
    await expect(
      agentLoop(scriptedModel([[{ role: "assistant", content: "x" }]]), [], session, {
        onEvent: (event) => events.push(event),
        hooks: {
          beforeModelCall: () => {
            throw new Error("budget exceeded");
          },
        },
      }),
    ).rejects.toThrow("budget exceeded");
    expect(events).toContainEqual({ type: "hook-error", hook: "beforeModelCall", error: "budget exceeded" });
    expect(session.messages).toHaveLength(2);
  });
});

describe("hooks: edge cases", () => {
  it("afterToolCall may return the new output itself", async () => {
    const model = scriptedModel([
      [{ type: "tool_call", id: "1", name: "t", input: {} }],
      [{ role: "assistant", content: "ok" }],
    ]);
    const session = await agentLoop(model, [], initSession("s", "u"), {
      toolHandlers: { t: () => "secret" },
      hooks: { afterToolCall: () => "redacted" },
    });
    expect(withoutTs(session)[3]).toStrictEqual({ type: "tool_result", id: "1", output: "redacted" });
  });

  it("an abort while a model hook runs ends the run as aborted, without throwing", async () => {
    const controller = new AbortController();
    const session = await agentLoop(scriptedModel([[{ role: "assistant", content: "x" }]]), [], initSession("s", "u"), {
      signal: controller.signal,
      hooks: {
        beforeModelCall: () => {
          controller.abort();
          return new Promise(() => undefined);
        },
      },
    });
    expect(response(session)).toMatchObject({ content: "", stopReason: "aborted" });
  });

  it("a failure after the model answered aborts the tools that started early", async () => {
    let sawAbort = false;
    const stream = async function* () {
      yield { type: "message" as const, message: { type: "tool_call" as const, id: "e", name: "slow", input: {} } };
      await new Promise((resolve) => setTimeout(resolve, 10));
      yield { type: "response-end" as const, stopReason: "tool_use" as const };
    };
    await expect(
      agentLoop(() => stream(), [], initSession("s", "u"), {
        toolHandlers: {
          slow: (_input, context) =>
            new Promise((resolve) => {
              context.signal.addEventListener("abort", () => {
                sawAbort = true;
                resolve("stopped");
              });
            }),
        },
        hooks: {
          afterModelCall: () => {
            throw new Error("policy check failed");
          },
        },
      }),
    ).rejects.toThrow("policy check failed");
    expect(sawAbort).toBe(true);
  });
});

describe("approvals read only the last model turn", () => {
  it("a decision reports only the call it decides, not a call an earlier turn of the same task decided", async () => {
    const { tools } = deployAgent();
    const model = scriptedModel([
      [{ type: "tool_call", id: "d1", name: "deploy", input: { service: "api" } }],
      [{ type: "tool_call", id: "d2", name: "deploy", input: { service: "web" } }],
      [{ role: "assistant", content: "done" }],
    ]);
    const session = await agentLoop(model, tools, initSession("s", "deploy api, then web"));
    await agentLoop(model, tools, resolveApproval(session, "d1", { approved: true }));
    expect(pendingApprovals(session).map((call) => call.id)).toStrictEqual(["d2"]);
    const updated: string[] = [];
    onSessionChange(session, (change) => {
      if (change.type === "update" && "id" in change.message) updated.push(change.message.id);
    });
    resolveApproval(session, "d2", { approved: true });
    expect(updated).toStrictEqual(["d2"]);
  });
});
