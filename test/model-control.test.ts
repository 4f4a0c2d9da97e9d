import { describe, expect, it } from "vitest";
import {
  agentLoop,
  agentStream,
  costOf,
  hasToolCall,
  initSession,
  isBudgetExceededError,
  notifySessionChange,
  pendingApprovals,
  repeatedToolCalls,
  resolveApproval,
  send,
  sessionMetrics,
  spliceSession,
  setSessionId,
  stepCountIs,
  tool,
  type AgentEvent,
  type ModelContext,
  type ModelMessage,
  type Session,
  type ToolCallMessage,
} from "simple-agent-loop";
import { closeSession, openSession } from "simple-agent-loop/store";
import { scriptedModel } from "simple-agent-loop/testing";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expectEveryCallAnsweredOnce } from "./helpers.ts";

const call = (id: string, input: Record<string, number> = {}): ModelMessage => ({
  type: "tool_call",
  id,
  name: "work",
  input,
});
const tools = { toolHandlers: { work: () => "done" } };

describe("settings", () => {
  it("the run's settings reach every call; a beforeModelCall hook's are merged over them for its call; a bound session's id is passed", async () => {
    const seen: ModelContext[] = [];
    const model = (_tools: unknown, _session: Session, context: ModelContext): ModelMessage[] => {
      seen.push(context);
      return seen.length === 1 ? [call("a")] : [{ role: "assistant", content: "ok" }];
    };
    const session = initSession("s", "u");
    setSessionId(session, "task-42");
    await agentLoop(model, [], session, {
      ...tools,
      settings: { temperature: 0.1, maxTokens: 100, cache: { retention: "long" } },
      hooks: {
        beforeModelCall: ({ iteration }) =>
          iteration === 2 ? { settings: { temperature: 0.9, cache: { key: "k" } } } : undefined,
      },
    });
    expect(seen.map((context) => context.settings)).toStrictEqual([
      { temperature: 0.1, maxTokens: 100, cache: { retention: "long" } },
      { temperature: 0.9, maxTokens: 100, cache: { retention: "long", key: "k" } },
    ]);
    expect(seen.map((context) => context.sessionId)).toStrictEqual(["task-42", "task-42"]);
  });

  it("refuses settings that are not values they can mean", async () => {
    await expect(agentLoop(scriptedModel([]), [], initSession("s", "u"), { settings: { topP: 2 } })).rejects.toThrow(
      /settings\.topP/,
    );
  });
});

describe("stop conditions", () => {
  it("hasToolCall ends the run once the turn's results are in, outcome stop-condition, no throw", async () => {
    const events: AgentEvent[] = [];
    const session = await agentLoop(
      scriptedModel([
        [call("a", { n: 1 })],
        [{ type: "tool_call", id: "b", name: "finish", input: {} }],
        [{ role: "assistant", content: "x" }],
      ]),
      [],
      initSession("s", "u"),
      {
        toolHandlers: { work: () => "done", finish: () => "finished" },
        stopWhen: hasToolCall("finish"),
        onEvent: (event) => events.push(event),
      },
    );
    expectEveryCallAnsweredOnce(session);
    expect(session.messages.at(-1)).toMatchObject({ type: "tool_result", id: "b" });
    expect(events.at(-1)).toMatchObject({ type: "run-end", outcome: "stop-condition" });
  });

  it("stepCountIs(n) stops after n model calls; repeatedToolCalls(limit) after limit identical calls", async () => {
    const endless = (): ModelMessage[] => [call(`c${Math.random()}`, { n: Math.random() })];
    const counted = await agentLoop(endless, [], initSession("s", "u"), { ...tools, stopWhen: stepCountIs(3) });
    expect(counted.messages.filter((message) => "type" in message && message.type === "tool_call")).toHaveLength(3);
    let id = 0;
    const same = (): ModelMessage[] => [call(`c${++id}`, { n: 1 })];
    const repeated = await agentLoop(same, [], initSession("s", "u"), {
      ...tools,
      loopGuard: false,
      stopWhen: repeatedToolCalls(3),
    });
    expect(id).toBe(3);
    expectEveryCallAnsweredOnce(repeated);
  });
});

