import type { PostgresClient, PostgresPool } from "./postgres-connection.ts";

/** The channel a session's changes are announced on (payload: the session's id), database-wide. */
export const watchChannel = "simple_agent_loop_sessions";

/** Announces a change of session `$1` (inside a transaction: on commit). */
export const notifyStatement = `SELECT pg_notify('${watchChannel}', $1)`;

/** A `pg` client that can listen: what `pool.connect()` of `pg` gives. */
type ListeningClient = PostgresClient & {
  on: (event: string, listener: (message: { channel?: string; payload?: string }) => void) => void;
  removeAllListeners?: (event: string) => void;
};

export type SessionWatcher = {
  watch: (id: string, onChange: () => void) => Promise<(() => void) | undefined>;
  close: () => Promise<void>;
};

/**
 * One listening connection per store, taken from the pool while someone watches (LISTEN on
 * `watchChannel`) and given back when nobody does. A lost connection wakes every watcher (they
 * read again, and poll until they watch anew). `undefined` from `watch` for a pool whose clients
 * cannot listen (not `pg`'s).
 */
export function createSessionWatcher(poolOf: () => Promise<PostgresPool>): SessionWatcher {
  const watchers = new Map<string, Set<() => void>>();
  let listening: Promise<ListeningClient | undefined> | undefined;
  const wakeAll = (): void => {
    for (const set of watchers.values()) for (const wake of set) wake();
  };
  const connect = async (): Promise<ListeningClient | undefined> => {
    const client = (await (await poolOf()).connect()) as Partial<ListeningClient> & PostgresClient;
    if (typeof client.on !== "function") {
      client.release();
      return undefined;
    }
    const listener = client as ListeningClient;
    listener.on("notification", (message) => {
      if (message.channel !== watchChannel || message.payload === undefined) return;
      for (const wake of watchers.get(message.payload) ?? []) wake();
    });
    listener.on("error", () => {
      listening = undefined;
      listener.release(true);
      wakeAll();
    });
    await listener.query(`LISTEN ${watchChannel}`);
    return listener;
  };
  const stop = async (): Promise<void> => {
    const current = listening;
    listening = undefined;
    const client = await current?.catch(() => undefined);
    if (client === undefined) return;
    await client.query(`UNLISTEN ${watchChannel}`).catch(() => undefined);
    client.removeAllListeners?.("notification");
    client.removeAllListeners?.("error");
    client.release();
  };
  return {
    watch: async (id, onChange) => {
      listening ??= connect().catch(() => undefined);
      const client = await listening;
      if (client === undefined) {
        listening = undefined;
        return undefined;
      }
      const set = watchers.get(id) ?? new Set();
      watchers.set(id, set);
      set.add(onChange);
      return () => {
        set.delete(onChange);
        if (set.size === 0) watchers.delete(id);
        if (watchers.size === 0) void stop();
      };
    },
    close: async () => {
      watchers.clear();
      await stop();
    },
  };
}
