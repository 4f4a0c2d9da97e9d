import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Session } from "simple-agent-loop";
import { expectEveryCallAnsweredOnce, withoutTs } from "../helpers.ts";
import { callIds, databaseStore, runCrashAgent } from "./crash-agent.ts";
import { crashChild, startChild } from "./child-process.ts";
import { answeredIds, expectValidLog, tempDir } from "./helpers.ts";
import { startTestPostgres, type TestPostgres } from "./postgres-server.ts";

// Real processes against real databases: the crash agent (crash-agent.ts) runs in a child on a
// SQLite file or a PostgreSQL server, is killed with SIGKILL mid-turn, and the session is loaded
// (valid: each result after its call, at most one per call) and resumed in this process to the
// end: equal to an uninterrupted run's, no recorded tool run again. Two children race for one
// session: one runs it, the other gets a SessionLockedError. PostgreSQL restarted during a run:
// the run waits and goes on (writes retried in order), and the session equals an uninterrupted one.

const server = await startTestPostgres();
if ("unavailable" in server) console.warn(`\n*** PostgreSQL fault tests SKIPPED: ${server.unavailable} ***\n`);
else afterAll(() => server.stop());
const postgres: TestPostgres | undefined = "unavailable" in server ? undefined : server;

type Backend = { name: string; location: (name: string) => Promise<string> };
const backends: Backend[] = [
  { name: "sqliteStore", location: async (name) => `sqlite:${join(tempDir(), "sessions.db")}#${name}` },
];
if (postgres !== undefined)
  backends.push({ name: "postgresStore", location: async (name) => `${await postgres.freshSchema()}#${name}` });

const points = ["model:1", "effect:b1", "result:3", "start:c2", "message:1", "model:4"];

for (const backend of backends) {
  describe(`${backend.name}: a writer killed with SIGKILL, then resumed`, () => {
    it("loads valid after each kill and resumes to the same session as an uninterrupted run", async () => {
      const directory = tempDir();
      const baseline = await runCrashAgent(await backend.location("baseline"), join(directory, "baseline.effects"));
      const runs = await Promise.all(
        points.map(async (point, index) => {
          const location = await backend.location(`run-${index}`);
          const effectsPath = join(directory, `run-${index}.effects`);
          const killed = await crashChild(location, effectsPath, point);
          const afterKill = await load(location);
          expectValidLog(afterKill);
          const answered = answeredIds(afterKill);
          await leaseExpired(location);
          const final = await runCrashAgent(location, effectsPath);
          return { point, killed, answered, final, loaded: await load(location), effects: countEffects(effectsPath) };
        }),
      );
      for (const { point, killed, answered, final, loaded, effects } of runs) {
        expect(killed, point).toBe(true);
        expect(loaded, point).toStrictEqual(final);
        expectEveryCallAnsweredOnce(final);
        expect(withoutTs(final), point).toStrictEqual(withoutTs(baseline));
        // A call whose result was stored before the kill never ran again; any other at most once more.
        for (const id of callIds) {
          expect(effects.get(id) ?? 0, `${point} ${id}`).toBeLessThanOrEqual(answered.has(id) ? 1 : 2);
          expect(effects.get(id) ?? 0, `${point} ${id}`).toBeGreaterThanOrEqual(1);
        }
      }
      // A kill during a model call leaves the turns before it whole, and nothing of that turn.
      const second = runs.find((run) => run.point === "model:1")!;
      expect(second.answered).toStrictEqual(new Set(["a1", "a2"]));
    }, 240_000);

    it("two processes racing for one session: one runs it, the other gets a SessionLockedError", async () => {
      const directory = tempDir();
      const location = await backend.location("raced");
      const first = startChild(location, join(directory, "first.effects"));
      const second = startChild(location, join(directory, "second.effects"));
      const outcomes = await Promise.allSettled([first.exited, second.exited]);
      const done = outcomes.filter((outcome) => outcome.status === "fulfilled");
      const refused = outcomes.flatMap((outcome) => (outcome.status === "rejected" ? [String(outcome.reason)] : []));
      expect(done).toHaveLength(1);
      expect(refused).toHaveLength(1);
      expect(refused[0]).toMatch(/SessionLockedError/);
      const session = await load(location);
      expectEveryCallAnsweredOnce(session);
      expect(callIds.every((id) => answeredIds(session).has(id))).toBe(true);
    }, 120_000);
  });
}

describe.skipIf(postgres?.restart === undefined)("postgresStore: the database restarted during a run", () => {
  it("waits for the database and goes on: the run ends as an uninterrupted one, every write in order", async () => {
    const directory = tempDir();
    const baseline = await runCrashAgent(
      `${await postgres!.freshSchema()}#baseline`,
      join(directory, "baseline.effects"),
    );
    const location = `${await postgres!.freshSchema()}#restarted`;
    let restarted: Promise<void> | undefined;
    const final = await runCrashAgent(location, join(directory, "run.effects"), {
      modelCall: (turn) => {
        if (turn === 2) restarted ??= postgres!.restart!();
      },
    });
    await restarted;
    expect(withoutTs(final)).toStrictEqual(withoutTs(baseline));
    expect(await load(location)).toStrictEqual(final);
    expect(countEffects(join(directory, "run.effects"))).toStrictEqual(new Map(callIds.map((id) => [id, 1])));
  }, 120_000);
});

// The killed writer's lease holds the session until it expires: the list says when it is no longer running.
async function leaseExpired(location: string): Promise<void> {
  const { store, id } = databaseStore(location)!;
  try {
    for (;;) {
      const summary = (await store.list({ limit: 10_000 })).find((listed) => listed.id === id);
      if (summary?.status !== "running") return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    await store.close();
  }
}

async function load(location: string): Promise<Session> {
  const { store, id } = databaseStore(location)!;
  try {
    return await store.load(id);
  } catch (error) {
    if ((error as { code?: unknown }).code === "not-found") return { messages: [] };
    throw error;
  } finally {
    await store.close();
  }
}

function countEffects(path: string): Map<string, number> {
  const counts = new Map<string, number>();
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return counts;
  }
  for (const id of text.split("\n").filter(Boolean)) counts.set(id, (counts.get(id) ?? 0) + 1);
  return counts;
}