describe("the loop guard", () => {
  it("refuses the call after `limit` identical ones with an error result, then ends the run when the model repeats it again", async () => {
    let id = 0;
    let ran = 0;
    const events: AgentEvent[] = [];
    const session = await agentLoop(() => [call(`c${++id}`, { n: 1 })], [], initSession("s", "u"), {
      toolHandlers: { work: () => `ran ${++ran}` },
      loopGuard: { limit: 2 },
      onEvent: (event) => events.push(event),
    });
    expect(ran).toBe(2);
    expect(id).toBe(4);
    expectEveryCallAnsweredOnce(session);
    const results = session.messages.filter((message) => "type" in message && message.type === "tool_result");
    expect(results.slice(2)).toMatchObject([
      { isError: true, output: expect.stringMatching(/repeating yourself/) },
      { isError: true, output: expect.stringMatching(/repeating yourself/) },
    ]);
    expect(events.filter((event) => event.type === "loop-detected")).toStrictEqual([
      { type: "loop-detected", tool: "work", count: 4 },
    ]);
    expect(events.at(-1)).toMatchObject({ type: "run-end", outcome: "loop-detected" });
  });

  it("is on by default (limit 5), counts parallel calls of one turn, and a call that differs resets the count", async () => {
    let turn = 0;
    let ran = 0;
    const model = (): ModelMessage[] => {
      turn++;
      if (turn === 1) return [call("a1", { n: 1 }), call("a2", { n: 1 }), call("a3", { n: 1 })];
      if (turn === 2) return [call("b1", { n: 1 }), call("b2", { n: 2 }), call("b3", { n: 2 })];
      return [{ role: "assistant", content: "done" }];
    };
    await agentLoop(model, [], initSession("s", "u"), { toolHandlers: { work: () => `ran ${++ran}` } });
    expect(ran).toBe(6);
  });
});

describe("time limits and budgets", () => {
  it("runMs ends the run as an abort does, with outcome timeout and the TimeoutError described", async () => {
    const events: AgentEvent[] = [];
    const session = await agentLoop(
      scriptedModel([{ delay: 60_000, messages: [{ role: "assistant", content: "late" }] }]),
      [],
      initSession("s", "u"),
      { timeouts: { runMs: 50 }, onEvent: (event) => events.push(event) },
    );
    expect(session.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "aborted" });
    expect(events.at(-1)).toMatchObject({
      type: "run-end",
      outcome: "timeout",
      errorType: "TimeoutError",
      error: expect.stringMatching(/runMs ran out: waited \d+ ms/),
    });
  });

  it("toolTimeout is an alias of timeouts.toolMs: both given and different is an error", async () => {
    await expect(
      agentLoop(scriptedModel([]), [], initSession("s", "u"), { toolTimeout: 10, timeouts: { toolMs: 20 } }),
    ).rejects.toThrow(/toolTimeout .* timeouts\.toolMs/);
  });

  it("budget.tokens: the run ends with BudgetExceededError once it spent more, every call answered, the work in .session", async () => {
    let id = 0;
    const model = (): ModelMessage[] => [
      { ...call(`c${++id}`, { n: id }), usage: { inputTokens: 100, outputTokens: 10 } },
    ];
    const error = await agentLoop(model, [], initSession("s", "u"), { ...tools, budget: { tokens: 250 } }).catch(
      (thrown: unknown) => thrown,
    );
    expect(isBudgetExceededError(error)).toBe(true);
    if (!isBudgetExceededError(error)) return;
    expect(id).toBe(3);
    expect(error.message).toMatch(/budget\.tokens \(250\): spent 330 tokens/);
    expectEveryCallAnsweredOnce(error.session);
  });

  it("budget.usd uses the prices of the model recorded on each turn; costOf prices cache reads and writes at their rates", async () => {
    const price = { inputPerMTok: 3, outputPerMTok: 15, cacheReadPerMTok: 0.3, cacheWritePerMTok: 3.75 };
    expect(
      costOf({ inputTokens: 1_000_000, outputTokens: 0, cacheReadTokens: 500_000, cacheWriteTokens: 100_000 }, price),
    ).toBeCloseTo(0.4 * 3 + 0.5 * 0.3 + 0.1 * 3.75, 10);
    let id = 0;
    const model = (): ModelMessage[] => [
      { ...call(`c${++id}`, { n: id }), model: "claude-x-2025", usage: { inputTokens: 1_000_000, outputTokens: 0 } },
    ];
    const error = await agentLoop(model, [], initSession("s", "u"), {
      ...tools,
      prices: { "claude-x": price },
      budget: { usd: 5 },
    }).catch((thrown: unknown) => thrown);
    expect(isBudgetExceededError(error) && error.spent).toStrictEqual({ tokens: 2_000_000, usd: 6 });
  });
});

