import { setSessionId, type Session } from "../session.ts";
import { bindSession } from "./binding.ts";
import { entryFromBlobs } from "./blobs.ts";
import { replayEntries, restoreKeptOutputs, type LogEntry } from "./entries.ts";
import {
  createPool,
  nowMs,
  postgresDialect,
  transaction,
  unavailable,
  type PostgresClient,
  type PostgresPool,
} from "./postgres-connection.ts";
import { postgresWriter } from "./postgres-writer.ts";
import type { SessionStore } from "./session-store.ts";
import { listQuery, summaryTracker, type ListQuery, type SessionSummary } from "./session-summary.ts";
import {
  blobHashesOf,
  checkSessionId,
  checkDatabaseOptions,
  fetchedBlobs,
  lockedByOther,
  listStatement,
  newOwner,
  parseEntryRow,
  requestStopStatement,
  schemaStatements,
  sessionColumns,
  stopReason,
  stopRequestedStatement,
  summaryOfRow,
  unknownCursor,
  type LeaseOptions,
  type SessionRow,
} from "./sql-tables.ts";
import { StoreError } from "./store-error.ts";

export type { PostgresClient, PostgresPool } from "./postgres-connection.ts";
import { createSessionWatcher, notifyStatement } from "./postgres-watch.ts";

export type PostgresStoreOptions = LeaseOptions &
  ({ connectionString: string; pool?: never } | { pool: PostgresPool; connectionString?: never }) & {
    /**
     * How long a write keeps retrying while the database cannot be reached (restarted, failed
     * over), in ms (default 60,000). Writes wait in order meanwhile; past it the session's next
     * change throws a `StoreError` with `code: "write-failed"` and `retryable: true`.
     */
    retryMs?: number;
  };

/** A `SessionStore` in PostgreSQL. */
export type PostgresStore = SessionStore & {
  /** Creates the tables and indexes if missing (otherwise done on first use). */
  migrate: () => Promise<void>;
  /** Ends the pool the store made from `connectionString` (a pool passed in is the caller's to end). */
  close: () => Promise<void>;
};

/**
 * Sessions in PostgreSQL through `pg` (an optional peer dependency: install it), from a
 * `connectionString` (the store makes and owns a pool) or a `pool` of yours. The tables (see
 * docs/store.md) are created on first use, or by `migrate()`. Same promises as `fileStore`, with
 * one difference the network makes: a bound session's changes are written in order in the
 * background, one transaction per model turn (or per entry otherwise), so a crash never leaves
 * half a turn; `flushSession(session)` waits until everything so far is committed (the loop's
 * `beforeToolCall` hook can, for a tool that must not run unrecorded), and `closeSession` waits
 * for all of it and rejects if a write failed. While the database is unreachable, writes wait
 * and retry (see `retryMs`), idempotently by sequence number.
 *
 * One writer per session across processes and machines: a lease row with the database's clock,
 * renewed while the session is open; a second writer gets a `SessionLockedError`; after a
 * writer's lease expires the next `open` takes the session over, and the old writer's writes are
 * refused (fenced by the session's sequence number), never interleaved.
 */
export function postgresStore(options: PostgresStoreOptions): PostgresStore {
  const { leaseMs, retryMs } = checkDatabaseOptions("postgresStore", options, { retryMs: 60_000 });
  const given = options as { connectionString?: unknown; pool?: unknown };
  if ((given.pool === undefined) === (given.connectionString === undefined))
    throw new StoreError("postgresStore: give either connectionString or pool", { code: "invalid-argument" });
  if (
    given.connectionString !== undefined &&
    (typeof given.connectionString !== "string" || given.connectionString === "")
  )
    throw new StoreError("postgresStore: connectionString must be a non-empty string", { code: "invalid-argument" });
  let ownPool: Promise<PostgresPool> | undefined;
  const poolOf = (): Promise<PostgresPool> => {
    if (options.pool !== undefined) return Promise.resolve(options.pool);
    return (ownPool ??= createPool(options.connectionString));
  };
  let migrated: Promise<void> | undefined;
  const migrate = (): Promise<void> =>
    (migrated ??= poolOf()
      .then(createTables)
      .catch((error: unknown) => {
        migrated = undefined;
        throw unavailable("could not create the tables", error);
      }));
  const ready = async (): Promise<PostgresPool> => {
    await migrate();
    return poolOf();
  };
  const where = (id: string): string => `postgres:${id}`;
  const watcher = createSessionWatcher(ready);

  return {
    migrate,
    open: async (id) => {
      checkSessionId(id);
      const pool = await ready();
      const owner = newOwner(options);
      const opened = await transaction(pool, (client) => takeLease(client, id, owner, leaseMs));
      const tracker = summaryTracker();
      for (const entry of opened.entries) tracker.add(entry);
      const state = { id, where: where(id), owner, leaseMs, retryMs, tracker, lastSeq: opened.lastSeq };
      setSessionId(opened.session, id);
      bindSession(opened.session, postgresWriter(pool, state));
      return opened.session;
    },
    load: async (id) => (await readStored(await ready(), checkSessionId(id), where(id))).session,
    loadEntries: async (id) => (await readStored(await ready(), checkSessionId(id), where(id))).entries,
    list: async (listOptions) => {
      const query = listQuery(listOptions);
      return listSessions(await ready(), query);
    },
    summary: async (id) => {
      const pool = await ready();
      checkSessionId(id);
      const { rows } = await pool.query(`SELECT ${sessionColumns}, ${nowMs} AS now FROM sessions WHERE id = $1`, [id]);
      const row = rows[0] as (SessionRow & { now: string }) | undefined;
      if (row === undefined)
        throw new StoreError(`${where(id)}: no session there`, { code: "not-found", path: where(id) });
      return summaryOfRow(row, Number(row.now));
    },
    requestStop: async (id, reason) => {
      const pool = await ready();
      const statement = requestStopStatement(postgresDialect, checkSessionId(id), stopReason(reason), { sql: nowMs });
      const result = await pool.query(statement.sql, statement.parameters);
      if ((result.rowCount ?? 0) === 0) return false;
      await pool.query(notifyStatement, [id]);
      return true;
    },
    stopRequested: async (id) => {
      const pool = await ready();
      const { rows } = await pool.query(stopRequestedStatement(postgresDialect), [checkSessionId(id)]);
      return (rows[0] as { reason: string } | undefined)?.reason;
    },
    watch: (id, onChange) => watcher.watch(checkSessionId(id), onChange),
    close: async () => {
      await watcher.close();
      const pool = ownPool;
      ownPool = undefined;
      migrated = undefined;
      if (pool !== undefined) await (await pool).end();
    },
  };
}

