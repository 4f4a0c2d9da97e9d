/**
 * The time a task spends waiting for the user (a permission prompt on screen), so the CLI can
 * report it apart from working time. Waits that overlap count once.
 */
export type WaitClock = {
  /** Runs `wait` and counts the time until it settles as waiting. */
  measure: <T>(wait: () => Promise<T>) => Promise<T>;
  /** Milliseconds spent waiting since the last `reset`, a wait still going on included. */
  elapsedMs: () => number;
  /** Starts counting from zero (a new task). */
  reset: () => void;
};

/** A `WaitClock` reading `now` (default `performance.now`). */
export function waitClock(now: () => number = () => performance.now()): WaitClock {
  let waited = 0;
  let open = 0;
  let since = 0;
  return {
    measure: async (wait) => {
      if (open++ === 0) since = now();
      try {
        return await wait();
      } finally {
        if (--open === 0) waited += now() - since;
      }
    },
    elapsedMs: () => waited + (open > 0 ? now() - since : 0),
    reset: () => {
      waited = 0;
      since = now();
    },
  };
}
