import type { Session } from "../session.ts";
import type { LogEntry } from "./entries.ts";
import type { ListOptions, SessionSummary } from "./session-summary.ts";

/**
 * Where sessions live, by id. Every backend keeps the file store's promises, proven by one shared
 * suite (`sessionStoreSuite` of `simple-agent-loop/store/testing`): `open` returns a session
 * bound to its record (each change recorded as it happens, a model turn all or nothing; one
 * writer at a time: a second `open` of the same id throws a `SessionLockedError` until
 * `closeSession`), `load` reads one back exactly, read-only. `fileStore` is the reference
 * implementation; `sqliteStore` and `postgresStore` keep sessions in a database.
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
};
