import { describe, expect, it } from "vitest";
import {
  defineAgent,
  extendSession,
  handoff,
  initSession,
  isBudgetExceededError,
  runAgent,
  sessionMetrics,
  type AgentRunEvent,
  type ModelPrice,
  type Usage,
  type Message,
  type Session,
} from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import { expectEveryCallAnsweredOnce } from "./helpers.ts";
import { answer, call } from "./scripted-turns.ts";

const view = (messages: Message[]) =>
  messages.map((message) =>
    "role" in message
      ? `${message.role}:${typeof message.content === "string" ? message.content : "parts"}`
      : `${message.type}:${"id" in message ? message.id : ""}`,
  );

describe('handoff history "summary"', () => {
  it("writes one summary at the handoff, keeps it in the handoff's result, and shows the target only it", async () => {
    const summarizerSaw: Message[][] = [];
    const summarizer = scriptedModel([
      (session: Session) => {
        summarizerSaw.push(structuredClone(session.messages));
        return [answer("User 42 asked twice about invoice INV-7; lookup found it unpaid.")];
      },
    ]);
    const targetSaw: Message[][] = [];
    const record = (reply: string) => (session: Session) => {
      targetSaw.push(structuredClone(session.messages));
      return [answer(reply)];
    };
    const billing = defineAgent({
      name: "billing",
      systemPrompt: "You are billing.",
      invokeModel: scriptedModel([record("I will send a payment link."), record("Done.")]),
    });
    const triage = defineAgent({
      name: "triage",
      systemPrompt: "t",
      invokeModel: scriptedModel([[call("h1", "transfer_to_billing")]]),
      handoffs: [handoff(billing, { history: "summary", summarizer })],
    });
    const session = initSession("s", "is INV-7 paid?");
    extendSession(session, call("p1", "lookup"));
    extendSession(session, { type: "tool_result", id: "p1", output: "INV-7 unpaid" });
    extendSession(session, answer("It is unpaid."));
    extendSession(session, { role: "user", content: "then let me pay" });
    const events: AgentRunEvent[] = [];
    await runAgent(triage, session, { onEvent: (event) => events.push(event) });
    expectEveryCallAnsweredOnce(session);
    // The summarizer read the conversation before the handoff's response, tool traffic included.
    const transcript = JSON.stringify(summarizerSaw[0]);
    expect(transcript).toContain("INV-7 unpaid");
    expect(transcript).toContain("then let me pay");
    expect(transcript).not.toContain("transfer_to_billing");
    expect(view(targetSaw[0]!)).toStrictEqual([
      "system:You are billing.",
      "user:Summary of the conversation before this handoff:\nUser 42 asked twice about invoice INV-7; lookup found it unpaid.",
    ]);
    const result = session.messages.find(
      (message) => "type" in message && message.type === "tool_result" && message.id === "h1",
    );
    expect(result).toMatchObject({
      output: {
        message: "Transferred to billing.",
        summary: "User 42 asked twice about invoice INV-7; lookup found it unpaid.",
      },
    });
    expect(events.filter((event) => event.type === "handoff")).toStrictEqual([
      { type: "handoff", from: "triage", to: "billing", history: "summary" },
    ]);
    // Later calls (and a resumed session) read the kept summary: the summarizer is not asked again.
    const loaded = JSON.parse(JSON.stringify(session)) as Session;
    extendSession(loaded, { role: "user", content: "thanks" });
    await runAgent(triage, loaded);
    expect(summarizerSaw).toHaveLength(1);
    expect(view(targetSaw[1]!)).toStrictEqual([
      "system:You are billing.",
      "user:Summary of the conversation before this handoff:\nUser 42 asked twice about invoice INV-7; lookup found it unpaid.",
      "assistant:I will send a payment link.",
      "user:thanks",
    ]);
  });

  it("falls back to the text of the conversation when the summarizer fails, and says why in the result", async () => {
    const targetSaw: Message[][] = [];
    const billing = defineAgent({
      name: "billing",
      systemPrompt: "b",
      invokeModel: scriptedModel([
        (session: Session) => {
          targetSaw.push(structuredClone(session.messages));
          return [answer("ok")];
        },
      ]),
    });
    const triage = defineAgent({
      name: "triage",
      systemPrompt: "t",
      invokeModel: scriptedModel([[call("h1", "transfer_to_billing")]]),
      handoffs: [
        handoff(billing, {
          history: "summary",
          summarizer: () => {
            throw new Error("summarizer down");
          },
        }),
      ],
    });
    const session = await runAgent(triage, initSession("s", "pay INV-7"), { retry: false });
    expect(view(targetSaw[0]!)).toStrictEqual(["system:b", "user:pay INV-7"]);
    const result = session.messages.find((message) => "type" in message && message.type === "tool_result");
    expect(result).toMatchObject({ output: { message: "Transferred to billing." } });
    expect(JSON.stringify(result)).toContain("summarizer down");
  });

  it("counts the summarizer's call against the run's budget, in its cost and in its metrics", async () => {
    const prices: Record<string, ModelPrice> = {
      big: { inputPerMTok: 10, outputPerMTok: 50 },
      small: { inputPerMTok: 1, outputPerMTok: 5 },
    };
    const usage = (inputTokens: number, outputTokens: number) => ({ inputTokens, outputTokens });
    const cost = (model: "big" | "small", spent: Usage) =>
      (spent.inputTokens * prices[model]!.inputPerMTok + spent.outputTokens * prices[model]!.outputPerMTok) / 1_000_000;
    const agents = () => {
      const billingCalls: number[] = [];
      const billing = defineAgent({
        name: "billing",
        systemPrompt: "b",
        invokeModel: scriptedModel([
          () => {
            billingCalls.push(1);
            return [{ ...answer("paid"), usage: usage(200, 20), model: "big" }];
          },
        ]),
      });
      const summarizer = scriptedModel([[{ ...answer("the summary"), usage: usage(1000, 100), model: "small" }]]);
      const triage = defineAgent({
        name: "triage",
        systemPrompt: "t",
        invokeModel: scriptedModel([[{ ...call("h1", "transfer_to_billing"), usage: usage(100, 10), model: "big" }]]),
        handoffs: [handoff(billing, { history: "summary", summarizer })],
      });
      return { triage, billingCalls };
    };

    const { triage } = agents();
    const events: AgentRunEvent[] = [];
    const session = await runAgent(triage, initSession("s", "pay INV-7"), {
      prices,
      onEvent: (event) => events.push(event),
    });
    const end = events.at(-1);
    if (end?.type !== "run-end") throw new Error("no run-end last");
    const summaryCost = cost("small", usage(1000, 100));
    expect(end.costUsd).toBeCloseTo(cost("big", usage(100, 10)) + summaryCost + cost("big", usage(200, 20)), 12);
    // The run's own calls stay its own; the summarizer's is counted beside them, as a subagent's.
    expect(end.metrics?.modelCalls).toBe(2);
    expect(end.metrics?.subagents).toStrictEqual({
      modelCalls: 1,
      usage: { inputTokens: 1000, outputTokens: 100, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
      costUsd: summaryCost,
    });
    expect(end.metrics?.costByModel?.small).toStrictEqual({ calls: 1, costUsd: summaryCost });
    // The session says the same: a saved session's metrics count the summary too.
    const fromSession = sessionMetrics(session, { prices });
    expect(fromSession.subagents).toStrictEqual(end.metrics?.subagents);
    expect(fromSession.costByModel).toStrictEqual(end.metrics?.costByModel);
    // Its events reach listeners as updates of the handoff's call, its turn's usage with them.
    const updates = events.flatMap((event) =>
      event.type === "tool-execution-update" && event.id === "h1" ? [event.progress as { type: string }] : [],
    );
    expect(updates.find((update) => update.type === "turn-end")).toMatchObject({ usage: usage(1000, 100) });

    // A budget the summary overdraws: the target's model is never called.
    const overdrawn = agents();
    const error: unknown = await runAgent(overdrawn.triage, initSession("s", "pay INV-7"), {
      budget: { tokens: 1_000 },
    }).catch((thrown: unknown) => thrown);
    expect(isBudgetExceededError(error)).toBe(true);
    expect(overdrawn.billingCalls).toStrictEqual([]);
  });
});
