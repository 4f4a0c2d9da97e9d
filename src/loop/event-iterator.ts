/**
 * A run that pushes events, exposed two ways: as an async iterator of its events, and as `result`,
 * a promise of the run's end that needs no iteration. The run starts on the first `next()` or the
 * first read of `result`, one microtask later: code that reads `result` and hands the stream to a
 * consumer in the same synchronous step (`void stream.result.finally(...)`, then
 * `registry.start(stream)`) loses no event. Events are queued only while someone iterates, so
 * awaiting `result` alone (what `agentLoop` does) costs no promise per event and holds no events
 * in memory; `consumerMissesEvents` tells a consumer that comes later that it would miss some.
 *
 * - `listener` sees every event; if it throws, the run is aborted and awaited, and the error
 *   rejects that `next()` (or `result`).
 * - `return()` (a consumer's `break`) aborts the run and resolves once the run has settled.
 * - An error of the run rejects the `next()` after its last event, and `result`.
 */
export type RunStream<T, R> = AsyncIterableIterator<T> & { readonly result: Promise<R> };

/**
 * `run` gets `emit`, which hands an event to whoever hears it, and `listening()`, which says
 * whether anyone does right now (a listener, or a consumer iterating): the run may skip building
 * an event nobody would see. It can turn true mid-run (iteration may begin after `result` started
 * the run).
 */
export function runStream<T, R>(
  run: (emit: (event: T) => void, listening: () => boolean) => Promise<R>,
  abort: () => void,
  listener?: (event: T) => void,
): RunStream<T, R> {
  const state: StreamState<T, R> = {
    run,
    abort,
    listener,
    queue: [],
    read: 0,
    iterating: false,
    waiting: undefined,
    settled: false,
    closed: false,
    listenerError: undefined,
    failure: undefined,
    started: undefined,
    unheardStart: false,
  };
  const stream: RunStream<T, R> & { [stateKey]: StreamState<T, R> } = {
    get result() {
      return start(state);
    },
    next: () => next(state),
    return: () => stop(state),
    [Symbol.asyncIterator]() {
      return this;
    },
    [stateKey]: state,
  };
  return stream;
}

// Where a stream keeps its state for `consumerMissesEvents`: a key only this module names (a
// WeakMap beside the stream cost an insert per run, and more work for every collection).
const stateKey = Symbol("run stream state");

/**
 * Whether a consumer that starts iterating `stream` now would miss events: its run began while
 * nobody iterated (`result` was read, then something was awaited before iteration began), or
 * another consumer iterates it already. A consumer that must see every event (a run registry)
 * refuses such a stream. False for an object that is not a run stream.
 */
export function consumerMissesEvents(stream: object): boolean {
  const state = (stream as { [stateKey]?: { unheardStart: boolean; iterating: boolean } })[stateKey];
  return state !== undefined && (state.unheardStart || state.iterating);
}

// One stream's state, shared by the functions below.
type StreamState<T, R> = {
  run: (emit: (event: T) => void, listening: () => boolean) => Promise<R>;
  abort: () => void;
  listener: ((event: T) => void) | undefined;
  /** Events not yet read by the iterating consumer, from `read` on. */
  queue: T[];
  read: number;
  iterating: boolean;
  /** The consumer's pending `next()`, when it waits for an event. */
  waiting: { resolve: (result: IteratorResult<T>) => void; reject: (error: unknown) => void } | undefined;
  settled: boolean;
  /** No more events for the consumer: it stopped, or it read the end. */
  closed: boolean;
  listenerError: { error: unknown } | undefined;
  /** The run's error, until the consumer has been told of it. */
  failure: { error: unknown } | undefined;
  started: Promise<R> | undefined;
  /** The run began while nobody iterated: its first events went by unheard. */
  unheardStart: boolean;
};

const done = <T>(): IteratorResult<T> => ({ done: true, value: undefined });

function start<T, R>(state: StreamState<T, R>): Promise<R> {
  if (state.started !== undefined) return state.started;
  // One microtask later: a consumer that begins iterating in the same synchronous step hears the first event.
  const started = Promise.resolve()
    .then(() => {
      state.unheardStart = !state.iterating;
      return state.run(
        (event) => emit(state, event),
        () => state.listener !== undefined || (state.iterating && !state.closed),
      );
    })
    .then(
      (value) => ranTo(state, value),
      (error: unknown) => failed(state, error),
    )
    .finally(() => settle(state));
  state.started = started;
  // Iterating consumers hear of a failure through `next()`; do not report it as unhandled too.
  started.catch(() => undefined);
  return started;
}

function emit<T, R>(state: StreamState<T, R>, event: T): void {
  if (state.listenerError !== undefined) return;
  if (state.listener !== undefined) {
    try {
      state.listener(event);
    } catch (error) {
      state.listenerError = { error };
      state.abort();
      return;
    }
  }
  if (!state.iterating || state.closed) return;
  const { waiting } = state;
  if (waiting === undefined) {
    state.queue.push(event);
    return;
  }
  state.waiting = undefined;
  waiting.resolve({ done: false, value: event });
}

// A listener's error wins over the run's outcome: the run was aborted because of it.
function ranTo<T, R>(state: StreamState<T, R>, value: R): R {
  if (state.listenerError === undefined) return value;
  state.failure = state.listenerError;
  throw state.listenerError.error;
}

function failed<T, R>(state: StreamState<T, R>, error: unknown): never {
  const reported = state.listenerError === undefined ? error : state.listenerError.error;
  state.failure = { error: reported };
  throw reported;
}

function settle<T, R>(state: StreamState<T, R>): void {
  state.settled = true;
  const { waiting } = state;
  if (waiting === undefined) return;
  state.waiting = undefined;
  end(state).then(waiting.resolve, waiting.reject);
}

function end<T, R>(state: StreamState<T, R>): Promise<IteratorResult<T>> {
  state.closed = true;
  if (state.failure === undefined) return Promise.resolve(done());
  const { error } = state.failure;
  state.failure = undefined;
  return Promise.reject(error);
}

function next<T, R>(state: StreamState<T, R>): Promise<IteratorResult<T>> {
  if (state.closed) return Promise.resolve(done());
  if (!state.iterating) {
    state.iterating = true;
    void start(state).catch(() => undefined);
  }
  if (state.read < state.queue.length) {
    const event = state.queue[state.read++]!;
    if (state.read === state.queue.length) {
      state.queue.length = 0;
      state.read = 0;
    }
    return Promise.resolve({ done: false, value: event });
  }
  if (state.settled) return end(state);
  return new Promise((resolve, reject) => (state.waiting = { resolve, reject }));
}

function stop<T, R>(state: StreamState<T, R>): Promise<IteratorResult<T>> {
  state.closed = true;
  state.queue.length = 0;
  if (state.started === undefined || state.settled) return Promise.resolve(done());
  state.abort();
  return state.started.then(done<T>, done<T>);
}
