import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type * as NodeSqlite from "node:sqlite";
import type { DatabaseSync, SQLInputValue } from "node:sqlite";
import { setSessionId, type Session } from "../session.ts";
import { bindSession, type EntrySink } from "./binding.ts";
import { entryFromBlobs } from "./blobs.ts";
import { replayEntries, restoreKeptOutputs, type LogEntry, type SessionEntry } from "./entries.ts";
import type { SessionStore } from "./session-store.ts";
import { listQuery, summaryTracker, type SummaryTracker } from "./session-summary.ts";
import {
  blobHashesOf,
  checkSessionId,
  leaseLost,
  checkDatabaseOptions,
  fetchedBlobs,
  lockedByOther,
  listStatement,
  newOwner,
  parseEntryRow,
  prepareBatch,
  requestStopStatement,
  schemaStatements,
  sessionColumns,
  stopReason,
  stopRequestedStatement,
  summaryOfRow,
  unknownCursor,
  type LeaseOptions,
  type SessionRow,
  type SqlDialect,
} from "./sql-tables.ts";
import { StoreError } from "./store-error.ts";

export type SqliteStoreOptions = LeaseOptions & {
  /** How long a write waits for another process's transaction on the same file, in ms (default 5,000). */
  busyTimeoutMs?: number;
};

/** A `SessionStore` in one SQLite file; `close()` closes the database once no session is open. */
export type SqliteStore = SessionStore & { path: string; close: () => void };

/**
 * Sessions in the SQLite database at `path` (created with its tables if missing), through Node's
 * built-in `node:sqlite` (Node.js 22.13 or later; no dependency). Same promises as `fileStore`: a
 * bound session's every change is committed before the change returns (one transaction per
 * model turn, or per entry otherwise), in WAL mode with full sync. One writer per session across
 * processes: a lease row (see `LeaseOptions`), renewed while the session is open; a second
 * writer gets a `SessionLockedError`, a writer whose lease expired and was taken over has its
 * writes refused (fenced by the session's sequence number). Tables: see `sql-tables.ts` and
 * docs/store.md.
 */
export function sqliteStore(path: string, options: SqliteStoreOptions = {}): SqliteStore {
  const file = resolve(path);
  const { leaseMs, busyTimeoutMs } = checkDatabaseOptions("sqliteStore", options, { busyTimeoutMs: 5000 });
  let database: DatabaseSync | undefined;
  const connect = (): DatabaseSync => {
    if (database !== undefined) return database;
    const { DatabaseSync } = sqliteModule();
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    const opened = new DatabaseSync(file);
    try {
      opened.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
      opened.exec("PRAGMA journal_mode = WAL");
      opened.exec("PRAGMA synchronous = FULL");
      inTransaction(opened, () => {
        for (const statement of schemaStatements(sqliteDialect)) opened.exec(statement);
      });
    } catch (error) {
      opened.close();
      throw error;
    }
    return (database = opened);
  };
  const where = (id: string): string => `sqlite:${file}/${id}`;

  return {
    path: file,
    open: async (id) => {
      const db = connect();
      checkSessionId(id);
      const owner = newOwner(options);
      const { session, tracker, lastSeq } = inTransaction(db, () => {
        const now = Date.now();
        const row = db.prepare("SELECT lease_owner, lease_expires, last_seq FROM sessions WHERE id = ?").get(id) as
          { lease_owner: string | null; lease_expires: number | null; last_seq: number } | undefined;
        if (row === undefined) {
          db.prepare(
            "INSERT INTO sessions (id, created_at, updated_at, lease_owner, lease_expires) VALUES (?, ?, ?, ?, ?)",
          ).run(id, now, now, owner, now + leaseMs);
        } else {
          if (row.lease_owner !== null && row.lease_expires !== null && row.lease_expires > now)
            throw lockedByOther(where(id), row.lease_owner, row.lease_expires);
          db.prepare("UPDATE sessions SET lease_owner = ?, lease_expires = ? WHERE id = ?").run(
            owner,
            now + leaseMs,
            id,
          );
        }
        const entries = readEntries(db, id, where(id));
        const tracker = summaryTracker();
        for (const entry of entries.entries) tracker.add(entry);
        return { session: entries.session, tracker, lastSeq: row?.last_seq ?? 0 };
      });
      setSessionId(session, id);
      bindSession(session, sqliteWriter(db, { id, where: where(id), owner, leaseMs, lastSeq, tracker }));
      return session;
    },
    load: async (id) => readStored(connect(), checkSessionId(id), where(id)).session,
    loadEntries: async (id) => readStored(connect(), checkSessionId(id), where(id)).entries,
    list: async (listOptions) => {
      const query = listQuery(listOptions);
      const db = connect();
      const now = Date.now();
      let cursor: { time: number; id: string } | undefined;
      if (query.beforeId !== undefined) {
        const row = db.prepare("SELECT updated_at FROM sessions WHERE id = ?").get(query.beforeId) as
          { updated_at: number } | undefined;
        if (row === undefined) throw unknownCursor(query.beforeId);
        cursor = { time: row.updated_at, id: query.beforeId };
      }
      const { sql, parameters } = listStatement(sqliteDialect, query, now, cursor);
      return (db.prepare(sql).all(...parameters) as SessionRow[]).map((row) => summaryOfRow(row, now));
    },
    ...stopMethods(connect, where),
    close: () => {
      database?.close();
      database = undefined;
    },
  };
}

