import { describe, expect, it } from "vitest";
import {
  defineAgent,
  extendSession,
  handoff,
  HandoffLimitError,
  initSession,
  resolveApproval,
  runAgent,
  streamAgent,
  type AgentRunEvent,
  type Message,
  type Session,
} from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import { expectEveryCallAnsweredOnce } from "./helpers.ts";
import { answer, call, loggingTool } from "./scripted-turns.ts";

// A model turn that records what the model was sent, then answers.
function seen(into: Message[][], reply: Parameters<typeof scriptedModel>[0][number]) {
  return (session: Session) => {
    into.push(session.messages.map(({ ts: _ts, ...message }) => message as Message));
    return typeof reply === "function" ? [] : Array.isArray(reply) ? reply : [reply as never];
  };
}

describe("agents and handoffs", () => {
  it("runs the tools of the handoff's response first, then the target with its own system prompt; one run-start and one run-end", async () => {
    const log: string[] = [];
    const billingSaw: Message[][] = [];
    const billing = defineAgent({
      name: "billing",
      description: "Invoices and payments.",
      systemPrompt: "You are billing.",
      invokeModel: scriptedModel([seen(billingSaw, answer("Your invoice is paid."))]),
    });
    const triage = defineAgent({
      name: "triage",
      systemPrompt: "You are triage.",
      invokeModel: scriptedModel([[call("c1", "lookup"), call("c2", "transfer_to_billing")]]),
      tools: [loggingTool(log, "lookup", "account 42")],
      handoffs: [billing],
    });
    const events: AgentRunEvent[] = [];
    const session = await runAgent(triage, initSession("session prompt", "is my invoice paid?"), {
      onEvent: (event) => events.push(event),
    });
    expect(log).toStrictEqual(["lookup ran"]);
    expectEveryCallAnsweredOnce(session);
    expect(billingSaw[0]![0]).toStrictEqual({ role: "system", content: "You are billing." });
    expect(billingSaw[0]!.slice(2)).toMatchObject([
      { type: "tool_call", id: "c1", agent: "triage" },
      { type: "tool_call", id: "c2", name: "transfer_to_billing", agent: "triage" },
      { type: "tool_result", id: "c1", output: "account 42" },
      { type: "tool_result", id: "c2", output: "Transferred to billing." },
    ]);
    expect(session.messages.at(-1)).toMatchObject({
      role: "assistant",
      content: "Your invoice is paid.",
      agent: "billing",
    });
    expect(session.messages[0]).toMatchObject({ role: "system", content: "session prompt" });
    expect(events.filter((event) => event.type === "run-start")).toStrictEqual([
      { type: "run-start", agentName: "triage" },
    ]);
    expect(events.filter((event) => event.type === "run-end")).toMatchObject([{ type: "run-end", outcome: "done" }]);
    expect(events.at(-1)).toMatchObject({ type: "run-end", outcome: "done" });
    expect(events.filter((event) => event.type === "handoff")).toStrictEqual([
      { type: "handoff", from: "triage", to: "billing", history: "full" },
    ]);
  });

  it("takes the first of two handoffs in one response and answers the other with an error naming it", async () => {
    const billing = defineAgent({
      name: "billing",
      systemPrompt: "b",
      invokeModel: scriptedModel([answer("billing here")]),
    });
    const refunds = defineAgent({
      name: "refunds",
      systemPrompt: "r",
      invokeModel: scriptedModel([answer("refunds here")]),
    });
    const triage = defineAgent({
      name: "triage",
      systemPrompt: "t",
      invokeModel: scriptedModel([[call("c1", "transfer_to_refunds"), call("c2", "transfer_to_billing")]]),
      handoffs: [billing, refunds],
    });
    const session = await runAgent(triage, initSession("s", "money back please"));
    expectEveryCallAnsweredOnce(session);
    const second = session.messages.find(
      (message) => "type" in message && message.type === "tool_result" && message.id === "c2",
    );
    expect(second).toMatchObject({ isError: true });
    expect(JSON.stringify(second)).toContain("transfer_to_refunds");
    expect(session.messages.at(-1)).toMatchObject({ content: "refunds here", agent: "refunds" });
  });

  it("hands back with returnTo, and resumes a saved session with the agent that was active", async () => {
    const billing = defineAgent({
      name: "billing",
      systemPrompt: "b",
      invokeModel: scriptedModel([answer("which invoice?"), [call("c2", "transfer_back_to_triage")]]),
    });
    const triage = defineAgent({
      name: "triage",
      systemPrompt: "t",
      invokeModel: scriptedModel([[call("c1", "transfer_to_billing")], answer("triage again: anything else?")]),
      handoffs: [handoff(billing, { returnTo: true })],
    });
    const first = await runAgent(triage, initSession("s", "invoice question"));
    expect(first.messages.at(-1)).toMatchObject({ content: "which invoice?", agent: "billing" });
    // Saved and loaded: the caller passes the root agent; the session says billing is active.
    const loaded = JSON.parse(JSON.stringify(first)) as Session;
    extendSession(loaded, { role: "user", content: "never mind, something else" });
    const second = await runAgent(triage, loaded);
    expectEveryCallAnsweredOnce(second);
    expect(second.messages.at(-1)).toMatchObject({ content: "triage again: anything else?", agent: "triage" });
  });

  it("shows the target what its history mode keeps: no-tools, lastTurns, a function", async () => {
    const prior: Session = initSession("s", "first question");
    extendSession(prior, { type: "tool_call", id: "p1", name: "lookup", input: {} });
    extendSession(prior, { type: "tool_result", id: "p1", output: "found" });
    extendSession(prior, answer("first answer"));
    extendSession(prior, { role: "user", content: "second question" });
    const views: Record<string, string[]> = {};
    for (const [label, history] of [
      ["no-tools", "no-tools"],
      ["lastTurns", { lastTurns: 1 }],
      ["function", (messages: Message[]) => messages.filter((message) => "role" in message && message.role === "user")],
    ] as const) {
      const saw: Message[][] = [];
      const target = defineAgent({
        name: "target",
        systemPrompt: "target prompt",
        invokeModel: scriptedModel([seen(saw, answer("ok"))]),
      });
      const triage = defineAgent({
        name: "triage",
        systemPrompt: "t",
        invokeModel: scriptedModel([[call("h1", "transfer_to_target")]]),
        tools: [loggingTool([], "lookup", "account 42")],
        handoffs: [handoff(target, { history })],
      });
      await runAgent(triage, structuredClone(prior));
      views[label] = saw[0]!.map((message) =>
        "role" in message
          ? `${message.role}:${typeof message.content === "string" ? message.content : "parts"}`
          : `${message.type}:${"id" in message ? message.id : ""}`,
      );
    }
    expect(views["no-tools"]).toStrictEqual([
      "system:target prompt",
      "user:first question",
      "assistant:first answer",
      "user:second question",
    ]);
    expect(views.lastTurns).toStrictEqual([
      "system:target prompt",
      "user:second question",
      "tool_call:h1",
      "tool_result:h1",
    ]);
    expect(views.function).toStrictEqual(["system:target prompt", "user:first question", "user:second question"]);
  });

  it("stops handoff ping-pong at maxHandoffs with HandoffLimitError keeping a valid session", async () => {
    const back = Array.from({ length: 5 }, (_, index) => [call(`b${String(index)}`, "transfer_back_to_triage")]);
    const forth = Array.from({ length: 5 }, (_, index) => [call(`t${String(index)}`, "transfer_to_billing")]);
    const billing = defineAgent({ name: "billing", systemPrompt: "b", invokeModel: scriptedModel(back) });
    const triage = defineAgent({
      name: "triage",
      systemPrompt: "t",
      invokeModel: scriptedModel(forth),
      handoffs: [handoff(billing, { returnTo: true })],
    });
    const events: AgentRunEvent[] = [];
    const error = await runAgent(triage, initSession("s", "loop"), {
      maxHandoffs: 2,
      onEvent: (event) => events.push(event),
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(HandoffLimitError);
    expectEveryCallAnsweredOnce((error as HandoffLimitError).session);
    expect(events.filter((event) => event.type === "handoff")).toHaveLength(2);
    expect(events.at(-1)).toMatchObject({ type: "run-end", outcome: "error", errorType: "HandoffLimitError" });
  });

  it("waits for the decision on a call beside the handoff, then hands off", async () => {
    const log: string[] = [];
    const refund = loggingTool(log, "refund", "refunded", { requireApproval: true });
    const billing = defineAgent({
      name: "billing",
      systemPrompt: "b",
      invokeModel: scriptedModel([answer("done in billing")]),
    });
    const triage = defineAgent({
      name: "triage",
      systemPrompt: "t",
      invokeModel: scriptedModel([[call("c1", "refund"), call("c2", "transfer_to_billing")]]),
      tools: [refund],
      handoffs: [billing],
    });
    const session = initSession("s", "refund me");
    const events: AgentRunEvent[] = [];
    for await (const event of streamAgent(triage, session)) events.push(event);
    expect(events.at(-1)).toMatchObject({ type: "run-end", outcome: "paused" });
    expect(events.some((event) => event.type === "handoff")).toBe(false);
    expect(log).toStrictEqual([]);
    resolveApproval(session, "c1", { approved: true });
    const resumed: AgentRunEvent[] = [];
    await runAgent(triage, session, { onEvent: (event) => resumed.push(event) });
    expect(log).toStrictEqual(["refund ran"]);
    expectEveryCallAnsweredOnce(session);
    expect(resumed.filter((event) => event.type === "handoff")).toMatchObject([{ from: "triage", to: "billing" }]);
    expect(session.messages.at(-1)).toMatchObject({ content: "done in billing", agent: "billing" });
  });
});
