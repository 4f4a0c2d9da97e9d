// The behaviour every SessionStore must have, run against each backend (the file store today).
import { describe, expect, it } from "vitest";
import { agentLoop, initSession, extendSession, send, tool } from "simple-agent-loop";
import { closeSession, type SessionStore } from "simple-agent-loop/store";
import { scriptedModel } from "simple-agent-loop/testing";

export function sessionStoreSuite(name: string, createStore: () => SessionStore): void {
  describe(`SessionStore: ${name}`, () => {
    it("opens a new id as an empty session and records every change of a run; load reads it back exactly", async () => {
      const store = createStore();
      const session = await store.open("run-1");
      expect(session).toStrictEqual({ messages: [] });
      for (const message of initSession("s", "add 2 and 3").messages) extendSession(session, message);
      const add = tool({
        name: "add",
        description: "Add.",
        inputSchema: { type: "object" },
        handler: (input) => (input.a as number) + (input.b as number),
      });
      await agentLoop(
        scriptedModel([
          [{ type: "tool_call", id: "1", name: "add", input: { a: 2, b: 3 } }],
          [{ role: "assistant", content: "5" }],
        ]),
        [add],
        session,
      );
      expect(await store.load("run-1")).toStrictEqual(session);
      await closeSession(session);
      expect(await store.load("run-1")).toStrictEqual(session);
    });

    it("reopens a stored session where it was, and records what follows", async () => {
      const store = createStore();
      const first = await store.open("resume");
      send(first, "one");
      await closeSession(first);
      const again = await store.open("resume");
      expect(again).toStrictEqual(first);
      send(again, "two");
      await closeSession(again);
      expect(
        (await store.load("resume")).messages.map((message) => ("role" in message ? message.content : "")),
      ).toStrictEqual(["one", "two"]);
    });

    it("has one writer per id at a time", async () => {
      const store = createStore();
      const session = await store.open("busy");
      await expect(store.open("busy")).rejects.toMatchObject({ name: "StoreError", code: "locked" });
      const other = await store.open("other");
      await closeSession(other);
      await closeSession(session);
      await closeSession(await store.open("busy"));
    });

    it("lists the stored ids, sorted; loading an unknown id is not-found", async () => {
      const store = createStore();
      expect(await store.list()).toStrictEqual([]);
      for (const id of ["b", "a", "c-2"]) await closeSession(await store.open(id));
      expect(await store.list()).toStrictEqual(["a", "b", "c-2"]);
      await expect(store.load("missing")).rejects.toMatchObject({ name: "StoreError", code: "not-found" });
    });
  });
}
