import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  agentLoop,
  extendSession,
  initSession,
  tool,
  type InvokeModel,
  type Message,
  type Session,
} from "simple-agent-loop";
import { restateAgent, restateAgentClient } from "simple-agent-loop/restate";
import { appendEntry, closeSession, fileStore, sqliteStore, type SessionStore } from "simple-agent-loop/store";
import { tempDir } from "../store/helpers.ts";
import { withoutTs } from "../helpers.ts";
import { serveInProcess, startRestateServer, type RestateServer } from "./restate-server.ts";

// A session made in process and kept in a store (file, SQLite) starts a durable session on a real
// Restate server (restateAgentClient's importFrom), which a durable run then continues.
const lookup = tool({
  name: "lookup",
  description: "Looks a key up.",
  inputSchema: { type: "object", properties: { key: { type: "string" } }, required: ["key"] },
  handler: (input) => `value of ${String(input.key)}`,
});
const seen: Message[][] = [];
const model: InvokeModel = (_tools, session) => {
  seen.push(structuredClone(session.messages));
  const last = session.messages.at(-1)!;
  if ("role" in last && last.role === "user" && last.content === "look up alpha")
    return [{ type: "tool_call", id: "k1", name: "lookup", input: { key: "alpha" } }];
  if ("type" in last && last.type === "tool_result") return [{ role: "assistant", content: "alpha is found" }];
  return [{ role: "assistant", content: `answered after ${session.messages.length} messages` }];
};

async function storedSession(store: SessionStore): Promise<Session> {
  const session = await store.open("local");
  for (const message of initSession("You look things up.", "look up alpha").messages) extendSession(session, message);
  appendEntry(session, "workspace", { workspace: "/w" });
  await agentLoop(model, [lookup], session);
  await closeSession(session);
  return store.load("local");
}

let server: RestateServer;
let close: (() => Promise<void>) | undefined;
beforeAll(async () => {
  server = await startRestateServer();
  close = await serveInProcess(server, [restateAgent({ name: "importer", invokeModel: model, tools: [lookup] })]);
}, 120_000);
afterAll(async () => {
  await close?.();
  await server?.stop();
}, 60_000);

describe("restateAgentClient.importFrom", () => {
  for (const [name, create] of [
    ["file", () => fileStore(tempDir())],
    ["sqlite", () => sqliteStore(join(tempDir(), "s.db"))],
  ] as [string, () => SessionStore][]) {
    it(`starts a durable session from the ${name} store's session; a durable run continues it; a second import is refused`, async () => {
      const store = create();
      const original = await storedSession(store);
      const client = restateAgentClient({ url: server.ingressUrl, name: "importer" });
      const key = `${name}-imported`;
      const imported = await client.importFrom(key, store, { id: "local" });
      expect(imported).toStrictEqual(original);
      expect(await client.session(key)).toStrictEqual(original);
      expect(await client.status(key)).toStrictEqual({ state: "done" });

      seen.length = 0;
      expect(await client.run(key, { message: "and beta?" })).toStrictEqual({
        outcome: "done",
        response: `answered after ${original.messages.length + 1} messages`,
      });
      // The model was shown the imported history, then the new message.
      expect(withoutTs({ messages: seen[0]! })).toStrictEqual(
        withoutTs({ messages: [...original.messages, { role: "user", content: "and beta?" }] }),
      );
      const continued = await client.session(key);
      expect(continued.messages.slice(0, original.messages.length)).toStrictEqual(original.messages);

      await expect(client.importFrom(key, store, { id: "local" })).rejects.toMatchObject({ status: 409 });
      expect(await client.session(key)).toStrictEqual(continued);
    });
  }

  it("refuses a log that does not load (400) and keeps no session", async () => {
    const client = restateAgentClient({ url: server.ingressUrl, name: "importer" });
    const broken: SessionStore = {
      ...fileStore(tempDir()),
      loadEntries: () =>
        Promise.resolve([
          { type: "message", message: { role: "system", content: "s" } },
          { type: "message", message: { type: "tool_result", id: "c1", output: "x", subagentUsage: "lots" } },
        ]),
    };
    await expect(client.importFrom("broken", broken)).rejects.toMatchObject({ status: 400 });
    await expect(client.session("broken")).rejects.toMatchObject({ status: 404 });
  });
});
