import type { Session } from "../session.ts";

/**
 * Where sessions live, by id. Every backend keeps the file store's promises: `open` returns a
 * session bound to its record (each change recorded before the loop goes on, one writer at a
 * time: a second `open` of the same id throws a `locked` StoreError until `closeSession`), `load`
 * reads one back exactly, read-only. `fileStore` is the reference implementation.
 */
export type SessionStore = {
  /** The session stored under `id`, or a new empty one, bound to the store. Close it with `closeSession`. */
  open: (id: string) => Promise<Session>;
  /** The session stored under `id`, read-only and unbound; throws a `not-found` StoreError if there is none. */
  load: (id: string) => Promise<Session>;
  /** The ids of the stored sessions, sorted. */
  list: () => Promise<string[]>;
};
