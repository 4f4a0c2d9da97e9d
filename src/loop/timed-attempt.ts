import { TimeoutError } from "../errors.ts";
import type { InvokeModel, ModelContext } from "../model/invoke-model.ts";
import { isModelStream, type ModelStreamEvent } from "../model/model-stream-event.ts";
import { clampDelay } from "../numeric-options.ts";
import { createAbortRace, type AbortRace } from "../shared/abort.ts";
import { withBudget } from "./model-view.ts";

/** The time limits of each attempt of a model call (`timeouts.modelCallMs`, `timeouts.firstChunkMs`). */
export type AttemptLimits = {
  readonly modelCallMs?: number | undefined;
  readonly firstChunkMs?: number | undefined;
};

/** One attempt of a model call under its time limits: what to call the model with, and `end` once it settled. */
export type TimedAttempt = {
  /** The call's context with the attempt's own signal, aborted with a `TimeoutError` when a limit runs out. */
  readonly context: ModelContext;
  /** Races against the attempt's signal (so a limit that runs out ends the wait at once). */
  readonly abortRace: AbortRace;
  /** The model, noting when its answer begins (`firstChunkMs` stops counting there). */
  readonly invokeModel: InvokeModel;
  /** Stops the timers and lets go of the call's signal. */
  readonly end: () => void;
};

/**
 * Starts the clocks of one attempt. The attempt gets its own signal, following the call's (an
 * abort of the run aborts it with the run's reason); `modelCallMs` counts from here to the end of
 * the answer, `firstChunkMs` to its first streamed event (for a model that does not stream, to its
 * whole answer). A limit that runs out aborts the attempt's signal with a retryable `TimeoutError`
 * naming it, so the model's request is cancelled and the loop's retry path takes over.
 */
export function timedAttempt(limits: AttemptLimits, context: ModelContext, invokeModel: InvokeModel): TimedAttempt {
  const controller = new AbortController();
  const outer = context.signal;
  const startedAt = performance.now();
  const expire = (limit: "modelCallMs" | "firstChunkMs"): void =>
    controller.abort(new TimeoutError(limit, performance.now() - startedAt));
  const follow = (): void => controller.abort(outer.reason);
  if (outer.aborted) follow();
  else outer.addEventListener("abort", follow, { once: true });
  const callTimer = startTimer(limits.modelCallMs, () => expire("modelCallMs"));
  let chunkTimer = startTimer(limits.firstChunkMs, () => expire("firstChunkMs"));
  const firstChunk = (): void => {
    clearTimeout(chunkTimer);
    chunkTimer = undefined;
  };
  const abortRace = createAbortRace(controller.signal);
  const invoke: InvokeModel = (tools, session, attemptContext) => {
    const answer = invokeModel(tools, session, attemptContext);
    if (Array.isArray(answer)) firstChunk();
    else if (isModelStream(answer)) return noteFirstEvent(answer, firstChunk);
    else void answer.then(firstChunk, firstChunk);
    return answer;
  };
  return {
    context: withBudget({ ...context, signal: controller.signal }, context.budget),
    abortRace,
    invokeModel: invoke,
    end() {
      clearTimeout(callTimer);
      firstChunk();
      outer.removeEventListener("abort", follow);
      abortRace.dispose();
    },
  };
}

function startTimer(ms: number | undefined, onTimeout: () => void): ReturnType<typeof setTimeout> | undefined {
  return ms === undefined ? undefined : setTimeout(onTimeout, clampDelay(ms));
}

// The same stream, calling `onFirst` once its first event (or its end) arrives.
function noteFirstEvent(stream: AsyncIterable<ModelStreamEvent>, onFirst: () => void): AsyncIterable<ModelStreamEvent> {
  return {
    [Symbol.asyncIterator](): AsyncIterator<ModelStreamEvent> {
      const iterator = stream[Symbol.asyncIterator]();
      let seen = false;
      return {
        next: () => {
          if (seen) return iterator.next();
          return iterator.next().then((result) => {
            seen = true;
            onFirst();
            return result;
          });
        },
        return: (value?: unknown) =>
          iterator.return?.(value) ?? Promise.resolve({ done: true as const, value: undefined }),
      };
    },
  };
}
