import type { Session } from "../session.ts";
import type { LogEntry } from "./entries.ts";
import type { ListOptions, SessionSummary } from "./session-summary.ts";

/**
 * Where sessions live, by id. Every backend keeps the file store's promises, proven by one shared
 * suite (`sessionStoreSuite` of `simple-agent-loop/store/testing`): `open` returns a session
 * bound to its record (each change recorded as it happens, a model turn all or nothing; one
 * writer at a time: a second `open` of the same id throws a `SessionLockedError` until
 * `closeSession`), `load` reads one back exactly, read-only. `fileStore` is the reference
 * implementation; `sqliteStore` and `postgresStore` keep sessions in a database. All three have
 * the optional `summary`, `requestStop` and `stopRequested` too (a stop reaches a run owned by
 * another process through them).
 */
export type SessionStore = {
  /** The session stored under `id`, or a new empty one, bound to the store. Close it with `closeSession`. */
  open: (id: string) => Promise<Session>;
  /** The session stored under `id`, read-only and unbound; throws a `not-found` StoreError if there is none. */
  load: (id: string) => Promise<Session>;
  /** Every entry recorded for `id`, in order (messages, replacements, updates, custom entries); `not-found` if none. */
  loadEntries: (id: string) => Promise<LogEntry[]>;
  /** One page of the stored sessions, newest first (see `ListOptions`). */
  list: (options?: ListOptions) => Promise<SessionSummary[]>;
  /** One stored session's summary, as `list` gives it; `not-found` if there is none. */
  summary?: (id: string) => Promise<SessionSummary>;
  /**
   * Asks the writer that holds session `id` right now (the run recording it, in this process or
   * another, on this machine or another) to stop: resolves `true` once the request is recorded for
   * that writer, `false` when no writer holds the session. The writer learns of it through
   * `stopRequested`, which a run registry given this store polls (`createRunRegistry({ store })`
   * aborts the run). A request is for that writer only: the session's next writer starts clean.
   */
  requestStop?: (id: string, reason?: string) => Promise<boolean>;
  /** The reason of a stop request (`requestStop`) addressed to the writer that holds `id` now, if one was made. */
  stopRequested?: (id: string) => Promise<string | undefined>;
  /**
   * Pushes changes: calls `onChange` soon after session `id` changes in any process (entries
   * committed, its writer letting go, a stop request), so a reader waits for no poll. Resolves
   * with the function that stops watching; `undefined` when this store cannot push now (the
   * reader then polls). `postgresStore` pushes (LISTEN/NOTIFY, with a pool of `pg`); the file
   * and SQLite stores have no `watch`: readers poll them.
   */
  watch?: (id: string, onChange: () => void) => Promise<(() => void) | undefined>;
};
