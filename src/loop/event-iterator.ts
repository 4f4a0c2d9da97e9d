/**
 * A run that pushes events, exposed two ways: as an async iterator of its events, and as `result`,
 * a promise of the run's end that needs no iteration. The run starts on the first `next()` or the
 * first read of `result`; events are queued only while someone iterates, so awaiting `result`
 * alone (what `agentLoop` does) costs no promise per event and holds no events in memory.
 *
 * - `listener` sees every event; if it throws, the run is aborted and awaited, and the error
 *   rejects that `next()` (or `result`).
 * - `return()` (a consumer's `break`) aborts the run and resolves once the run has settled.
 * - An error of the run rejects the `next()` after its last event, and `result`.
 */
export type RunStream<T, R> = AsyncIterableIterator<T> & { readonly result: Promise<R> };

export function runStream<T, R>(
  run: (emit: (event: T) => void) => Promise<R>,
  abort: () => void,
  listener?: (event: T) => void,
): RunStream<T, R> {
  const queue: T[] = [];
  let read = 0;
  let iterating = false;
  let waiting: { resolve: (result: IteratorResult<T>) => void; reject: (error: unknown) => void } | undefined;
  let settled = false;
  let closed = false;
  let listenerError: { error: unknown } | undefined;
  let failure: { error: unknown } | undefined;
  let started: Promise<R> | undefined;

  const done = (): IteratorResult<T> => ({ done: true, value: undefined });
  const emit = (event: T): void => {
    if (listenerError !== undefined) return;
    if (listener !== undefined) {
      try {
        listener(event);
      } catch (error) {
        listenerError = { error };
        abort();
        return;
      }
    }
    if (!iterating || closed) return;
    if (waiting === undefined) {
      queue.push(event);
      return;
    }
    const { resolve } = waiting;
    waiting = undefined;
    resolve({ done: false, value: event });
  };
  const start = (): Promise<R> => {
    started ??= run(emit)
      .then(
        (value) => {
          if (listenerError !== undefined) {
            failure = listenerError;
            throw listenerError.error;
          }
          return value;
        },
        (error: unknown) => {
          const reported = listenerError === undefined ? error : listenerError.error;
          failure = { error: reported };
          throw reported;
        },
      )
      .finally(() => {
        settled = true;
        if (waiting !== undefined) {
          const { resolve, reject } = waiting;
          waiting = undefined;
          end().then(resolve, reject);
        }
      });
    // Iterating consumers hear of a failure through `next()`; do not report it as unhandled too.
    started.catch(() => undefined);
    return started;
  };
  const end = (): Promise<IteratorResult<T>> => {
    closed = true;
    if (failure === undefined) return Promise.resolve(done());
    const { error } = failure;
    failure = undefined;
    return Promise.reject(error);
  };

  return {
    get result() {
      return start();
    },
    next() {
      if (closed) return Promise.resolve(done());
      if (!iterating) {
        iterating = true;
        void start().catch(() => undefined);
      }
      if (read < queue.length) {
        const event = queue[read++]!;
        if (read === queue.length) {
          queue.length = 0;
          read = 0;
        }
        return Promise.resolve({ done: false, value: event });
      }
      if (settled) return end();
      return new Promise((resolve, reject) => (waiting = { resolve, reject }));
    },
    return() {
      closed = true;
      queue.length = 0;
      if (started === undefined || settled) return Promise.resolve(done());
      abort();
      return started.then(done, done);
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
