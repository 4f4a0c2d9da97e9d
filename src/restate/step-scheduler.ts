import { CancelledError, RestatePromise } from "@restatedev/restate-sdk";

/**
 * Awaits the journaled steps of one invocation (model calls, tool calls) for the loop, which runs
 * several at once (parallel tools). The SDK allows only one awaiting of its promises at a time per
 * invocation: a second native `await` on a step while another is awaited fails the attempt. So
 * every step is awaited here, through one `RestatePromise.race` over all steps in flight, and each
 * caller gets a plain promise. Steps added while a race is pending join the next race; their
 * closures start then.
 *
 * A watched promise (an awakeable another handler may complete) joins every race while a step is
 * in flight, never a race of its own: a race still pending holds the steps added after it, so a
 * promise that may never complete must not be raced alone.
 */
export type StepScheduler = {
  /**
   * Settles like `step`. A cancellation of the invocation (Restate cancel) rejects every step
   * in flight with the `CancelledError`, after `onCancel` ran.
   */
  await<T>(step: RestatePromise<T>): Promise<T>;
  /**
   * Races `promise` alongside the steps in flight from now on; `onSettled` gets its value once it
   * wins one of those races (a failure, or a cancellation, drops the watch). Returns the unwatch.
   */
  watch<T>(promise: RestatePromise<T>, onSettled: (value: T) => void): () => void;
};

export function createStepScheduler(onCancel: (error: CancelledError) => Promise<void>): StepScheduler {
  const inFlight = new Map<number, RestatePromise<Settled>>();
  const callers = new Map<number, { resolve: (value: unknown) => void; reject: (error: unknown) => void }>();
  const watched = new Map<number, { promise: RestatePromise<Settled>; onSettled: (value: unknown) => void }>();
  let nextId = 0;
  let pumping = false;

  const pump = async (): Promise<void> => {
    try {
      // One turn of the event loop: the loop starts the other steps of a batch first.
      await yieldToLoop();
      while (inFlight.size > 0) {
        let settled: Settled;
        try {
          settled = await RestatePromise.race([
            ...inFlight.values(),
            ...[...watched.values()].map((watch) => watch.promise),
          ]);
        } catch (error) {
          if (!(error instanceof CancelledError)) throw error;
          await onCancel(error);
          for (const caller of callers.values()) caller.reject(error);
          inFlight.clear();
          callers.clear();
          return;
        }
        const watch = watched.get(settled.id);
        if (watch !== undefined) {
          watched.delete(settled.id);
          if (settled.failure === undefined) watch.onSettled(settled.value);
          continue;
        }
        const caller = callers.get(settled.id)!;
        inFlight.delete(settled.id);
        callers.delete(settled.id);
        if (settled.failure === undefined) caller.resolve(settled.value);
        else caller.reject(settled.failure);
        // The loop may start a step on this result (a freed slot): it joins the next race.
        await yieldToLoop();
      }
    } finally {
      pumping = false;
    }
  };

  return {
    await<T>(step: RestatePromise<T>): Promise<T> {
      const id = nextId++;
      inFlight.set(
        id,
        step.map((value, failure) => (failure === undefined ? { id, value } : { id, failure })),
      );
      const result = new Promise<T>((resolve, reject) =>
        callers.set(id, { resolve: resolve as (value: unknown) => void, reject }),
      );
      if (!pumping) {
        pumping = true;
        pump().catch((error: unknown) => {
          for (const caller of callers.values()) caller.reject(error);
          callers.clear();
          inFlight.clear();
        });
      }
      return result;
    },
    watch<T>(promise: RestatePromise<T>, onSettled: (value: T) => void): () => void {
      const id = nextId++;
      watched.set(id, {
        promise: promise.map((value, failure) => (failure === undefined ? { id, value } : { id, failure })),
        onSettled: onSettled as (value: unknown) => void,
      });
      return () => watched.delete(id);
    },
  };
}

type Settled = { id: number; value?: unknown; failure?: Error };

function yieldToLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
