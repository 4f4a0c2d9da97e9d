import { jsonNestedDeeperThan, maxJsonDepth } from "../session.ts";
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { SessionEntry } from "./entries.ts";
import { blobHash, entryFromBlobs, entryToBlobs } from "./blobs.ts";
import type { ListQuery, SessionSummary, SummaryTracker } from "./session-summary.ts";
import { describeValue } from "../errors.ts";
import { SessionLockedError, StoreError } from "./store-error.ts";

/**
 * What the database stores share: the tables (the same in SQLite and PostgreSQL, apart from
 * column types), the list query, the lease rules and how a batch of entries becomes rows.
 *
 * Tables:
 * - `sessions`: one row per session: `id`, `created_at` and `updated_at` (ms since the epoch;
 *   `updated_at` is the last write, the list's order), `last_seq` (the sequence number of its
 *   last entry), `status` at rest (`done`, `paused`, `error`), `title` (the first user message),
 *   `workspace`, and the lease: `lease_owner` and `lease_expires` (ms), null when no writer holds it.
 * - `entries`: `(session_id, seq)` → `entry`, one JSON entry as text (the file store's line); `seq`
 *   counts from 1 per session without gaps.
 * - `blobs`: `hash` (SHA-256, hex) → `data` (bytes): content parts' data, once per store.
 * - `stop_requests`: `session_id` → `owner` (the lease owner asked to stop), `reason`,
 *   `requested_at` (ms): `requestStop`'s record, read by the writer it names (`stopRequested`).
 */
export type SqlDialect = {
  /** A placeholder for the n-th parameter (1-based): `?` or `$n`. */
  parameter: (index: number) => string;
  integer: string;
  bytes: string;
  /** Clause after a table definition that has a primary key (SQLite's `WITHOUT ROWID`). */
  keyedTable: string;
};

export function schemaStatements(dialect: SqlDialect): string[] {
  const { integer, bytes, keyedTable } = dialect;
  return [
    `CREATE TABLE IF NOT EXISTS sessions (
      id TEXT PRIMARY KEY,
      created_at ${integer} NOT NULL,
      updated_at ${integer} NOT NULL,
      last_seq ${integer} NOT NULL DEFAULT 0,
      status TEXT NOT NULL DEFAULT 'done',
      title TEXT,
      workspace TEXT,
      lease_owner TEXT,
      lease_expires ${integer}
    )`,
    "CREATE INDEX IF NOT EXISTS sessions_by_activity ON sessions (updated_at DESC, id DESC)",
    "CREATE INDEX IF NOT EXISTS sessions_by_status ON sessions (status, updated_at DESC, id DESC)",
    "CREATE INDEX IF NOT EXISTS sessions_by_workspace ON sessions (workspace, updated_at DESC, id DESC)",
    `CREATE TABLE IF NOT EXISTS entries (
      session_id TEXT NOT NULL,
      seq ${integer} NOT NULL,
      entry TEXT NOT NULL,
      PRIMARY KEY (session_id, seq)
    )${keyedTable}`,
    `CREATE TABLE IF NOT EXISTS blobs (hash TEXT PRIMARY KEY, data ${bytes} NOT NULL)${keyedTable}`,
    `CREATE TABLE IF NOT EXISTS stop_requests (
      session_id TEXT PRIMARY KEY,
      owner TEXT NOT NULL,
      reason TEXT NOT NULL,
      requested_at ${integer} NOT NULL
    )${keyedTable}`,
  ];
}

/**
 * Records a stop request for the writer that holds session `id` now (its live lease); `now` as in
 * `listStatement`. Inserts no row (0 changes) when no writer holds the session.
 */
export function requestStopStatement(
  dialect: SqlDialect,
  id: string,
  reason: string,
  now: number | { sql: string },
): { sql: string; parameters: (string | number)[] } {
  const parameters: (string | number)[] = [];
  const add = (value: string | number): string => {
    parameters.push(value);
    return dialect.parameter(parameters.length);
  };
  const nowSql = (): string => (typeof now === "number" ? add(now) : now.sql);
  const sql = `INSERT INTO stop_requests (session_id, owner, reason, requested_at)
    SELECT id, lease_owner, ${add(reason)}, ${nowSql()} FROM sessions
    WHERE id = ${add(id)} AND lease_owner IS NOT NULL AND lease_expires > ${nowSql()}
    ON CONFLICT (session_id) DO UPDATE SET owner = excluded.owner, reason = excluded.reason, requested_at = excluded.requested_at`;
  return { sql, parameters };
}

/** The reason of a stop request addressed to the writer holding session `$1` now, if any. */
export function stopRequestedStatement(dialect: SqlDialect): string {
  return `SELECT r.reason FROM stop_requests r JOIN sessions s ON s.id = r.session_id
    WHERE r.session_id = ${dialect.parameter(1)} AND r.owner = s.lease_owner`;
}

