import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Message } from "simple-agent-loop";
import {
  sessionTurns,
  sessionTurnsBackward,
  turnAt,
  turnBefore,
  turnStartBefore,
  unansweredCalls,
  type SessionTurn,
} from "../src/session-turns.ts";

const system = (content = "be brief"): Message => ({ role: "system", content });
const user = (content = "hi"): Message => ({ role: "user", content });
const answer = (content = "done"): Message => ({ role: "assistant", content });
const thinking = (content = "hmm"): Message => ({ type: "thinking", content });
const call = (id: string): Message => ({ type: "tool_call", id, name: "read", input: {} });
const result = (id: string): Message => ({ type: "tool_result", id, output: "ok" });

// The walk both ways: the same turns, the backward ones in reverse.
function turnsOf(messages: readonly Message[]): SessionTurn[] {
  const forward = [...sessionTurns(messages)];
  expect([...sessionTurnsBackward(messages)].reverse()).toStrictEqual(forward);
  expect(forward.map((turn) => turnStartBefore(messages, turn.end))).toStrictEqual(forward.map((turn) => turn.start));
  return forward;
}

describe("sessionTurns", () => {
  it("finds no turn in an empty session", () => {
    expect(turnsOf([])).toStrictEqual([]);
    expect(turnAt([], 0)).toBeUndefined();
    expect(turnBefore([], 0)).toBeUndefined();
  });

  it("makes each user and system message a turn of its own", () => {
    expect(turnsOf([system(), user(), user("again")])).toStrictEqual([
      { type: "system", start: 0, results: 1, end: 1 },
      { type: "user", start: 1, results: 2, end: 2 },
      { type: "user", start: 2, results: 3, end: 3 },
    ]);
  });

  it("keeps a model turn's parallel calls with their results, in any order", () => {
    const messages = [
      system(),
      user(),
      thinking(),
      answer("reading"),
      call("a"),
      call("b"),
      result("b"),
      result("a"),
      answer(),
    ];
    expect(turnsOf(messages)).toStrictEqual([
      { type: "system", start: 0, results: 1, end: 1 },
      { type: "user", start: 1, results: 2, end: 2 },
      { type: "model", start: 2, results: 6, end: 8 },
      { type: "model", start: 8, results: 9, end: 9 },
    ]);
  });

  it("ends a session with an unanswered call in a model turn without results", () => {
    expect(turnsOf([user(), call("a"), result("a"), thinking(), call("b")])).toStrictEqual([
      { type: "user", start: 0, results: 1, end: 1 },
      { type: "model", start: 1, results: 2, end: 3 },
      { type: "model", start: 3, results: 5, end: 5 },
    ]);
  });

  it("makes results no model message comes before a turn of their own", () => {
    expect(turnsOf([result("x"), user(), result("y"), result("z"), answer()])).toStrictEqual([
      { type: "orphan-results", start: 0, results: 0, end: 1 },
      { type: "user", start: 1, results: 2, end: 2 },
      { type: "orphan-results", start: 2, results: 2, end: 4 },
      { type: "model", start: 4, results: 5, end: 5 },
    ]);
  });

  it("counts a result for no call of its turn among that turn's results", () => {
    expect(turnsOf([user(), call("a"), result("a"), result("stray")])).toStrictEqual([
      { type: "user", start: 0, results: 1, end: 1 },
      { type: "model", start: 1, results: 2, end: 4 },
    ]);
  });

  it("ends a model turn at a system message mid-session", () => {
    expect(turnsOf([user(), call("a"), system("now in French"), result("a"), thinking(), answer()])).toStrictEqual([
      { type: "user", start: 0, results: 1, end: 1 },
      { type: "model", start: 1, results: 2, end: 2 },
      { type: "system", start: 2, results: 3, end: 3 },
      { type: "orphan-results", start: 3, results: 3, end: 4 },
      { type: "model", start: 4, results: 6, end: 6 },
    ]);
  });

  it("reads only the turns a backward walk reaches", () => {
    const messages = [user(), call("a"), result("a"), call("b"), result("b"), answer()];
    const read = new Set<number>();
    const watched = new Proxy(messages, {
      get: (target, key, receiver) => {
        if (typeof key === "string" && /^\d+$/.test(key)) read.add(Number(key));
        return Reflect.get(target, key, receiver) as unknown;
      },
    });
    for (const turn of sessionTurnsBackward(watched)) if (turn.start <= 3) break;
    expect([...read].sort()).toStrictEqual([2, 3, 4, 5]);
  });

  it("splits every session into turns that cover it in order, the same read from either end", () => {
    const message = fc.oneof(
      fc.constant(system()),
      fc.constant(user()),
      fc.constant(answer()),
      fc.constant(thinking()),
      fc.constantFrom("a", "b").map(call),
      fc.constantFrom("a", "b", "c").map(result),
    );
    fc.assert(
      fc.property(fc.array(message, { maxLength: 30 }), (messages) => {
        let next = 0;
        for (const turn of turnsOf(messages)) {
          expect(turn.start).toBe(next);
          expect(turn.start <= turn.results && turn.results <= turn.end && turn.start < turn.end).toBe(true);
          const kinds = messages.slice(turn.start, turn.end).map((each) => ("role" in each ? each.role : each.type));
          const head = kinds.slice(0, turn.results - turn.start);
          expect(kinds.slice(turn.results - turn.start).every((kind) => kind === "tool_result")).toBe(true);
          if (turn.type === "model")
            expect(head.length > 0 && head.every((kind) => ["assistant", "thinking", "tool_call"].includes(kind))).toBe(
              true,
            );
          else if (turn.type === "orphan-results") expect(head).toStrictEqual([]);
          else expect(kinds).toStrictEqual([turn.type]);
          // As long as it can be: the next message could not have continued it.
          const following = messages[turn.end];
          const nextKind = following === undefined ? undefined : "role" in following ? following.role : following.type;
          if (turn.type === "model" || turn.type === "orphan-results") expect(nextKind).not.toBe("tool_result");
          if (turn.type === "model" && turn.results === turn.end)
            expect(["assistant", "thinking", "tool_call"]).not.toContain(nextKind);
          next = turn.end;
        }
        expect(next).toBe(messages.length);
      }),
    );
  });

  it("names the calls of a turn its results leave unanswered, in call order", () => {
    const messages = [user(), call("a"), call("b"), call("c"), result("c"), result("a"), result("stray")];
    expect(unansweredCalls(messages, turnBefore(messages, messages.length)!)).toStrictEqual([call("b")]);
    expect(unansweredCalls(messages, turnAt(messages, 0)!)).toStrictEqual([]);
    expect(unansweredCalls([result("a")], turnAt([result("a")], 0)!)).toStrictEqual([]);
  });
});
