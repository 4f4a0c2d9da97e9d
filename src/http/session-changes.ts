import type { SessionStore } from "../store/session-store.ts";

/** Waits between two reads of a stored session: `pollMs`, or less when the store pushes a change or the reader leaves. */
export type SessionChanges = {
  wait: (pollMs: number, signal?: AbortSignal) => Promise<"waited" | "aborted">;
  stop: () => void;
};

/**
 * Watches session `sessionId` where the store pushes changes (`store.watch`: PostgreSQL's
 * LISTEN/NOTIFY), so `wait` returns as soon as another process commits to it, asks its writer to
 * stop, or lets it go; where it cannot, `wait` simply waits `pollMs` (the poll is the fallback
 * either way: a lost notification costs at most one poll).
 */
export function sessionChanges(store: SessionStore, sessionId: string): SessionChanges {
  let changed = false;
  let wake: (() => void) | undefined;
  let stopped = false;
  let unwatch: (() => void) | undefined;
  void store
    .watch?.(sessionId, () => {
      changed = true;
      wake?.();
    })
    .then((stop) => {
      if (stopped) stop?.();
      else unwatch = stop;
    })
    .catch(() => undefined);
  return {
    wait: (pollMs, signal) => {
      if (signal?.aborted === true) return Promise.resolve("aborted");
      if (changed) {
        changed = false;
        return Promise.resolve("waited");
      }
      return new Promise((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", done);
          wake = undefined;
          changed = false;
          resolve(signal?.aborted === true ? "aborted" : "waited");
        };
        const timer = setTimeout(done, pollMs);
        wake = done;
        signal?.addEventListener("abort", done, { once: true });
      });
    },
    stop: () => {
      stopped = true;
      unwatch?.();
      wake?.();
    },
  };
}
