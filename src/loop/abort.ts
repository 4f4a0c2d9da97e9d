import { AbortError, describeError } from "../errors.ts";
import { clampDelay } from "../numeric-options.ts";

/**
 * Races promises against one AbortSignal. One listener on the signal serves every race of a run,
 * so a long run does not pile up listeners or reactions on a never-settling promise.
 */
export type AbortRace = {
  /** Settles like `promise`, or rejects with the abort reason as soon as the signal aborts. */
  race<T>(promise: PromiseLike<T>): Promise<T>;
  /** Stops listening to the signal. */
  dispose(): void;
};

export function createAbortRace(signal: AbortSignal): AbortRace {
  const pending = new Set<(reason: unknown) => void>();
  const onAbort = (): void => {
    const reason = abortReason(signal);
    for (const reject of pending) reject(reason);
    pending.clear();
  };
  signal.addEventListener("abort", onAbort, { once: true });
  return {
    race<T>(promise: PromiseLike<T>): Promise<T> {
      if (signal.aborted) return Promise.reject(abortReason(signal));
      return new Promise<T>((resolve, reject) => {
        pending.add(reject);
        promise.then(
          (value) => {
            pending.delete(reject);
            resolve(value);
          },
          (error: unknown) => {
            pending.delete(reject);
            reject(error);
          },
        );
      });
    },
    dispose() {
      signal.removeEventListener("abort", onAbort);
      pending.clear();
    },
  };
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