// One session's summary and the stop requests of its writer (see `SessionStore`).
function stopMethods(
  connect: () => DatabaseSync,
  where: (id: string) => string,
): Required<Pick<SessionStore, "summary" | "requestStop" | "stopRequested">> {
  return {
    summary: async (id) => {
      const db = connect();
      const row = db.prepare(`SELECT ${sessionColumns} FROM sessions WHERE id = ?`).get(checkSessionId(id)) as
        SessionRow | undefined;
      if (row === undefined)
        throw new StoreError(`${where(id)}: no session there`, { code: "not-found", path: where(id) });
      return summaryOfRow(row, Date.now());
    },
    requestStop: async (id, reason) => {
      const db = connect();
      const { sql, parameters } = requestStopStatement(
        sqliteDialect,
        checkSessionId(id),
        stopReason(reason),
        Date.now(),
      );
      return Number(db.prepare(sql).run(...parameters).changes) > 0;
    },
    stopRequested: async (id) => {
      const row = connect().prepare(stopRequestedStatement(sqliteDialect)).get(checkSessionId(id)) as
        { reason: string } | undefined;
      return row?.reason;
    },
  };
}

const sqliteDialect: SqlDialect = {
  parameter: () => "?",
  integer: "INTEGER",
  bytes: "BLOB",
  keyedTable: " WITHOUT ROWID",
};

// Loaded when first used, so importing the store works on every Node version.
function sqliteModule(): typeof NodeSqlite {
  const loaded = process.getBuiltinModule?.("node:sqlite") as typeof NodeSqlite | undefined;
  if (loaded === undefined)
    throw new StoreError(
      `sqliteStore needs Node.js 22.13 or later (its built-in node:sqlite module); this is Node.js ${process.version}. Use fileStore or postgresStore here, or a newer Node.js.`,
      { code: "invalid-argument" },
    );
  return loaded;
}

function inTransaction<T>(db: DatabaseSync, work: () => T): T {
  db.exec("BEGIN IMMEDIATE");
  let result: T;
  try {
    result = work();
  } catch (error) {
    db.exec("ROLLBACK");
    throw error;
  }
  db.exec("COMMIT");
  return result;
}

function readStored(db: DatabaseSync, id: string, where: string): { session: Session; entries: LogEntry[] } {
  // One read transaction: the entries and the blobs they name are of one moment.
  db.exec("BEGIN");
  try {
    if (db.prepare("SELECT 1 FROM sessions WHERE id = ?").get(id) === undefined)
      throw new StoreError(`${where}: no session there`, { code: "not-found", path: where });
    return readEntries(db, id, where);
  } finally {
    db.exec("COMMIT");
  }
}

