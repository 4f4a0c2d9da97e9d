import { onSessionChange, now, type JsonValue, type Session, type SessionChange } from "../session.ts";
import { entryFor, type CustomEntry, type SessionEntry } from "./entries.ts";
import { StoreError } from "./store-error.ts";

/** Where the entries of a bound session go: a store backend's writer. */
export type EntrySink = {
  /**
   * Records one entry before returning, or throws. Called synchronously from the session's
   * changes, so a change is recorded before the loop goes on (calls a model, runs a tool).
   */
  append: (entry: SessionEntry) => void;
  /**
   * Records several entries as one write (a model turn), all or none: a crash leaves either the
   * whole batch or none of it. Optional: without it, each entry goes through `append`.
   */
  appendAll?: (entries: SessionEntry[]) => void;
  /** Makes what was appended durable and releases what the sink holds (a file, a lock). */
  close: () => void | Promise<void>;
  /**
   * For a sink that writes in the background (a database over the network): resolves once
   * everything appended so far is durable, rejects with the error that stopped the recording.
   * Without it, `append` records before returning.
   */
  flush?: () => Promise<void>;
};

type Binding = { sink: EntrySink; unbind: () => void; catchUp: (upTo: number) => void };

const bindings = new WeakMap<Session, Binding>();

/**
 * Binds `session` to `sink`: from now on every change the library makes to it (each message that
 * enters it, compaction's replacements, approval updates) is appended to the sink the moment it
 * happens. For store backends; `openSession` and `SessionStore.open` return sessions bound this
 * way. Messages pushed onto `session.messages` directly are recorded at the next change (or at
 * `closeSession`); removing messages other than through `spliceSession` throws a `modified`
 * StoreError at the next change (fork it with `forkSession` to branch instead).
 */
export function bindSession(session: Session, sink: EntrySink): void {
  if (bindings.has(session))
    throw new StoreError("bindSession: this session is already bound to a store; close it first (closeSession)", {
      code: "invalid-argument",
    });
  let recorded = session.messages.length;
  // Records the messages before `upTo` not recorded yet. `upTo` below what is recorded means
  // messages were removed (an append at such an index, or a shorter session).
  const catchUp = (upTo: number): void => {
    if (upTo < recorded) {
      throw new StoreError(
        `the session lost messages (${recorded} recorded, ${upTo} left): a stored session's messages can only grow; fork it (forkSession) to branch`,
        { code: "modified" },
      );
    }
    for (; recorded < upTo; recorded++) sink.append({ type: "message", message: session.messages[recorded]! });
  };
  const record = (change: SessionChange): void => {
    if (change.type === "append") {
      // A batch (a model turn) is recorded at its last message, in one piece.
      if (change.more === true) return;
      if (sink.appendAll !== undefined && recorded < change.index) {
        const batch: SessionEntry[] = [];
        for (let index = recorded; index < change.index; index++)
          batch.push({ type: "message", message: session.messages[index]! });
        batch.push(entryFor(change));
        sink.appendAll(batch);
      } else {
        catchUp(change.index);
        sink.append(entryFor(change));
      }
      recorded = change.index + 1;
    } else if (change.type === "splice") {
      // The session already changed: what was recorded before it stays; the rest moved by the difference.
      if (recorded < change.index) catchUp(change.index);
      sink.append(entryFor(change));
      recorded += change.inserted.length - change.removed.length;
    } else {
      catchUp(session.messages.length);
      sink.append(entryFor(change));
    }
  };
  bindings.set(session, { sink, unbind: onSessionChange(session, record), catchUp });
}

/**
 * Unbinds a session from its store: records any message not yet recorded, makes the log durable
 * and releases the writer's lock. The session object stays usable, unrecorded. Does nothing for a
 * session that is not bound.
 */
export async function closeSession(session: Session): Promise<void> {
  const binding = bindings.get(session);
  if (binding === undefined) return;
  bindings.delete(session);
  binding.unbind();
  try {
    binding.catchUp(session.messages.length);
  } finally {
    await binding.sink.close();
  }
}

/**
 * Waits until every change of a bound session so far is durable in its store, and rejects with
 * the error that stopped the recording if one did. The file and SQLite stores record before a
 * change returns, so it resolves at once; `postgresStore` writes in the background, and this is
 * how to wait for it (in the loop's `beforeToolCall` hook, say, so a tool never runs before its
 * call is stored). Throws a `not-open` StoreError for a session that is not bound to a store.
 */
export async function flushSession(session: Session): Promise<void> {
  const binding = bindings.get(session);
  if (binding === undefined)
    throw new StoreError("flushSession: the session is not open in a store (openSession)", { code: "not-open" });
  binding.catchUp(session.messages.length);
  await binding.sink.flush?.();
}

/**
 * Appends an entry of the application's own to a bound session's log, after the messages so far:
 * `{ type: "custom", customType, data, ts }`. It does not change the session; read it back with
 * `loadEntries`. Throws a `not-open` StoreError for a session that is not bound to a store.
 */
export function appendEntry(session: Session, customType: string, data?: JsonValue): void {
  const binding = bindings.get(session);
  if (binding === undefined)
    throw new StoreError("appendEntry: the session is not open in a store (openSession)", { code: "not-open" });
  if (typeof customType !== "string" || customType === "")
    throw new StoreError("appendEntry: customType must be a non-empty string", { code: "invalid-argument" });
  binding.catchUp(session.messages.length);
  const entry: CustomEntry =
    data === undefined ? { type: "custom", customType, ts: now() } : { type: "custom", customType, ts: now(), data };
  binding.sink.append(entry);
}