/** The default reason of `requestStop`. */
export const defaultStopReason = "stopped";

/** Checks `requestStop`'s reason (a string of at most 1,000 characters), with the default filled in. */
export function stopReason(reason: unknown): string {
  if (reason === undefined) return defaultStopReason;
  if (typeof reason !== "string" || reason.length > 1000)
    throw new StoreError(
      `requestStop: reason must be a string of at most 1000 characters; got ${describeValue(reason)}`,
      {
        code: "invalid-argument",
      },
    );
  return reason;
}

/** Session ids: 1 to 128 letters, digits, `.`, `_` and `-` (as the file store's), so a URL or a log line can name one. */
export function checkSessionId(id: string): string {
  if (typeof id === "string" && /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/.test(id)) return id;
  throw new StoreError(
    `invalid session id ${JSON.stringify(id)}: use 1 to 128 letters, digits, ".", "_" or "-", not starting with "."`,
    { code: "invalid-argument" },
  );
}

/** Lease options of the database stores. */
export type LeaseOptions = {
  /**
   * How long a writer's lease lasts without renewal, in ms (default 30,000). An open session
   * renews it every third of that; a writer that stops (killed, hung, cut off) loses the session
   * to the next `open` once it expires.
   */
  leaseMs?: number;
  /** A name for this writer in leases and errors; default `<host>:<pid>`. A random suffix is added per open. */
  owner?: string;
};

/**
 * Checks a database store's options where they enter (an object; `owner` a non-empty string;
 * `leaseMs` an integer of at least 100; each of `durations` a non-negative integer) and returns
 * the durations with their defaults. Throws an `invalid-argument` StoreError naming the option.
 */
export function checkDatabaseOptions<Name extends string>(
  caller: string,
  options: unknown,
  durations: Record<Name, number>,
): Record<Name | "leaseMs", number> {
  const invalid = (message: string): StoreError =>
    new StoreError(`${caller}: ${message}`, { code: "invalid-argument" });
  if (typeof options !== "object" || options === null || Array.isArray(options))
    throw invalid(`options must be an object; got ${describeValue(options)}`);
  const given = options as Record<string, unknown>;
  if (given.owner !== undefined && (typeof given.owner !== "string" || given.owner === ""))
    throw invalid(`owner must be a non-empty string; got ${describeValue(given.owner)}`);
  const resolved = { leaseMs: 30_000, ...durations } as Record<Name | "leaseMs", number>;
  for (const name of Object.keys(resolved) as (Name | "leaseMs")[]) {
    const value = given[name] ?? resolved[name];
    const least = name === "leaseMs" ? 100 : 0;
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < least)
      throw invalid(`${name} must be an integer of at least ${least} (ms); got ${describeValue(value)}`);
    resolved[name] = value;
  }
  return resolved;
}

/** A new lease owner: the writer's name and a random part, so two opens never share a lease. */
export function newOwner(options: LeaseOptions): string {
  return `${options.owner ?? `${hostname()}:${process.pid}`}:${randomBytes(4).toString("hex")}`;
}

export function lockedByOther(where: string, owner: string, expires: number): SessionLockedError {
  const expiresAt = new Date(expires).toISOString();
  return new SessionLockedError(
    `${where} is open for writing by ${owner} (its lease runs to ${expiresAt} unless renewed): a session has one writer at a time. Close it there first; if that writer is gone, open it again once the lease expires.`,
    { path: where, owner, expiresAt },
  );
}

export function leaseLost(where: string, owner: string, holder: string | undefined): SessionLockedError {
  return new SessionLockedError(
    `${where}: this writer (${owner}) lost its lease${holder === undefined ? "" : ` to ${holder}`}, so its write was refused; the session is no longer recorded here. Open it again to go on from what is stored.`,
    holder === undefined ? { path: where } : { path: where, owner: holder },
  );
}

/** A batch of entries as the rows that record it, and what the session's row says afterwards. */
export type PreparedBatch = {
  entries: string[];
  blobs: Map<string, Buffer>;
  status: string;
  title: string | null;
  workspace: string | null;
};

/** Serializes `batch` (a value JSON cannot hold throws here, before anything is written) and feeds it to `tracker`. */
export function prepareBatch(batch: readonly SessionEntry[], tracker: SummaryTracker): PreparedBatch {
  const entries: string[] = [];
  const blobs = new Map<string, Buffer>();
  // Content parts' data goes to the blobs table, written in the batch's transaction.
  const collect = {
    write: (bytes: Uint8Array): string => {
      const hash = blobHash(bytes);
      blobs.set(hash, Buffer.from(bytes));
      return hash;
    },
  };
  for (const entry of batch) entries.push(JSON.stringify(entryToBlobs(entry, collect)));
  for (const entry of batch) tracker.add(entry);
  return {
    entries,
    blobs,
    status: tracker.resting(),
    title: tracker.title() ?? null,
    workspace: tracker.workspace() ?? null,
  };
}

