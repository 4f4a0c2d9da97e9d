// One rule decides how a session rests (sessionOutcome / restingOutcome in session-turns.ts): the
// stores' list(), the viewer's session list, sessionMetrics and the run registry agree on it. A run
// of scriptedModel or of a hand-written invokeModel answers without a stopReason: it is done
// everywhere, not "unfinished" in the viewer.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  agentLoop,
  send,
  sessionMetrics,
  sessionOutcome,
  tool,
  type InvokeModel,
  type Message,
} from "simple-agent-loop";
import { closeSession, fileStore, sqliteStore, type SessionStore } from "simple-agent-loop/store";
import { scriptedModel } from "simple-agent-loop/testing";
import { createSessionSummarizer } from "../src/viewer/session-list.ts";
import { runEndFromLog } from "../src/http/stored-run.ts";

const add = tool({
  name: "add",
  description: "Add.",
  inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } },
  handler: (input) => Number(input.a) + Number(input.b),
});

const models: [string, () => InvokeModel][] = [
  [
    "scriptedModel",
    () =>
      scriptedModel([
        [{ type: "tool_call", id: "c1", name: "add", input: { a: 2, b: 3 } }],
        [{ role: "assistant", content: "5" }],
      ]),
  ],
  ["a hand-written invokeModel", () => () => [{ role: "assistant", content: "Done." }]],
];

describe("a finished run whose answer has no stopReason is done everywhere", () => {
  for (const [name, model] of models) {
    it(name, async () => {
      const directory = mkdtempSync(join(tmpdir(), "outcome-"));
      const stores: [string, SessionStore, string | undefined][] = [
        ["fileStore", fileStore(directory), join(directory, "task.jsonl")],
        ["sqliteStore", sqliteStore(join(directory, "sessions.db")), undefined],
      ];
      for (const [storeName, store, file] of stores) {
        const session = await store.open("task");
        send(session, "add 2 and 3");
        await agentLoop(model(), [add], session);
        await closeSession(session);
        expect(
          (await store.list()).map((summary) => summary.status),
          storeName,
        ).toStrictEqual(["done"]);
        expect(sessionOutcome(session.messages)).toBe("done");
        expect(sessionMetrics(session).outcome).toBe("done");
        expect(runEndFromLog({ messages: session.messages, approvals: new Map(), ended: true })).toStrictEqual({
          type: "run-end",
          outcome: "done",
        });
        if (file !== undefined) expect((await createSessionSummarizer(file, "task.jsonl")()).outcome).toBe("done");
      }
    });
  }

  it("the rest of the rule: paused, unfinished, aborted, error, stopped, empty", () => {
    const user: Message = { role: "user", content: "go" };
    expect(sessionOutcome([])).toBe("empty");
    expect(sessionOutcome([{ role: "system", content: "s" }])).toBe("empty");
    expect(sessionOutcome([user])).toBe("unfinished");
    expect(sessionOutcome([user, { type: "tool_call", id: "c", name: "add", input: {} }])).toBe("unfinished");
    expect(
      sessionOutcome([user, { type: "tool_call", id: "c", name: "add", input: {}, approval: { status: "pending" } }]),
    ).toBe("paused");
    for (const [stopReason, outcome] of [
      ["end_turn", "done"],
      ["aborted", "aborted"],
      ["error", "error"],
      ["max_tokens", "stopped"],
    ] as const)
      expect(sessionOutcome([user, { role: "assistant", content: "a", stopReason }]), stopReason).toBe(outcome);
  });
});
