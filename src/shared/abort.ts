import { AbortError, describeError } from "../errors.ts";
import { clampDelay } from "../numeric-options.ts";

/**
 * Races promises against one AbortSignal. One listener on the signal serves every race of a run,
 * so a long run does not pile up listeners or reactions on a never-settling promise.
 */
export type AbortRace = {
  // Methods of the race's record (shared functions reading `this`): called on it, never detached.
  /** Settles like `promise`, or rejects with the abort reason as soon as the signal aborts. */
  race<T>(this: AbortRace, promise: PromiseLike<T>): Promise<T>;
  /**
   * `race(promise).then((value) => onValue(context, value), (error) => onError(context, error))` as
   * one promise: the abort reason goes to `onError`. Exactly one of the two is called, once: the
   * caller may do its next step in it. On an abort it is called after the signal's other
   * listeners, never inside `abort()`. The callbacks are meant to be shared functions reading the
   * caller's record (`context`): a call awaited every turn then makes no closures of its own, and
   * saves a promise and a microtask.
   */
  raceThen<C, T, R>(
    this: AbortRace,
    promise: PromiseLike<T>,
    context: C,
    onValue: (context: C, value: T) => R | PromiseLike<R>,
    onError: (context: C, error: unknown) => R | PromiseLike<R>,
  ): Promise<R>;
  /** Stops listening to the signal. */
  dispose(this: AbortRace): void;
};

/** One race in flight: what settles it, whichever comes first, the promise or the abort. */
type Race = {
  /** Set by whichever came first: the other finds it set and does nothing. */
  settled: boolean;
  readonly context: unknown;
  readonly onValue: (context: unknown, value: unknown) => unknown;
  readonly onError: (context: unknown, error: unknown) => unknown;
  readonly resolve: (result: unknown) => void;
  readonly reject: (error: unknown) => void;
};

/**
 * An `AbortRace` as one record of its run: its methods are shared functions reading it, so an
 * awaited call reaches one object of the race, not a closure and its context, when the run's
 * objects are cold (many runs in flight).
 */
type RaceState = AbortRace & {
  readonly signal: AbortSignal;
  /**
   * The races in flight: a few at most (one per awaited call), so an array searched from the end
   * costs less than a Set, which rehashes as it grows and shrinks.
   */
  readonly pending: Race[];
  readonly onAbort: () => void;
};

export function createAbortRace(signal: AbortSignal): AbortRace {
  const pending: Race[] = [];
  const onAbort = (): void => {
    const reason = abortReason(signal);
    for (const race of pending.splice(0)) {
      race.settled = true;
      // What a race's caller does next (a call's result entering the session, the turn's end)
      // runs after every listener of the abort, as a reaction would, not inside `abort()`.
      queueMicrotask(() => settleWith(race, race.onError, reason));
    }
  };
  signal.addEventListener("abort", onAbort, { once: true });
  const state: RaceState = { signal, pending, onAbort, race: raceAlone, raceThen: raceThenOf, dispose: disposeRace };
  return state;
}

function raceAlone<T>(this: RaceState, promise: PromiseLike<T>): Promise<T> {
  return this.raceThen(promise, undefined, passValue, passError);
}

function raceThenOf<C, T, R>(
  this: RaceState,
  promise: PromiseLike<T>,
  context: C,
  onValue: (context: C, value: T) => R | PromiseLike<R>,
  onError: (context: C, error: unknown) => R | PromiseLike<R>,
): Promise<R> {
  const { signal, pending } = this;
  if (signal.aborted) return Promise.reject(abortReason(signal)).then(undefined, (error) => onError(context, error));
  let race: Race | undefined;
  const settled = new Promise<R>((resolve, reject) => {
    race = { settled: false, context, onValue, onError, resolve, reject } as Race;
  });
  pending.push(race!);
  follow(pending, race!, promise);
  return settled;
}

function disposeRace(this: RaceState): void {
  this.signal.removeEventListener("abort", this.onAbort);
  this.pending.length = 0;
}

// The promise's two reactions share one small context (the race and its list), not the caller's.
// A thenable whose `then` throws (a handler's odd answer) settles the race with that error.
function follow(pending: Race[], race: Race, promise: PromiseLike<unknown>): void {
  try {
    subscribe(pending, race, promise);
  } catch (error) {
    if (race.settled) return;
    race.settled = true;
    forget(pending, race);
    settleWith(race, race.onError, error);
  }
}

function subscribe(pending: Race[], race: Race, promise: PromiseLike<unknown>): void {
  promise.then(
    (value) => {
      if (race.settled) return;
      race.settled = true;
      forget(pending, race);
      settleWith(race, race.onValue, value);
    },
    (error: unknown) => {
      if (race.settled) return;
      race.settled = true;
      forget(pending, race);
      settleWith(race, race.onError, error);
    },
  );
}

const passValue = <T>(_context: unknown, value: T): T => value;
const passError = (_context: unknown, error: unknown): never => {
  throw error;
};

// As a `.then` reaction would: what the callback returns resolves, what it throws rejects.
function settleWith(race: Race, callback: (context: unknown, value: unknown) => unknown, value: unknown): void {
  try {
    race.resolve(callback(race.context, value));
  } catch (error) {
    race.reject(error);
  }
}

// The race that settled is usually the last one started.
function forget(pending: Race[], race: Race): void {
  const index = pending.lastIndexOf(race);
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
