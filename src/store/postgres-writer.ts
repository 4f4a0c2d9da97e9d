import { notifyStatement } from "./postgres-watch.ts";
import { errorMessage } from "../errors.ts";
import type { EntrySink } from "./binding.ts";
import type { SessionEntry } from "./entries.ts";
import { delay, isUnavailable, nowMs, transaction, type PostgresPool } from "./postgres-connection.ts";
import type { SummaryTracker } from "./session-summary.ts";
import { leaseLost, prepareBatch, type PreparedBatch } from "./sql-tables.ts";
import { SessionLockedError, StoreError } from "./store-error.ts";

/** What a writer of one session knows: where it writes, as whom, and how far the session goes. */
export type WriterState = {
  id: string;
  where: string;
  owner: string;
  leaseMs: number;
  retryMs: number;
  lastSeq: number;
  tracker: SummaryTracker;
};

/**
 * The EntrySink of a session open in PostgreSQL: each batch (a model turn) is serialized at once
 * (a value JSON cannot hold throws there) and written in the background, in order, one
 * transaction each. The first failure stops the recording: every later change throws it, and
 * `flush`/`close` reject with it. The lease is renewed while the session is open.
 */
export function postgresWriter(pool: PostgresPool, state: WriterState): EntrySink & { flush: () => Promise<void> } {
  const { where, tracker } = state;
  const position = { lastSeq: state.lastSeq };
  let failure: StoreError | undefined;
  let closed = false;
  let queue: Promise<void> = Promise.resolve();

  const appendAll = (entries: SessionEntry[]): void => {
    if (closed) throw new StoreError(`${where}: the session is closed`, { code: "not-open", path: where });
    if (failure !== undefined) throw failure;
    const batch = prepareBatch(entries, tracker);
    queue = queue.then(async () => {
      if (failure !== undefined) return;
      try {
        await writeBatch(pool, state, position, batch);
      } catch (error) {
        failure = recordingStopped(where, error);
      }
    });
  };

  const flush = async (): Promise<void> => {
    await queue;
    if (failure !== undefined) throw failure;
  };

  // Renewals go through the queue, in order with the writes.
  const timer = setInterval(
    () => {
      queue = queue.then(async () => {
        if (failure !== undefined || closed) return;
        if (!(await renewLease(pool, state))) failure = leaseLost(where, state.owner, undefined);
      });
    },
    Math.max(50, Math.floor(state.leaseMs / 3)),
  );
  timer.unref();

  return {
    append: (entry) => appendAll([entry]),
    appendAll,
    flush,
    close: async () => {
      if (closed) return flush();
      closed = true;
      clearInterval(timer);
      try {
        await flush();
      } finally {
        await pool
          .query("UPDATE sessions SET lease_owner = NULL, lease_expires = NULL WHERE id = $1 AND lease_owner = $2", [
            state.id,
            state.owner,
          ])
          .then(() => pool.query(notifyStatement, [state.id]))
          .catch(() => undefined);
      }
    },
  };
}

// One batch in one transaction, fenced: only while this writer holds the lease and the session
// ends where this writer left it. Retried while the database cannot be reached, up to `retryMs`.
async function writeBatch(
  pool: PostgresPool,
  state: WriterState,
  position: { lastSeq: number },
  batch: PreparedBatch,
): Promise<void> {
  const { id, where, owner, leaseMs, retryMs } = state;
  const from = position.lastSeq;
  const next = from + batch.entries.length;
  const started = Date.now();
  for (let attempt = 0; ; attempt++) {
    try {
      await transaction(pool, async (client) => {
        const { rows } = await client.query("SELECT lease_owner, last_seq FROM sessions WHERE id = $1 FOR UPDATE", [
          id,
        ]);
        const row = rows[0] as { lease_owner: string | null; last_seq: string } | undefined;
        // A retried commit whose answer was lost: it is there already.
        if (attempt > 0 && row?.lease_owner === owner && Number(row.last_seq) === next) return;
        if (row === undefined || row.lease_owner !== owner || Number(row.last_seq) !== from)
          throw leaseLost(where, owner, row?.lease_owner ?? undefined);
        if (batch.blobs.size > 0)
          await client.query(
            "INSERT INTO blobs (hash, data) SELECT * FROM unnest($1::text[], $2::bytea[]) ON CONFLICT (hash) DO NOTHING",
            [[...batch.blobs.keys()], [...batch.blobs.values()]],
          );
        await client.query(
          "INSERT INTO entries (session_id, seq, entry) SELECT $1, $2::bigint + ordinality, entry FROM unnest($3::text[]) WITH ORDINALITY AS batch(entry, ordinality)",
          [id, from, batch.entries],
        );
        await client.query(
          `UPDATE sessions SET last_seq = $2, updated_at = ${nowMs}, status = $3, title = $4, workspace = $5, lease_expires = ${nowMs} + $6 WHERE id = $1`,
          [id, next, batch.status, batch.title, batch.workspace, leaseMs],
        );
        // Sent on commit: readers of the session in other processes wake at once.
        await client.query(notifyStatement, [id]);
      });
      position.lastSeq = next;
      return;
    } catch (error) {
      if (error instanceof SessionLockedError || !isUnavailable(error) || Date.now() - started > retryMs) throw error;
      await delay(Math.min(2000, 50 * 2 ** attempt));
    }
  }
}

// False when the lease is someone else's now; an unreachable database is tried again next round.
async function renewLease(pool: PostgresPool, state: WriterState): Promise<boolean> {
  try {
    const result = await pool.query(
      `UPDATE sessions SET lease_expires = ${nowMs} + $3 WHERE id = $1 AND lease_owner = $2`,
      [state.id, state.owner, state.leaseMs],
    );
    return result.rowCount !== 0;
  } catch {
    return true;
  }
}

function recordingStopped(where: string, error: unknown): StoreError {
  if (error instanceof StoreError && error.code === "locked") return error;
  return new StoreError(`${where}: could not record the session: ${errorMessage(error)}`, {
    code: "write-failed",
    path: where,
    cause: error,
    retryable: isUnavailable(error),
  });
}
