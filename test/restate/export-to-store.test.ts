// A durable session copied into any store (restateAgentClient's exportTo): the export the agent
// object answers (the file store's JSONL) is served by a fake ingress here; the copy must load
// equal to the session in every store, custom entries kept, and never overwrite a session there.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { agentLoop, extendSession, resolveApproval, tool } from "simple-agent-loop";
import { restateAgentClient } from "simple-agent-loop/restate";
import {
  appendEntry,
  closeSession,
  fileStore,
  loadEntries,
  sqliteStore,
  type SessionStore,
} from "simple-agent-loop/store";
import { scriptedModel } from "simple-agent-loop/testing";
import { tempDir } from "../store/helpers.ts";

const write = tool({
  name: "write",
  description: "writes",
  inputSchema: { type: "object", properties: { text: { type: "string" } } },
  requireApproval: true,
  handler: ({ text }) => `wrote ${String(text)}`,
});

// A session with an approval asked and granted, a custom entry and content parts: its log as Restate exports it.
async function exported(): Promise<{ jsonl: string; source: ReturnType<typeof fileStore> }> {
  const source = fileStore(tempDir());
  const model = scriptedModel([
    [{ type: "tool_call", id: "w1", name: "write", input: { text: "hi" } }],
    [{ role: "assistant", content: "Written." }],
  ]);
  const session = await source.open("durable");
  appendEntry(session, "workspace", { workspace: "/w" });
  extendSession(session, { role: "system", content: "You help." });
  extendSession(session, {
    role: "user",
    content: [
      { type: "text", text: "write hi" },
      { type: "image", mediaType: "image/png", data: "iVBORw0KGgo=" },
    ],
  });
  await agentLoop(model, [write], session);
  resolveApproval(session, "w1", { approved: true });
  await agentLoop(model, [write], session);
  await closeSession(session);
  // Restate keeps the entries themselves (part data inline), not the file's blob references.
  const entries = await loadEntries(source.path("durable"));
  return { jsonl: entries.map((entry) => `${JSON.stringify(entry)}\n`).join(""), source };
}

function ingress(jsonl: string): typeof fetch {
  return (async (url: string) =>
    url.endsWith("/agent/durable/export")
      ? new Response(jsonl, { headers: { "content-type": "application/x-ndjson" } })
      : new Response("not found", { status: 404 })) as typeof fetch;
}

describe("restateAgentClient.exportTo", () => {
  for (const [name, create] of [
    ["file", () => fileStore(tempDir())],
    ["sqlite", () => sqliteStore(join(tempDir(), "s.db"))],
  ] as [string, () => SessionStore][]) {
    it(`copies a durable session into the ${name} store: it loads equal, custom entries kept, an existing session never overwritten`, async () => {
      const { jsonl, source } = await exported();
      const client = restateAgentClient({ url: "http://restate.test", fetch: ingress(jsonl) });
      const store = create();
      const copied = await client.exportTo("durable", store);
      const original = await source.load("durable");
      expect(copied).toStrictEqual(original);
      expect(await store.load("durable")).toStrictEqual(original);
      expect((await store.list())[0]).toMatchObject({
        id: "durable",
        status: "done",
        workspace: "/w",
        title: "write hi",
      });
      const custom = (await store.loadEntries("durable")).filter((entry) => entry.type === "custom");
      expect(custom).toMatchObject([{ customType: "workspace", data: { workspace: "/w" } }]);
      await expect(client.exportTo("durable", store)).rejects.toMatchObject({ code: "invalid-argument" });
      expect(await store.load("durable")).toStrictEqual(original);
      // Under another id too.
      await client.exportTo("durable", store, { id: "copy" });
      expect(await store.load("copy")).toStrictEqual(original);
    });
  }
});
