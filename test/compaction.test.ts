import { describe, expect, it } from "vitest";
import {
  agentLoop,
  compactSession,
  createCompactor,
  extendSession,
  initSession,
  type AgentEvent,
  type Message,
  type ModelMessage,
  type Session,
} from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import { withoutTs } from "./helpers.ts";

const long = (label: string): string => `${label}:${"x".repeat(300)}`;

/** Three tool-using turns, each with long thinking and a long tool input, then a final answer. */
function threeTurns(): Session {
  const session = initSession("s", "u");
  for (const turn of [1, 2, 3]) {
    extendSession(session, { type: "thinking", content: long(`think ${turn}`), signature: `sig${turn}` });
    extendSession(session, {
      type: "tool_call",
      id: `c${turn}`,
      name: "write",
      input: { path: `f${turn}.txt`, text: long("body") },
    });
    extendSession(session, { type: "tool_result", id: `c${turn}`, output: long("result") });
  }
  extendSession(session, { role: "assistant", content: long("answer") });
  return session;
}

describe("compactSession", () => {
  it("truncates thinking and long tool-call inputs once two model turns came after them; keeps the rest", () => {
    const session = compactSession(threeTurns());
    const [, , thinking1, call1, result1, thinking2, call2] = withoutTs(session);
    expect(thinking1).toStrictEqual({
      type: "thinking",
      content: `think 1:${"x".repeat(112)}...`,
      signature: "sig1",
      compacted: true,
    });
    expect(call1).toStrictEqual({
      type: "tool_call",
      id: "c1",
      name: "write",
      input: { _compacted: `${JSON.stringify({ path: "f1.txt", text: long("body") }).slice(0, 120)}...` },
      compacted: true,
    });
    // Tool results, user messages and assistant text are never touched.
    expect(result1).toStrictEqual({ type: "tool_result", id: "c1", output: long("result") });
    // Turn 2 has turn 3 and the answer after it: compacted too. Turn 3 has one turn and one reply after it.
    expect(thinking2).toMatchObject({ compacted: true });
    expect(call2).toMatchObject({ compacted: true });
    expect(session.messages.slice(8).some((message) => "compacted" in message)).toBe(false);
    expect((session.messages.at(-1) as { content: string }).content).toBe(long("answer"));
  });

  it("an input long only in sum is replaced by a prefix of its JSON", () => {
    const session = initSession("s", "u");
    const input = Object.fromEntries(Array.from({ length: 30 }, (_, index) => [`k${index}`, index]));
    extendSession(session, { type: "tool_call", id: "c", name: "t", input });
    extendSession(session, { type: "tool_result", id: "c", output: "r" });
    extendSession(session, { role: "assistant", content: "one" });
    extendSession(session, { role: "user", content: "more" });
    extendSession(session, { role: "assistant", content: "two" });
    compactSession(session);
    expect(session.messages[2]).toMatchObject({
      compacted: true,
      input: { _compacted: `${JSON.stringify(input).slice(0, 120)}...` },
    });
  });

  it("is idempotent", () => {
    const once = compactSession(threeTurns());
    const snapshot = structuredClone(once);
    expect(compactSession(once)).toStrictEqual(snapshot);
  });

  it("leaves short messages alone and honours keepTurns and maxLength", () => {
    const session = initSession("s", "u");
    extendSession(session, { type: "thinking", content: "short" });
    extendSession(session, { type: "tool_call", id: "a", name: "t", input: { n: 1 } });
    extendSession(session, { type: "tool_result", id: "a", output: "r" });
    extendSession(session, { role: "assistant", content: "done" });
    extendSession(session, { role: "user", content: "more" });
    extendSession(session, { role: "assistant", content: "ok" });
    const before = structuredClone(session);
    expect(compactSession(session)).toStrictEqual(before);

    compactSession(session, { keepTurns: 1, maxLength: 2 });
    expect(session.messages[2]).toMatchObject({ content: "sh...", compacted: true });
    expect(session.messages[3]).toMatchObject({ input: { _compacted: '{"...' }, compacted: true });
    expect(session.messages.slice(4)).toStrictEqual(before.messages.slice(4));
  });

  it("the incremental compactor gives the same result as a full pass at every step", () => {
    const reference = threeTurns();
    const incremental: Session = { messages: [] };
    const compactor = createCompactor();
    for (const message of reference.messages) {
      incremental.messages.push(structuredClone(message));
      compactor(incremental);
      expect(incremental).toStrictEqual(compactSession(structuredClone(incremental)));
    }
  });
});

