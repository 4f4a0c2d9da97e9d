import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { backgroundTasks, type Message, type Session } from "simple-agent-loop";
import { loadSession } from "simple-agent-loop/store";
import { expectEveryCallAnsweredOnce } from "../helpers.ts";
import { databaseStore } from "./crash-agent.ts";
import { tempDir } from "./helpers.ts";
import { startChild, type ChildRun } from "./child-process.ts";
import { startTestPostgres, type TestPostgres } from "./postgres-server.ts";

// Real processes, real SIGKILLs, on every store: a child (task-crash-child.ts) starts a rerun task
// (`rebuild`) and a lost one (`deploy`) and is killed while they run, or once both settled and
// before their outcomes were delivered; a new process resumes the session. Each task is rerun once,
// reported lost once or delivered once, never twice, and a second resume changes nothing of that.

const server = await startTestPostgres();
if ("unavailable" in server) console.warn(`\n*** PostgreSQL task crash tests SKIPPED: ${server.unavailable} ***\n`);
else afterAll(() => server.stop());
const postgres: TestPostgres | undefined = "unavailable" in server ? undefined : server;

type Backend = { name: string; location: (name: string) => Promise<string> };
const backends: Backend[] = [
  { name: "file store", location: async (name) => join(tempDir(), `${name}.jsonl`) },
  { name: "sqliteStore", location: async (name) => `sqlite:${join(tempDir(), "sessions.db")}#${name}` },
];
if (postgres !== undefined)
  backends.push({ name: "postgresStore", location: async (name) => `${await postgres.freshSchema()}#${name}` });

for (const backend of backends) {
  describe(`${backend.name}: background tasks across a SIGKILL`, () => {
    it("killed while a rerun and a lost task run: resumed, the rerun task runs once more, the lost one is reported lost, each delivered once", async () => {
      const location = await backend.location("running");
      const effects = join(tempDir(), "running.effects");
      expect(await killedAt(location, effects, "running")).toBe(true);

      const killed = await load(location);
      expect(backgroundTasks(killed).map(({ name, status, attempt }) => [name, status, attempt])).toStrictEqual([
        ["rebuild", "running", 1],
        ["deploy", "running", 1],
      ]);
      expect(deliveries(killed)).toStrictEqual([]);

      await resume(location, effects);
      const resumed = await load(location);
      const [rebuild, deploy] = backgroundTasks(resumed);
      expect(rebuild).toMatchObject({ name: "rebuild", status: "completed", attempt: 2, delivered: true });
      expect(rebuild!.output).toBe("rebuild of app done");
      expect(deploy).toMatchObject({ name: "deploy", status: "lost", attempt: 1, delivered: true });
      // The rerun used the same task id; the lost task's handler never ran again.
      expect(startsOf(effects)).toStrictEqual([
        `rebuild:1:${rebuild!.id}`,
        `deploy:1:${deploy!.id}`,
        `rebuild:2:${rebuild!.id}`,
      ]);
      expect(deliveryCounts(resumed)).toStrictEqual(
        new Map([
          [rebuild!.id, 1],
          [deploy!.id, 1],
        ]),
      );
      const lost = deliveries(resumed).find((message) => message.deliversTask === deploy!.id)!;
      expect(lost.content).toContain("outcome is unknown");
      expectEveryCallAnsweredOnce(resumed);

      // Resumed once more: nothing is rerun, lost or delivered again.
      await resume(location, effects);
      const again = await load(location);
      expect(startsOf(effects)).toHaveLength(3);
      expect(deliveryCounts(again)).toStrictEqual(deliveryCounts(resumed));
    }, 120_000);

    it("killed between the tasks' settling and their delivery: resumed, each outcome is delivered once, no handler runs again", async () => {
      const location = await backend.location("settled");
      const effects = join(tempDir(), "settled.effects");
      expect(await killedAt(location, effects, "settled")).toBe(true);

      const killed = await load(location);
      expect(backgroundTasks(killed).map(({ status, delivered }) => [status, delivered])).toStrictEqual([
        ["completed", false],
        ["completed", false],
      ]);

      await resume(location, effects);
      await resume(location, effects);
      const resumed = await load(location);
      const tasks = backgroundTasks(resumed);
      expect(tasks.map(({ status, delivered, attempt }) => [status, delivered, attempt])).toStrictEqual([
        ["completed", true, 1],
        ["completed", true, 1],
      ]);
      expect(startsOf(effects)).toHaveLength(2);
      expect(deliveryCounts(resumed)).toStrictEqual(new Map(tasks.map((task) => [task.id, 1])));
      expect(deliveries(resumed).map((message) => message.content)).toStrictEqual([
        `[background task ${tasks[0]!.id} (rebuild) completed]\nrebuild of app done`,
        `[background task ${tasks[1]!.id} (deploy) completed]\ndeploy of prod done`,
      ]);
    }, 120_000);

    it("an outcome a toolOutput guardrail blocked when it settled is delivered blocked after the crash, never raw in the log", async () => {
      const location = await backend.location("guarded");
      const effects = join(tempDir(), "guarded.effects");
      // Only the killed process has the guardrail: what it recorded is what the next one delivers.
      const child = startTaskChild(location, effects, "settled", { TASK_CRASH_GUARD: "1" });
      await child.stopped;
      expect(await child.kill()).toBe(true);
      expect(JSON.stringify(await load(location))).not.toContain("SECRET");

      await resume(location, effects);
      const resumed = await load(location);
      expect(deliveries(resumed)).toHaveLength(2);
      for (const delivery of deliveries(resumed)) expect(delivery.content).toContain("[blocked by vault] a secret");
      expect(JSON.stringify(resumed)).not.toContain("SECRET");
      if (databaseStore(location) === undefined) expect(readFileSync(location, "utf8")).not.toContain("SECRET");
      expect(startsOf(effects)).toHaveLength(2);
    }, 120_000);
  });
}

type Delivery = Message & { deliversTask: string; content: string };

function deliveries(session: Session): Delivery[] {
  return session.messages.filter((message): message is Delivery => "deliversTask" in message);
}

function deliveryCounts(session: Session): Map<string, number> {
  const counts = new Map<string, number>();
  for (const message of deliveries(session))
    counts.set(message.deliversTask, (counts.get(message.deliversTask) ?? 0) + 1);
  return counts;
}

function startsOf(path: string): string[] {
  return existsSync(path) ? readFileSync(path, "utf8").split("\n").filter(Boolean) : [];
}

async function load(location: string): Promise<Session> {
  const database = databaseStore(location);
  if (database === undefined) return await loadSession(location);
  try {
    return await database.store.load(database.id);
  } finally {
    await database.store.close();
  }
}

// Runs the child in `mode` until it stops there, then SIGKILLs it: whether the kill ended it.
async function killedAt(location: string, effects: string, mode: "running" | "settled"): Promise<boolean> {
  const child = startTaskChild(location, effects, mode);
  await child.stopped;
  return await child.kill();
}

async function resume(location: string, effects: string): Promise<void> {
  const child = startTaskChild(location, effects, "resume");
  expect(await child.exited).toBe(false);
}

function startTaskChild(location: string, effects: string, mode: string, env?: Record<string, string>): ChildRun {
  return startChild(location, effects, mode, {
    script: "test/store/task-crash-child.ts",
    ...(env === undefined ? {} : { env }),
  });
}
