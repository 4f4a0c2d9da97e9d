// The loop's truncation notices messages removed without a notice even when as many or more entered
// after: it reads the session again, as its clearer does, and cuts what a fresh read cuts.
import { describe, expect, it } from "vitest";
import type { Message, Session } from "simple-agent-loop";
import { createTruncation, editedFrom, truncateDue } from "../src/loop/compaction.ts";
import { followSessionEdits, markSessionEdits } from "../src/session.ts";

const long = "t".repeat(200);

describe("the loop's truncation after a removal without a notice", () => {
  it("cuts what a fresh read cuts when a message was removed without a notice and another turn came before the next call", () => {
    const options = { keepTurns: 1, maxLength: 120, batch: 1 };
    const turn = (id: string, thinking: string): Message[] => [
      { type: "thinking", content: thinking },
      { type: "tool_call", id, name: "t", input: {} },
      { type: "tool_result", id, output: "ok" },
    ];
    const kept: Session = {
      messages: [
        { role: "system", content: "s" },
        { role: "user", content: "u" },
      ],
    };
    const truncation = createTruncation(options);
    const edits = followSessionEdits(kept);
    const call = (): void => {
      truncateDue(truncation, kept, editedFrom(edits), undefined);
      markSessionEdits(edits);
    };
    kept.messages.push(...turn("c1", "short"), ...turn("c2", long));
    call();
    // The user message is dropped without a notice (the loop's clearer notices such a removal),
    // then the next turn enters: as many messages as were read, and more.
    kept.messages.splice(1, 1);
    kept.messages.push(...turn("c3", "short"), ...turn("c4", "short"));
    call();
    const fresh = structuredClone(kept);
    truncateDue(createTruncation(options), fresh, Infinity, undefined);
    expect(kept.messages).toStrictEqual(fresh.messages);
  });
});