function readEntries(db: DatabaseSync, id: string, where: string): { session: Session; entries: LogEntry[] } {
  const rows = db.prepare("SELECT seq, entry FROM entries WHERE session_id = ? ORDER BY seq").all(id) as {
    seq: number;
    entry: string;
  }[];
  const records = rows.map((row) => ({ value: parseEntryRow(row.entry, where, row.seq), line: row.seq }));
  const hashes = new Set(records.flatMap((record) => blobHashesOf(record.value)));
  if (hashes.size > 0) {
    const blobs = new Map<string, Uint8Array>();
    const select = db.prepare("SELECT data FROM blobs WHERE hash = ?");
    for (const hash of hashes) {
      const row = select.get(hash) as { data: Uint8Array } | undefined;
      if (row !== undefined) blobs.set(hash, row.data);
    }
    const reader = fetchedBlobs(blobs, where);
    for (const record of records) record.value = entryFromBlobs(record.value, reader);
  }
  const { session, entries, kept } = replayEntries(records, where);
  restoreKeptOutputs(session, kept);
  return { session, entries };
}

function sqliteWriter(
  db: DatabaseSync,
  state: { id: string; where: string; owner: string; leaseMs: number; lastSeq: number; tracker: SummaryTracker },
): EntrySink {
  const { id, where, owner, leaseMs, tracker } = state;
  let lastSeq = state.lastSeq;
  let failure: StoreError | undefined;
  let closed = false;
  const update = db.prepare(
    "UPDATE sessions SET last_seq = ?, updated_at = ?, status = ?, title = ?, workspace = ?, lease_expires = ? WHERE id = ? AND lease_owner = ? AND last_seq = ?",
  );
  const insertEntry = db.prepare("INSERT INTO entries (session_id, seq, entry) VALUES (?, ?, ?)");
  const insertBlob = db.prepare("INSERT OR IGNORE INTO blobs (hash, data) VALUES (?, ?)");
  const holder = db.prepare("SELECT lease_owner FROM sessions WHERE id = ?");
  const renew = db.prepare("UPDATE sessions SET lease_expires = ? WHERE id = ? AND lease_owner = ?");

  const appendAll = (batch: SessionEntry[]): void => {
    if (closed) throw new StoreError(`${where}: the session is closed`, { code: "not-open", path: where });
    if (failure !== undefined) throw failure;
    const prepared = prepareBatch(batch, tracker);
    try {
      inTransaction(db, () => {
        const now = Date.now();
        const next = lastSeq + prepared.entries.length;
        const values: SQLInputValue[] = [next, now, prepared.status, prepared.title, prepared.workspace, now + leaseMs];
        const { changes } = update.run(...values, id, owner, lastSeq);
        if (Number(changes) !== 1) {
          const row = holder.get(id) as { lease_owner: string | null } | undefined;
          throw leaseLost(where, owner, row?.lease_owner ?? undefined);
        }
        for (const [hash, data] of prepared.blobs) insertBlob.run(hash, data);
        prepared.entries.forEach((entry, offset) => insertEntry.run(id, lastSeq + 1 + offset, entry));
        lastSeq = next;
      });
    } catch (error) {
      failure =
        error instanceof StoreError
          ? error
          : new StoreError(`${where}: could not record the session: ${String(error)}`, {
              code: "write-failed",
              path: where,
              cause: error,
            });
      throw failure;
    }
  };

  // Renewed while open; a lease found taken refuses every later write.
  const timer = setInterval(
    () => {
      try {
        const { changes } = renew.run(Date.now() + leaseMs, id, owner);
        if (Number(changes) !== 1 && failure === undefined) failure = leaseLost(where, owner, undefined);
      } catch {
        // Busy: the next round tries again, well before the lease ends.
      }
    },
    Math.max(50, Math.floor(leaseMs / 3)),
  );
  timer.unref();

  return {
    append: (entry) => appendAll([entry]),
    appendAll,
    close: () => {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      db.prepare("UPDATE sessions SET lease_owner = NULL, lease_expires = NULL WHERE id = ? AND lease_owner = ?").run(
        id,
        owner,
      );
    },
  };
}
