import { AbortError, describeError } from "../errors.ts";
import { clampDelay } from "../numeric-options.ts";

/**
 * Races promises against one AbortSignal. One listener on the signal serves every race of a run,
 * so a long run does not pile up listeners or reactions on a never-settling promise.
 */
export type AbortRace = {
  /** Settles like `promise`, or rejects with the abort reason as soon as the signal aborts. */
  race<T>(promise: PromiseLike<T>): Promise<T>;
  /**
   * `race(promise).then(onValue, onError)` as one promise: the abort reason goes to `onError`.
   * A call per turn awaits through it, so it saves a promise and a microtask on the hot path.
   */
  raceThen<T, R>(promise: PromiseLike<T>, onValue: (value: T) => R, onError: (error: unknown) => R): Promise<R>;
  /** Stops listening to the signal. */
  dispose(): void;
};

export function createAbortRace(signal: AbortSignal): AbortRace {
  // The rejecters of the races in flight: a few at most (one per awaited call), so an array
  // searched from the end costs less than a Set, which rehashes as it grows and shrinks.
  const pending: ((reason: unknown) => void)[] = [];
  const onAbort = (): void => {
    const reason = abortReason(signal);
    for (const reject of pending.splice(0)) reject(reason);
  };
  signal.addEventListener("abort", onAbort, { once: true });
  return {
    race<T>(promise: PromiseLike<T>): Promise<T> {
      if (signal.aborted) return Promise.reject(abortReason(signal));
      return new Promise<T>((resolve, reject) => {
        pending.push(reject);
        promise.then(
          (value) => {
            forget(pending, reject);
            resolve(value);
          },
          (error: unknown) => {
            forget(pending, reject);
            reject(error);
          },
        );
      });
    },
    raceThen<T, R>(promise: PromiseLike<T>, onValue: (value: T) => R, onError: (error: unknown) => R): Promise<R> {
      if (signal.aborted) return Promise.reject(abortReason(signal)).then(undefined, onError);
      return new Promise<R>((resolve, reject) => {
        const fail = (error: unknown): void => settleWith(onError, error, resolve, reject);
        pending.push(fail);
        promise.then(
          (value) => {
            forget(pending, fail);
            settleWith(onValue, value, resolve, reject);
          },
          (error: unknown) => {
            forget(pending, fail);
            fail(error);
          },
        );
      });
    },
    dispose() {
      signal.removeEventListener("abort", onAbort);
      pending.length = 0;
    },
  };
}

// As a `.then` reaction would: what the callback returns resolves, what it throws rejects.
function settleWith<T, R>(
  callback: (value: T) => R,
  value: T,
  resolve: (result: R) => void,
  reject: (error: unknown) => void,
): void {
  try {
    resolve(callback(value));
  } catch (error) {
    reject(error);
  }
}

// The race that settled is usually the last one started.
function forget(pending: ((reason: unknown) => void)[], reject: (reason: unknown) => void): void {
  const index = pending.lastIndexOf(reject);
  if (index === -1) return;
  const last = pending.pop()!;
  if (index < pending.length) pending[index] = last;
}

/** The signal's reason as an Error (our `AbortError` when the caller gave none). */
export function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason;
  return new AbortError(reason === undefined ? undefined : describeError(reason));
}

/**
 * A promise that resolves after `ms` (clamped to what a timer holds, see `clampDelay`: a longer
 * wait never turns into 1 ms), or rejects at once when `signal` aborts.
 */
export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortReason(signal));
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortReason(signal!));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, clampDelay(ms));
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
