// The public createCompactor, told of no edits, still cuts a message that was changed (in place, or
// replaced with a notice) while it was among the recent turns, as a fresh read would.
import { describe, expect, it } from "vitest";
import {
  compactSession,
  createCompactor,
  extendSession,
  initSession,
  notifySessionChange,
  type Message,
  type Session,
} from "simple-agent-loop";

const long = (label: string): string => `${label}:${"x".repeat(300)}`;

function turn(session: Session, index: number, thinking: string): void {
  extendSession(session, { type: "thinking", content: thinking, signature: `sig${index}` });
  extendSession(session, { type: "tool_call", id: `c${index}`, name: "noop", input: {} });
  extendSession(session, { type: "tool_result", id: `c${index}`, output: "ok" });
}

describe("createCompactor follows what changed in the recent turns", () => {
  it("cuts a message that was made long while it was still among the recent turns (edited in place)", () => {
    const session = initSession("s", "u");
    const compactor = createCompactor();
    turn(session, 0, "short");
    compactor(session);
    // The recent turn's thinking grows in place (a user's hook, a redaction), then turns come after it.
    const thinking = session.messages[2] as { content: string };
    thinking.content = long("grown");
    for (const index of [1, 2, 3]) {
      turn(session, index, "short");
      compactor(session);
    }
    expect(session).toStrictEqual(compactSession(structuredClone(session)));
  });

  it("cuts a message replaced by a long one (with a notice) while it was still among the recent turns", () => {
    const session = initSession("s", "u");
    const compactor = createCompactor();
    turn(session, 0, "short");
    compactor(session);
    const previous = session.messages[2]!;
    const message: Message = { type: "thinking", content: long("replaced"), signature: "sig0" };
    session.messages[2] = message;
    notifySessionChange(session, { type: "replace", index: 2, message, previous, reason: "guardrail" });
    for (const index of [1, 2, 3]) {
      turn(session, index, "short");
      compactor(session);
    }
    expect(session).toStrictEqual(compactSession(structuredClone(session)));
  });
});