describe("compaction in the loop", () => {
  const turns = (count: number): ModelMessage[][] => [
    ...Array.from({ length: count }, (_, index): ModelMessage[] => [
      { type: "thinking", content: long(`t${index}`), signature: `s${index}` },
      { type: "tool_call", id: `c${index}`, name: "noop", input: { blob: long("in") } },
    ]),
    [{ role: "assistant", content: "done" }],
  ];

  it("with batch: 1, compacts before each model call, so the model never sees old long thinking, and reports it", async () => {
    const model = scriptedModel(turns(4));
    const events: AgentEvent[] = [];
    const session = await agentLoop(model, [], initSession("s", "u"), {
      toolHandlers: { noop: () => "ok" },
      compaction: { batch: 1 },
      onEvent: (event) => events.push(event),
    });
    const fourthCall = model.calls[3]!;
    const compacted = (messages: Message[]) => messages.filter((message) => "compacted" in message).length;
    expect(compacted(fourthCall.messages)).toBe(2); // turn 0's thinking and call: turns 1 and 2 came after
    expect(compacted(session.messages)).toBe(4); // before the final call: turns 0 and 1
    expect(events.filter((event) => event.type === "compaction")).toStrictEqual([
      { type: "compaction", count: 2, strategy: "truncation", tokensFreed: 79 },
      { type: "compaction", count: 2, strategy: "truncation", tokensFreed: 79 },
    ]);
  });

  it("by default cuts in batches of 10: nothing until ten messages are due, then all at once, so the requests in between keep their prefix", async () => {
    // Each turn leaves two messages to cut (thinking and a long input): the fifth due turn makes ten.
    const usage = { inputTokens: 100, outputTokens: 1 };
    const model = scriptedModel(turns(9).map((turn) => turn.map((message) => ({ ...message, usage }))));
    const events: AgentEvent[] = [];
    const session = await agentLoop(model, [], initSession("s", "u"), {
      toolHandlers: { noop: () => "ok" },
      loopGuard: false,
      onEvent: (event) => events.push(event),
    });
    const compacted = (messages: Message[]) => messages.filter((message) => "compacted" in message).length;
    expect(model.calls.map((call) => compacted(call.messages))).toStrictEqual([0, 0, 0, 0, 0, 0, 0, 10, 10, 10]);
    expect(compacted(session.messages)).toBe(10);
    expect(
      events.filter((event) => event.type === "compaction").map((event) => "count" in event && event.count),
    ).toStrictEqual([10]);
    // Only the call after the cut finds its prefix changed, at the first message cut.
    expect(
      events.flatMap((event) =>
        event.type === "cache" && event.changedAt !== undefined
          ? [[event.iteration, event.changedAt, event.changedBy]]
          : [],
      ),
    ).toStrictEqual([[8, 2, "compaction"]]);
    expect(() => createCompactor({ batch: 0 })).toThrow(/compaction.batch/);
  });

  it("can be turned off", async () => {
    const session = await agentLoop(scriptedModel(turns(4)), [], initSession("s", "u"), {
      toolHandlers: { noop: () => "ok" },
      compaction: false,
    });
    expect(session.messages.some((message) => "compacted" in message)).toBe(false);
  });
});

describe("compactSession counts assistant replies, even within one turn", () => {
  it("cuts thinking followed by two assistant replies, even within one turn; the loop's compactor spares the last turn", () => {
    const session = initSession("s", "u");
    extendSession(session, { type: "thinking", content: long("t1"), signature: "s1" });
    extendSession(session, { role: "assistant", content: "reply one" });
    extendSession(session, { role: "assistant", content: "reply two" });
    const spared = structuredClone(session);
    expect(createCompactor()(spared)).toBe(0);
    compactSession(session);
    expect(session.messages[2]).toMatchObject({ compacted: true, content: `${long("t1").slice(0, 120)}...` });
  });

  it("one reply after a message is not enough", () => {
    const session = initSession("s", "u");
    extendSession(session, { type: "tool_call", id: "c1", name: "t", input: { text: long("in") } });
    extendSession(session, { type: "tool_result", id: "c1", output: "r" });
    extendSession(session, { role: "assistant", content: "reply" });
    compactSession(session);
    expect(session.messages[2]).not.toHaveProperty("compacted");
  });
});