describe("a final answer over the budget", () => {
  const answerWith = (tokens: number) => (): ModelMessage[] => [
    { role: "assistant", content: "the answer", usage: { inputTokens: tokens, outputTokens: 10 } },
  ];

  it("ends done with the answer, says the budget was exceeded (event, run-end, metrics, the message), and the next run refuses before calling the model", async () => {
    const events: AgentEvent[] = [];
    const session = await agentLoop(answerWith(300), [], initSession("s", "u"), {
      budget: { tokens: 250 },
      onEvent: (event) => events.push(event),
    });
    const overrun = { budget: { tokens: 250 }, spent: { tokens: 310 } };
    expect(session.messages.at(-1)).toMatchObject({
      role: "assistant",
      content: "the answer",
      budgetExceeded: overrun,
    });
    expect(events.filter((event) => event.type === "budget-exceeded")).toStrictEqual([
      { type: "budget-exceeded", iteration: 1, ...overrun },
    ]);
    const end = events.at(-1);
    expect(end).toMatchObject({ type: "run-end", outcome: "done", budgetExceeded: overrun });
    expect(end?.type === "run-end" && end.metrics?.budgetExceeded).toStrictEqual(overrun);
    // A saved session says so too.
    expect(sessionMetrics(session).budgetExceeded).toStrictEqual(overrun);

    // A follow-up on the same session with the same budget: refused, no model call, nothing added.
    let calls = 0;
    const counting = (): ModelMessage[] => (calls++, answerWith(1)());
    send(session, "and then?");
    const length = session.messages.length;
    const refused = await agentLoop(counting, [], session, { budget: { tokens: 250 } }).catch(
      (error: unknown) => error,
    );
    expect(isBudgetExceededError(refused)).toBe(true);
    if (!isBudgetExceededError(refused)) return;
    expect(refused.message).toMatch(/last run went over budget\.tokens \(250\): spent 310 tokens/);
    expect(refused.spent).toStrictEqual({ tokens: 310 });
    expect(calls).toBe(0);
    expect(session.messages).toHaveLength(length);

    // A larger budget (or none) goes on.
    await agentLoop(counting, [], session, { budget: { tokens: 1000 } });
    expect(calls).toBe(1);
    expect(session.messages.at(-1)).toMatchObject({ role: "assistant", content: "the answer" });
    expect(session.messages.at(-1)).not.toHaveProperty("budgetExceeded");
  });

  it("with prices: the usd overrun is recorded and a resumed run (after an approval pause) refuses before calling the model", async () => {
    const price = { inputPerMTok: 1, outputPerMTok: 0 };
    const events: AgentEvent[] = [];
    let calls = 0;
    const model = (): ModelMessage[] => {
      calls++;
      return [{ ...call("c1"), model: "m-1", usage: { inputTokens: 2_000_000, outputTokens: 0 } }];
    };
    const approved = [
      tool({
        name: "work",
        description: "w",
        inputSchema: { type: "object" },
        requireApproval: true,
        handler: () => "done",
      }),
    ];
    const options = {
      prices: { "m-1": price },
      budget: { usd: 1 },
      onEvent: (event: AgentEvent) => events.push(event),
    };
    const session = await agentLoop(model, approved, initSession("s", "u"), options);
    expect(events.at(-1)).toMatchObject({
      type: "run-end",
      outcome: "paused",
      budgetExceeded: { budget: { usd: 1 }, spent: { tokens: 2_000_000, usd: 2 } },
    });
    for (const pending of pendingApprovals(session)) resolveApproval(session, pending.id, { approved: true });
    const refused = await agentLoop(model, approved, session, options).catch((error: unknown) => error);
    expect(isBudgetExceededError(refused) && refused.spent).toStrictEqual({ tokens: 2_000_000, usd: 2 });
    expect(calls).toBe(1);
    // The approved call ran and is answered: the session stays valid.
    expectEveryCallAnsweredOnce(session);
    expect(session.messages.at(-1)).toMatchObject({ type: "tool_result", id: "c1", output: "done" });
  });
});

describe("the cache event", () => {
  it("after each call: tokens and hit ratio; changedAt and changedBy when the request does not begin with the previous one", async () => {
    const events: AgentEvent[] = [];
    let id = 0;
    const usage = { inputTokens: 1000, outputTokens: 10, cacheReadTokens: 800, cacheWriteTokens: 100 };
    const model = (): ModelMessage[] =>
      ++id < 3 ? [{ ...call(`c${id}`, { n: id }), usage }] : [{ role: "assistant", content: "ok", usage }];
    await agentLoop(model, [], initSession("s", "u"), {
      ...tools,
      hooks: {
        beforeModelCall: ({ session, iteration }) =>
          iteration === 3 ? { messages: session.messages.slice(1) } : undefined,
      },
      onEvent: (event) => events.push(event),
    });
    expect(events.filter((event) => event.type === "cache")).toStrictEqual([
      { type: "cache", iteration: 1, inputTokens: 1000, cacheReadTokens: 800, cacheWriteTokens: 100, hitRatio: 0.8 },
      { type: "cache", iteration: 2, inputTokens: 1000, cacheReadTokens: 800, cacheWriteTokens: 100, hitRatio: 0.8 },
      {
        type: "cache",
        iteration: 3,
        inputTokens: 1000,
        cacheReadTokens: 800,
        cacheWriteTokens: 100,
        hitRatio: 0.8,
        changedAt: 0,
        changedBy: "hook",
      },
    ]);
  });
});

