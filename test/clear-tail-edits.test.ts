// clearToolResults reads again the results that were among the last `keepLast` at its last call:
// one replaced there without a notice is cleared, as a fresh read would, once it leaves them.
import { describe, expect, it } from "vitest";
import { clearToolResults, extendSession, initSession, type Session, type ToolResultMessage } from "simple-agent-loop";

function call(session: Session, index: number, output: string): void {
  extendSession(session, { type: "tool_call", id: `c${index}`, name: "read", input: {} });
  extendSession(session, { type: "tool_result", id: `c${index}`, output });
}

const context = { reason: "before-call" as const, signal: new AbortController().signal };

describe("clearToolResults follows a result that changed while among the last keepLast", () => {
  it("clears a result replaced by a long one (without a notice) while it was among the last results", async () => {
    const session = initSession("s", "u");
    const strategy = clearToolResults({ keepLast: 2, minChars: 100, batch: 1 });
    call(session, 0, "short");
    const at = session.messages.length - 1;
    call(session, 1, "short");
    await strategy(session, context);
    // A result still protected is replaced by a long one (a hook filling it in later).
    session.messages[at] = { ...(session.messages[at] as ToolResultMessage), output: "y".repeat(500) };
    call(session, 1, "short");
    await strategy(session, context);
    call(session, 2, "short");
    await strategy(session, context);
    call(session, 3, "short");
    await strategy(session, context);
    expect(session.messages[at]).toMatchObject({ kept: "cleared" });
  });
});
