import { describe, expect, it } from "vitest";
import {
  agentLoop,
  ContextOverflowError,
  extendSession,
  initSession,
  summarizeOlderTurns,
  type AgentEvent,
  type InvokeModel,
  type ModelContext,
  type ModelMessage,
  type Session,
} from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import { expectEveryCallAnsweredOnce } from "./helpers.ts";

// A session of four answered tool turns, and a model that refuses more than 6 messages.
function longSession(): Session {
  const session = initSession("s", "the task");
  for (let turn = 0; turn < 4; turn++) {
    extendSession(session, { type: "tool_call", id: `c${turn}`, name: "t", input: { text: "x".repeat(200) } });
    extendSession(session, { type: "tool_result", id: `c${turn}`, output: "y".repeat(200) });
  }
  return session;
}

const overflowing =
  (limit: number) =>
  (_tools: unknown, session: Session): ModelMessage[] => {
    if (session.messages.length > limit)
      throw new ContextOverflowError("prompt is too long", { provider: "test", status: 400 });
    return [{ role: "assistant", content: `answered with ${session.messages.length} messages` }];
  };

const misbehaving: [string, InvokeModel, RegExp][] = [
  [
    "calls tools",
    scriptedModel([[{ type: "tool_call", id: "x", name: "shell", input: {} }], [{ role: "assistant", content: "s" }]]),
    /called tools/,
  ],
  ["answers nothing", scriptedModel([[{ role: "assistant", content: "" }]]), /answered nothing/],
  [
    "answers more than it replaces",
    scriptedModel([[{ role: "assistant", content: "z".repeat(50_000) }]]),
    /longer than/,
  ],
  ["fails", scriptedModel([{ error: new Error("summarizer down") }]), /summarizer down/],
];

describe("a summarizer that misbehaves never ends the user's run", () => {
  for (const [label, summarizer, reason] of misbehaving) {
    it(`after an overflow, a summarizer that ${label}: the older turns are dropped without a summary, and an event says so`, async () => {
      const session = longSession();
      const events: AgentEvent[] = [];
      await agentLoop(overflowing(6), [], session, {
        compaction: summarizeOlderTurns({ invokeModel: summarizer, contextWindow: 1_000_000, keepTurns: 1 }),
        onEvent: (event) => events.push(event),
      });
      expect(events.find((event) => event.type === "compaction-fallback")).toMatchObject({
        strategy: "summary",
        reason: expect.stringMatching(reason) as unknown,
        fallback: "sliding-window",
      });
      expect(events.at(-1)).toMatchObject({ type: "run-end", outcome: "done" });
      expect(
        session.messages.some(
          (message) =>
            "role" in message && typeof message.content === "string" && message.content.startsWith("Summary of"),
        ),
      ).toBe(false);
      expectEveryCallAnsweredOnce(session);
    });
  }

  it("before a call, a failing summarizer leaves the session as it was", async () => {
    const session = longSession();
    const before = session.messages.length;
    const events: AgentEvent[] = [];
    await agentLoop(scriptedModel([[{ role: "assistant", content: "done" }]]), [], session, {
      compaction: summarizeOlderTurns({
        invokeModel: scriptedModel([[{ role: "assistant", content: "" }]]),
        contextWindow: 10,
        keepTurns: 1,
      }),
      onEvent: (event) => events.push(event),
    });
    expect(events.find((event) => event.type === "compaction-fallback")).toMatchObject({ fallback: "none" });
    expect(session.messages.length).toBe(before + 1);
  });
});

describe("the model's view is built in one place", () => {
  it("a beforeModelCall hook's messages survive the compact-and-retry after an overflow (no null message)", async () => {
    let calls = 0;
    const invoke: InvokeModel = (tools, session) => {
      calls++;
      return overflowing(6)(tools, session);
    };
    const seen: Session[] = [];
    const session = longSession();
    await agentLoop(
      (tools, view, context) => {
        seen.push(structuredClone(view));
        return invoke(tools, view, context);
      },
      [],
      session,
      {
        compaction: summarizeOlderTurns({
          invokeModel: scriptedModel([[{ role: "assistant", content: "short" }]]),
          contextWindow: 1_000_000,
          keepTurns: 1,
        }),
        hooks: {
          beforeModelCall: ({ session: current }) => ({
            messages: [{ role: "system", content: "HOOK" }, ...current.messages.slice(1)],
          }),
        },
      },
    );
    expect(calls).toBe(2);
    for (const view of seen) {
      expect(view.messages.every((message) => typeof message === "object" && message !== null)).toBe(true);
      expect(view.messages[0]).toMatchObject({ role: "system", content: "HOOK" });
    }
    expect(seen[1]!.messages.length).toBeLessThan(seen[0]!.messages.length);
  });

  it("the retry after an overflow gets the settings the hook gives for it, not the ones it gave the failed call", async () => {
    const contexts: ModelContext[] = [];
    let calls = 0;
    const session = longSession();
    await agentLoop(
      (_tools, _view, context) => {
        contexts.push(structuredClone(context));
        if (++calls === 1) throw new ContextOverflowError("prompt is too long", { provider: "test", status: 400 });
        return [{ role: "assistant", content: "done" }];
      },
      [],
      session,
      {
        compaction: summarizeOlderTurns({
          invokeModel: scriptedModel([[{ role: "assistant", content: "short" }]]),
          contextWindow: 1_000_000,
          keepTurns: 1,
        }),
        // A long session goes to a model with a larger window; once compacted, the default is enough.
        hooks: {
          beforeModelCall: ({ session: current }) =>
            current.messages.length > 6 ? { settings: { model: "long-context" } } : undefined,
        },
      },
    );
    expect(contexts.map((context) => context.settings)).toStrictEqual([{ model: "long-context" }, undefined]);
  });

  it("with an output schema, the hook's messages come after the instruction, on the retry too", async () => {
    const seen: Session[] = [];
    let calls = 0;
    const session = longSession();
    await agentLoop(
      (_tools, view) => {
        seen.push(structuredClone(view));
        if (++calls === 1) throw new ContextOverflowError("prompt is too long", { provider: "test", status: 400 });
        return [{ role: "assistant", content: '{"ok":true}' }];
      },
      [],
      session,
      {
        output: { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] },
        compaction: summarizeOlderTurns({
          invokeModel: scriptedModel([[{ role: "assistant", content: "short" }]]),
          contextWindow: 1_000_000,
          keepTurns: 1,
        }),
        hooks: {
          beforeModelCall: ({ session: current }) => ({
            messages: [...current.messages, { role: "user", content: "HOOK" }],
          }),
        },
      },
    );
    expect(seen).toHaveLength(2);
    for (const view of seen) {
      expect(view.messages[0]).toMatchObject({
        role: "system",
        content: expect.stringContaining("JSON Schema") as unknown,
      });
      expect(view.messages.at(-1)).toMatchObject({ role: "user", content: "HOOK" });
    }
  });
});
