import { delay, type AbortRace } from "../shared/abort.ts";
import { describeError, errorType } from "../errors.ts";
import type { AgentEvent } from "./events.ts";
import { takeEarlyStarts, type EagerStarter } from "./eager-starter.ts";
import type { ToolOutcome } from "../tools/tool-outcome.ts";
import type { InvokeModel } from "../model/invoke-model.ts";
import type { ModelView } from "./model-view.ts";
import { readModelTurn } from "../model/read-model-turn.ts";
import type { ModelMessage, Session } from "../session.ts";
import type { BudgetLedger } from "../model/budget.ts";
import { budgetUsedUp } from "./run-budget.ts";
import { retryDelay, type RetryOptions } from "./retry.ts";
import { timedAttempt, type AttemptLimits } from "./timed-attempt.ts";

/** A complete model turn, and the tool calls that already started while it streamed. */
export type ModelTurn = {
  messages: ModelMessage[];
  /** Results of calls started early, by call id (absent when none started). */
  started: ReadonlyMap<string, Promise<ToolOutcome>> | undefined;
  /**
   * Call once the turn's tools are done: stops the early starts still running (by then they
   * answer calls that are not in the session, ones the `afterModelCall` hook removed) and frees
   * what they held.
   */
  release: () => void;
  /** Call if the run fails before the turn's tools are done: aborts the early starts. */
  discard: () => void;
};

/** What a model turn needs of its run (its `timeouts.modelCallMs` and `firstChunkMs` limit each attempt). */
export type ModelTurnRun = AttemptLimits & {
  readonly invokeModel: InvokeModel;
  readonly abortRace: AbortRace;
  readonly emit: (event: AgentEvent) => void;
  readonly retry: false | RetryOptions | undefined;
  /** Starts eligible tool calls as soon as they are complete in the stream; absent: none start early. */
  readonly eager: EagerStarter | undefined;
  /** The run's budget: a retry does not start once it is used up. */
  readonly ledger: BudgetLedger;
  readonly agentName: string | undefined;
  readonly session: Session;
};

/**
 * One model call with its retries. Returns `undefined` when the run was aborted. A failed attempt
 * is dropped whole, including the tools it started early (they are aborted and their results are
 * never added: the calls they answer never enter the session). A model that answered at once (an
 * array) gives its turn at once, without an async frame; any other answer gives a promise.
 */
export function modelTurn(run: ModelTurnRun, view: ModelView): ModelTurn | undefined | Promise<ModelTurn | undefined> {
  let read: ModelMessage[] | Promise<ModelMessage[]>;
  try {
    read = readAttempt(run, view);
  } catch (error) {
    return retryTurn(run, view, error);
  }
  return Array.isArray(read) ? takeTurn(run, read) : awaitTurn(run, view, read);
}

// One attempt of the call. Under a time limit it runs with its own signal, which the limit aborts
// with a retryable `TimeoutError`: the attempt then fails whole and goes the retry path.
function readAttempt(run: ModelTurnRun, view: ModelView): ModelMessage[] | Promise<ModelMessage[]> {
  // The run reads the turn itself: nothing is built for a call but its view.
  if (run.modelCallMs === undefined && run.firstChunkMs === undefined) return readModelTurn(run, view);
  const attempt = timedAttempt(run, view.context, run.invokeModel);
  let read: ModelMessage[] | Promise<ModelMessage[]>;
  try {
    read = readModelTurn(
      { invokeModel: attempt.invokeModel, abortRace: attempt.abortRace, emit: run.emit, eager: run.eager },
      { tools: view.tools, session: view.session, context: attempt.context },
    );
  } catch (error) {
    attempt.end();
    throw error;
  }
  if (Array.isArray(read)) {
    attempt.end();
    return read;
  }
  return read.finally(attempt.end);
}

async function awaitTurn(
  run: ModelTurnRun,
  view: ModelView,
  read: Promise<ModelMessage[]>,
): Promise<ModelTurn | undefined> {
  try {
    return takeTurn(run, await read);
  } catch (error) {
    return await retryTurn(run, view, error);
  }
}

// An attempt failed with `error`: try again after the retry delay, as often as the retry options
// allow; rethrows the last error when they say no more.
async function retryTurn(run: ModelTurnRun, view: ModelView, error: unknown): Promise<ModelTurn | undefined> {
  const { context } = view;
  for (let attempt = 1; ; attempt++) {
    takeEarlyStarts(run.eager)?.discard();
    if (context.signal.aborted) return undefined;
    const delayMs = run.retry === false ? undefined : retryDelay(error, attempt, run.retry);
    if (delayMs === undefined) throw error;
    const type = errorType(error);
    run.emit({
      type: "retry",
      iteration: context.iteration,
      attempt,
      delayMs,
      error: describeError(error),
      ...(type === undefined ? {} : { errorType: type }),
    });
    try {
      await delay(delayMs, context.signal);
    } catch {
      return undefined;
    }
    // A retry is a call like any other: none starts once the budget is used up (by a sibling, say).
    const usedUp = budgetUsedUp(run);
    if (usedUp !== undefined) throw usedUp;
    try {
      return takeTurn(run, await readAttempt(run, view));
    } catch (next) {
      error = next;
    }
  }
}

function takeTurn(run: ModelTurnRun, messages: ModelMessage[]): ModelTurn {
  const early = takeEarlyStarts(run.eager);
  if (early === undefined) return { messages, started: undefined, release: noop, discard: noop };
  return { messages, started: early.started(), release: early.release, discard: early.discard };
}

const noop = (): void => undefined;
