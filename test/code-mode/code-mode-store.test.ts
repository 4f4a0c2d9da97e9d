import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { agentLoop, codeModeName, extendSession, send, tool, type ToolResultMessage } from "simple-agent-loop";
import { closeSession, fileStore, sqliteStore, type SessionStore } from "simple-agent-loop/store";
import { scriptedModel } from "simple-agent-loop/testing";
import { tempDir } from "../store/helpers.ts";

const stores: [string, () => SessionStore & { close?: () => void }][] = [
  ["fileStore", () => fileStore(tempDir())],
  ["sqliteStore", () => sqliteStore(join(tempDir(), "sessions.db"))],
];

const lookup = tool({
  name: "lookup",
  description: "Looks up.",
  inputSchema: { type: "object", properties: { key: { type: "string" } }, required: ["key"] },
  handler: (input) => `value of ${String(input.key)}`,
});

const malformed: [string, Record<string, unknown>, RegExp][] = [
  ["programCalls not an array", { programCalls: "many" }, /"programCalls"/],
  ["a program call without a name", { programCalls: [{ id: "c.1", input: {}, output: 1 }] }, /programCalls\[0\]\.name/],
  ["a program call's input a string", { programCalls: [{ id: "c.1", name: "x", input: "k", output: 1 }] }, /\.input/],
  ["a program call without output", { programCalls: [{ id: "c.1", name: "x", input: {} }] }, /\.output/],
  [
    "a program call's isError a string",
    { programCalls: [{ id: "c.1", name: "x", input: {}, output: 1, isError: "yes" }] },
    /\.isError/,
  ],
  ["logs a string", { logs: "line" }, /"logs"/],
  ["a log line a number", { logs: ["ok", 5] }, /logs\[1\]/],
];

describe("a code call's programCalls and logs in a store", () => {
  for (const [name, make] of stores) {
    it(`${name}: a code call's result loads equal, its programCalls and logs with it`, async () => {
      const store = make();
      try {
        const session = await store.open("good");
        send(session, "look a up");
        const code = "console.log('looking'); return await tools.lookup({ key: 'a' });";
        const model = scriptedModel([
          [{ type: "tool_call", id: "call_1", name: codeModeName, input: { code } }],
          [{ role: "assistant", content: "done" }],
        ]);
        await agentLoop(model, [lookup], session, { codeMode: true });
        await closeSession(session);
        const result = session.messages.find(
          (message): message is ToolResultMessage => "type" in message && message.type === "tool_result",
        )!;
        expect(result.programCalls?.map((call) => call.name)).toStrictEqual(["lookup"]);
        expect(result.logs).toStrictEqual(["looking"]);
        expect(await store.load("good")).toStrictEqual(JSON.parse(JSON.stringify(session)));
      } finally {
        store.close?.();
      }
    });

    for (const [what, fields, mentions] of malformed)
      it(`${name}: refuses a log whose code call result has ${what}, naming the line and field`, async () => {
        const store = make();
        try {
          const session = await store.open("bad");
          send(session, "u");
          extendSession(session, { type: "tool_call", id: "c", name: codeModeName, input: { code: "return 1" } });
          extendSession(session, { type: "tool_result", id: "c", output: 1, ...fields } as never);
          await closeSession(session);
          const loaded = store.load("bad");
          await expect(loaded).rejects.toThrow(mentions);
          await expect(loaded).rejects.toMatchObject({ name: "StoreError" });
          await expect(loaded).rejects.toThrow(/:3\b|line 3|seq 3|entry 3/i);
        } finally {
          store.close?.();
        }
      });
  }
});