describe("the loop's truncation reads each message once, and cuts exactly what a fresh read would", () => {
  it("over random sessions grown, edited in place, replaced and spliced between calls (with a notice), it matches a truncation made anew each call", async () => {
    const { createTruncation, editedFrom, truncateDue } = await import("../src/loop/compaction.ts");
    const { followSessionEdits, markSessionEdits, notifySessionChange, spliceSession } =
      await import("../src/session.ts");
    let seed = 7;
    // The high bits: an LCG's low bits repeat with a short period.
    const random = (below: number): number =>
      Math.floor((seed = (seed * 1103515245 + 12345) % 2147483648) / 65536) % below;
    const text = (): string => "t".repeat([10, 200][random(2)]!);
    for (let trial = 0; trial < 200; trial++) {
      const options = { keepTurns: random(4), maxLength: 120, batch: 1 + random(5), protectLastTurn: random(4) > 0 };
      const truncation = createTruncation(options);
      const kept: Session = { messages: [{ role: "system", content: "s" }] };
      const fresh: Session = structuredClone(kept);
      const edits = followSessionEdits(kept);
      let id = 0;
      for (let step = 0; step < 40; step++) {
        const both = (apply: (session: Session) => void): void => {
          apply(kept);
          apply(fresh);
        };
        const change = random(12);
        if (change < 6) {
          // A model turn: thinking, one or two calls with short or long inputs, their results; or a reply.
          const made: Message[] = [];
          if (random(2) === 0) made.push({ type: "thinking", content: text() });
          if (random(4) === 0) made.push({ role: "assistant", content: "reply" });
          else {
            const calls = 1 + random(2);
            const ids = Array.from({ length: calls }, () => `c${++id}`);
            for (const call of ids) made.push({ type: "tool_call", id: call, name: "t", input: { text: text() } });
            for (const call of ids) made.push({ type: "tool_result", id: call, output: "ok" });
          }
          both((session) => session.messages.push(...structuredClone(made)));
        } else if (change < 7) both((session) => session.messages.push({ role: "user", content: "more" }));
        else if (change < 9) {
          // A call's input changed in place, as a toolInput guardrail's redaction does: longer or shorter.
          const index = kept.messages.findLastIndex((message) => "type" in message && message.type === "tool_call");
          if (index !== -1) {
            const input = { text: text() };
            both((session) => {
              const call = session.messages[index]!;
              if ("type" in call && call.type === "tool_call") call.input = structuredClone(input);
              notifySessionChange(session, { type: "update", index, message: call, reason: "guardrail" });
            });
          }
        } else if (change < 10 && kept.messages.length > 2) {
          // A message replaced by another object, with a notice: thinking by a longer or shorter one.
          const index = 1 + random(kept.messages.length - 1);
          const previous = kept.messages[index]!;
          if ("type" in previous && previous.type === "thinking") {
            const message: Message = { type: "thinking", content: text() };
            both((session) => {
              session.messages[index] = structuredClone(message);
              notifySessionChange(session, { type: "replace", index, message, previous, reason: "guardrail" });
            });
          }
        } else if (change < 11 && kept.messages.length > 3) {
          // Early messages summarized (as a strategy records it) or dropped without a notice.
          const count = 1 + random(Math.min(3, kept.messages.length - 2));
          const summarize = random(2) === 0;
          both((session) => {
            if (summarize) spliceSession(session, 1, count, [{ role: "user", content: "summary" }]);
            else session.messages.splice(1, count);
          });
        }
        const counts = [
          truncateDue(truncation, kept, editedFrom(edits), undefined),
          truncateDue(createTruncation(options), fresh, Infinity, undefined),
        ];
        markSessionEdits(edits);
        expect(counts[0], `trial ${trial} step ${step}`).toBe(counts[1]);
        expect(kept.messages).toStrictEqual(fresh.messages);
      }
    }
  });
});
