// A server process for the cross-process stop test: runs one session in its own run registry with
// a store, says on stdout when its tool runs (and the run's id), and how the run ended.
//   node --conditions=simple-agent-loop-source test/http/stored-run-child.ts <file|sqlite|postgres> <location> <session id> [pollMs]
import { writeSync } from "node:fs";
import { agentStream, extendSession, tool } from "simple-agent-loop";
import { createRunRegistry, readEventStream } from "simple-agent-loop/http";
import { closeSession, fileStore, postgresStore, sqliteStore, type SessionStore } from "simple-agent-loop/store";
import { scriptedModel } from "simple-agent-loop/testing";

const [kind, location, sessionId, pollMs = "20"] = process.argv.slice(2);
if (kind === undefined || location === undefined || sessionId === undefined)
  throw new Error("usage: stored-run-child.ts <file|sqlite|postgres> <location> <session id>");
const say = (value: unknown): void => void writeSync(1, `${JSON.stringify(value)}\n`);

const store: SessionStore & { close?: () => unknown } =
  kind === "file"
    ? fileStore(location)
    : kind === "sqlite"
      ? sqliteStore(location)
      : postgresStore({ connectionString: location });
const registry = createRunRegistry({ store, pollMs: Number(pollMs) });
let runId = "";
// Runs until the run is aborted: only a stop can end it.
const block = tool({
  name: "block",
  description: "blocks until stopped",
  inputSchema: { type: "object" },
  handler: (_input, { signal }) => {
    say({ started: runId });
    return new Promise((resolve) => signal.addEventListener("abort", () => resolve("stopped"), { once: true }));
  },
});
const session = await store.open(sessionId);
extendSession(session, { role: "system", content: "You help." });
extendSession(session, { role: "user", content: "block" });
const stream = agentStream(
  scriptedModel([[{ type: "tool_call", id: "b1", name: "block", input: {} }], [{ role: "assistant", content: "?" }]]),
  [block],
  session,
);
const closed = stream.result.finally(() => closeSession(session));
runId = registry.start(stream);
let end: unknown;
for await (const event of readEventStream(registry.response(runId, new Request("http://localhost/")))) end = event;
await closed;
await store.close?.();
say({ ended: end });
