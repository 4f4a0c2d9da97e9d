// Store throughput: appends per second and load time of a 1,000-turn session for the file,
// SQLite and PostgreSQL stores, and list latency at 100k sessions (SQLite, PostgreSQL).
//   node --conditions=simple-agent-loop-source bench/stores.ts [PG_URL]
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import pg from "pg";
import { extendSession, send } from "../src/index.ts";
import {
  closeSession,
  fileStore,
  flushSession,
  postgresStore,
  sqliteStore,
  type SessionStore,
} from "../src/store/index.ts";

const directory = mkdtempSync(join(tmpdir(), "store-bench-"));
const pgUrl = process.argv[2];
const turns = 1000;

async function appendsAndLoad(name: string, store: SessionStore): Promise<void> {
  const session = await store.open("long");
  const start = performance.now();
  for (let turn = 0; turn < turns; turn++) {
    send(session, `question ${turn}`);
    extendSession(session, { role: "assistant", content: `answer ${turn} ${"x".repeat(200)}` });
  }
  await flushSession(session);
  const elapsed = performance.now() - start;
  await closeSession(session);
  const loadStart = performance.now();
  await store.load("long");
  const loadMs = performance.now() - loadStart;
  console.log(
    `${name}: ${Math.round((2 * turns) / (elapsed / 1000))} appends/s, load of ${turns} turns ${loadMs.toFixed(1)} ms`,
  );
}

await appendsAndLoad("file", fileStore(join(directory, "files")));
const sqlitePath = join(directory, "sessions.db");
await appendsAndLoad("sqlite", sqliteStore(sqlitePath));
if (pgUrl) await appendsAndLoad("postgres", postgresStore({ connectionString: pgUrl }));

// 100k sessions, inserted directly; the list queries what the store's index serves.
const now = Date.now();
const database = new DatabaseSync(sqlitePath);
database.exec("BEGIN");
const insert = database.prepare(
  "INSERT INTO sessions (id, created_at, updated_at, status, title, workspace) VALUES (?, ?, ?, ?, ?, ?)",
);
for (let index = 0; index < 100_000; index++)
  insert.run(
    `s${index}`,
    now - index,
    now - index,
    index % 50 === 0 ? "paused" : "done",
    `task ${index}`,
    `/w${index % 20}`,
  );
database.exec("COMMIT");
database.close();
async function listLatency(name: string, store: SessionStore): Promise<void> {
  for (const [label, options] of [
    ["first page", { limit: 50 }],
    ["page 100", { limit: 50, before: "s5000" }],
    ["paused", { status: "paused" as const, limit: 50 }],
    ["workspace", { workspace: "/w7", limit: 50 }],
  ] as const) {
    await store.list(options);
    const start = performance.now();
    for (let round = 0; round < 20; round++) await store.list(options);
    console.log(`${name} list at 100k, ${label}: ${((performance.now() - start) / 20).toFixed(2)} ms`);
  }
}
await listLatency("sqlite", sqliteStore(sqlitePath));
if (pgUrl) {
  const client = new pg.Client({ connectionString: pgUrl });
  await client.connect();
  await client.query(
    `INSERT INTO sessions (id, created_at, updated_at, status, title, workspace) SELECT 's' || i, $1::bigint - i, $1::bigint - i, CASE WHEN i % 50 = 0 THEN 'paused' ELSE 'done' END, 'task ' || i, '/w' || (i % 20) FROM generate_series(0, 99999) AS i ON CONFLICT DO NOTHING`,
    [now],
  );
  await client.query("ANALYZE sessions");
  await client.end();
  const store = postgresStore({ connectionString: pgUrl });
  await listLatency("postgres", store);
  await store.close();
}