// Serialized across processes: concurrent CREATE ... IF NOT EXISTS can still collide.
async function createTables(pool: PostgresPool): Promise<void> {
  await transaction(pool, async (client) => {
    await client.query("SELECT pg_advisory_xact_lock(8157029461)");
    for (const statement of schemaStatements(postgresDialect)) await client.query(statement);
  });
}

// Within a transaction: the session's row inserted if missing, then locked (concurrent opens of one
// id queue here), its lease taken unless another writer's is live, and its entries read.
async function takeLease(
  client: PostgresClient,
  id: string,
  owner: string,
  leaseMs: number,
): Promise<{ session: Session; entries: LogEntry[]; lastSeq: number }> {
  await client.query(
    `INSERT INTO sessions (id, created_at, updated_at) VALUES ($1, ${nowMs}, ${nowMs}) ON CONFLICT (id) DO NOTHING`,
    [id],
  );
  const { rows } = await client.query(
    `SELECT lease_owner, lease_expires, last_seq, ${nowMs} AS now FROM sessions WHERE id = $1 FOR UPDATE`,
    [id],
  );
  const row = rows[0] as { lease_owner: string | null; lease_expires: string | null; last_seq: string; now: string };
  if (row.lease_owner !== null && row.lease_expires !== null && Number(row.lease_expires) > Number(row.now))
    throw lockedByOther(`postgres:${id}`, row.lease_owner, Number(row.lease_expires));
  await client.query(`UPDATE sessions SET lease_owner = $2, lease_expires = ${nowMs} + $3 WHERE id = $1`, [
    id,
    owner,
    leaseMs,
  ]);
  const stored = await readEntries(client, id, `postgres:${id}`);
  return { ...stored, lastSeq: Number(row.last_seq) };
}

async function listSessions(pool: PostgresPool, query: ListQuery): Promise<SessionSummary[]> {
  const { rows: clock } = await pool.query(`SELECT ${nowMs} AS now`);
  const now = Number(clock[0]!.now);
  let cursor: { time: number; id: string } | undefined;
  if (query.beforeId !== undefined) {
    const { rows } = await pool.query("SELECT updated_at FROM sessions WHERE id = $1", [query.beforeId]);
    if (rows[0] === undefined) throw unknownCursor(query.beforeId);
    cursor = { time: Number(rows[0].updated_at), id: query.beforeId };
  }
  const { sql, parameters } = listStatement(postgresDialect, query, now, cursor);
  const { rows } = await pool.query(sql, parameters);
  return (rows as SessionRow[]).map((row) => summaryOfRow(row, now));
}

async function readStored(
  pool: PostgresPool,
  id: string,
  where: string,
): Promise<{ session: Session; entries: LogEntry[] }> {
  // One snapshot: the entries and the blobs they name are of one moment.
  return transaction(pool, async (client) => {
    await client.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY");
    const { rows } = await client.query("SELECT 1 FROM sessions WHERE id = $1", [id]);
    if (rows.length === 0) throw new StoreError(`${where}: no session there`, { code: "not-found", path: where });
    return readEntries(client, id, where);
  });
}

async function readEntries(
  client: PostgresClient,
  id: string,
  where: string,
): Promise<{ session: Session; entries: LogEntry[] }> {
  const { rows } = await client.query("SELECT seq, entry FROM entries WHERE session_id = $1 ORDER BY seq", [id]);
  const records = rows.map((row) => {
    const seq = Number(row.seq);
    return { value: parseEntryRow(row.entry as string, where, seq), line: seq };
  });
  const hashes = [...new Set(records.flatMap((record) => blobHashesOf(record.value)))];
  if (hashes.length > 0) {
    const found = await client.query("SELECT hash, data FROM blobs WHERE hash = ANY($1::text[])", [hashes]);
    const reader = fetchedBlobs(new Map(found.rows.map((row) => [row.hash as string, row.data as Uint8Array])), where);
    for (const record of records) record.value = entryFromBlobs(record.value, reader);
  }
  const { session, entries, kept } = replayEntries(records, where);
  restoreKeptOutputs(session, kept);
  return { session, entries };
}