/** A `sessions` row as the list reads it. */
export type SessionRow = {
  id: string;
  updated_at: number | bigint | string;
  status: string;
  title: string | null;
  workspace: string | null;
  lease_owner: string | null;
  lease_expires: number | bigint | string | null;
};

export const sessionColumns = "id, updated_at, status, title, workspace, lease_owner, lease_expires";

/**
 * The list query for `query`, with its parameters; `now` is an SQL expression or a parameter
 * value for the current time in ms. `before` an id is resolved by the caller to `cursor`.
 */
export function listStatement(
  dialect: SqlDialect,
  query: ListQuery,
  now: number | { sql: string },
  cursor: { time: number; id: string } | undefined,
): { sql: string; parameters: (string | number)[] } {
  const parameters: (string | number)[] = [];
  const add = (value: string | number): string => {
    parameters.push(value);
    return dialect.parameter(parameters.length);
  };
  const nowSql = (): string => (typeof now === "number" ? add(now) : now.sql);
  const conditions: string[] = [];
  if (query.workspace !== undefined) conditions.push(`workspace = ${add(query.workspace)}`);
  if (query.status === "paused") conditions.push("status = 'paused'");
  else if (query.status === "running")
    conditions.push(`status <> 'paused' AND lease_owner IS NOT NULL AND lease_expires > ${nowSql()}`);
  else if (query.status !== undefined)
    conditions.push(
      `status = ${add(query.status)} AND (lease_owner IS NULL OR lease_expires IS NULL OR lease_expires <= ${nowSql()})`,
    );
  if (cursor !== undefined) {
    const time = add(cursor.time);
    conditions.push(`(updated_at < ${time} OR (updated_at = ${add(cursor.time)} AND id < ${add(cursor.id)}))`);
  } else if (query.beforeTime !== undefined) conditions.push(`updated_at < ${add(query.beforeTime)}`);
  const where = conditions.length === 0 ? "" : ` WHERE ${conditions.join(" AND ")}`;
  return {
    sql: `SELECT ${sessionColumns} FROM sessions${where} ORDER BY updated_at DESC, id DESC LIMIT ${add(query.limit)}`,
    parameters,
  };
}

export function summaryOfRow(row: SessionRow, now: number): SessionSummary {
  const expires = row.lease_expires === null ? undefined : Number(row.lease_expires);
  const running = row.status !== "paused" && row.lease_owner !== null && expires !== undefined && expires > now;
  const summary: SessionSummary = {
    id: row.id,
    lastActivity: new Date(Number(row.updated_at)).toISOString(),
    status: running ? "running" : (row.status as SessionSummary["status"]),
  };
  if (running) summary.owner = row.lease_owner!;
  if (row.title !== null) summary.title = row.title;
  if (row.workspace !== null) summary.workspace = row.workspace;
  return summary;
}

export function unknownCursor(id: string): StoreError {
  return new StoreError(`list: before names no stored session (${JSON.stringify(id)})`, { code: "invalid-argument" });
}

/** One `entries` row's JSON; a `malformed` StoreError naming the session and sequence number if it is not JSON. */
export function parseEntryRow(text: string, where: string, seq: number): unknown {
  if (jsonNestedDeeperThan(text))
    throw new StoreError(`${where}:${seq}: nested more than ${maxJsonDepth} levels deep`, { code: "malformed" });
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new StoreError(`${where}:${seq}: not valid JSON`, {
      code: "malformed",
      path: where,
      line: seq,
      cause: error,
    });
  }
}

/** The blob hashes `entry` refers to (content parts stored as `blob: <hash>`). */
export function blobHashesOf(entry: unknown): string[] {
  const hashes: string[] = [];
  entryFromBlobs(entry, {
    read: (hash) => {
      hashes.push(hash);
      return new Uint8Array();
    },
  });
  return hashes;
}

/** A reader of blobs already fetched; a missing one is a `not-found` StoreError naming the session. */
export function fetchedBlobs(
  blobs: ReadonlyMap<string, Uint8Array>,
  where: string,
): { read: (hash: string) => Uint8Array } {
  return {
    read: (hash) => {
      const bytes = blobs.get(hash);
      if (bytes === undefined)
        throw new StoreError(`${where}: no blob ${hash}, which an entry refers to`, { code: "not-found", path: where });
      return bytes;
    },
  };
}