describe("the cache event across runs, steering and approvals", () => {
  const usage = { inputTokens: 100, outputTokens: 1 };
  const cacheEvents = (events: AgentEvent[]) =>
    events.filter((event) => event.type === "cache").map((event) => ("changedAt" in event ? event : "held"));

  it("steering, a follow-up, a pause for approval and its resume in a new run all keep the prefix: no changedAt", async () => {
    const deploy = tool({
      name: "deploy",
      description: "Deploy.",
      inputSchema: { type: "object" },
      requireApproval: true,
      handler: () => "deployed",
    });
    const model = scriptedModel([
      [{ ...call("c1"), usage }],
      [{ type: "tool_call", id: "d1", name: "deploy", input: {}, usage }],
      [{ role: "assistant", content: "deployed it", usage }],
      [{ role: "assistant", content: "and the follow-up", usage }],
    ]);
    const events: AgentEvent[] = [];
    const session = initSession("s", "u");
    const first = agentStream(model, [deploy], session, {
      toolHandlers: {
        work: () => {
          first.steer("also deploy");
          return "done";
        },
      },
      onEvent: (event) => events.push(event),
    });
    await first.result;
    expect(pendingApprovals(session).map((pending) => pending.id)).toStrictEqual(["d1"]);
    resolveApproval(session, "d1", { approved: true });
    const second = agentStream(model, [deploy], session, { onEvent: (event) => events.push(event) });
    second.followUp("one more thing");
    await second.result;
    expect(model.callCount).toBe(4);
    expect(cacheEvents(events)).toStrictEqual(["held", "held", "held", "held"]);
  });

  // One run with a tool call and an answer; `again` sends another message and runs once more.
  async function runTwice() {
    const events: AgentEvent[] = [];
    const session = initSession("s", "u");
    const model = scriptedModel([
      [{ ...call("c1"), usage }],
      [{ role: "assistant", content: "one", usage }],
      [{ role: "assistant", content: "two", usage }],
    ]);
    await agentLoop(model, [], session, { ...tools, onEvent: (event) => events.push(event) });
    const again = async (): Promise<void> => {
      send(session, "next");
      await agentLoop(model, [], session, { ...tools, onEvent: (event) => events.push(event) });
    };
    return { events, session, again };
  }

  it("the next run's first request is compared with the last run's: a compaction between runs is named", async () => {
    const { events, session, again } = await runTwice();
    // Older turns summarized away between runs, the way a compaction strategy records it.
    spliceSession(session, 2, 2, [{ role: "user", content: "[summary: work was done]" }]);
    await again();
    expect(cacheEvents(events).at(-1)).toMatchObject({ changedAt: 2, changedBy: "compaction" });
  });

  it("an approval update in place to a message an earlier request held is named approval", async () => {
    const { events, session, again } = await runTwice();
    // The object stays the same: only the session's change notice shows it was changed.
    const sent = session.messages[2] as ToolCallMessage;
    sent.approval = { status: "approved", input: {} };
    notifySessionChange(session, { type: "update", index: 2, message: sent, reason: "approval" });
    await again();
    expect(cacheEvents(events)).toStrictEqual([
      "held",
      "held",
      expect.objectContaining({ changedAt: 2, changedBy: "approval" }),
    ]);
  });
});

describe("context.sessionId", () => {
  it("is the log file's base name for a session opened from a file", async () => {
    const directory = await mkdtemp(join(tmpdir(), "session-id-"));
    try {
      const session = await openSession(join(directory, "task-7.jsonl"));
      send(session, "hi");
      const ids: (string | undefined)[] = [];
      await agentLoop(
        (_tools, _session, context) => {
          ids.push(context.sessionId);
          return [{ role: "assistant", content: "ok" }];
        },
        [],
        session,
      );
      await closeSession(session);
      expect(ids).toStrictEqual(["task-7"]);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});
