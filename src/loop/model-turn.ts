import { createAbortRace, delay, type AbortRace } from "./abort.ts";
import { describeError, errorType } from "../errors.ts";
import type { AgentEvent } from "./events.ts";
import type { ToolExecutor } from "../tools/execute-tool-calls.ts";
import type { CallScope } from "../tools/executor-setup.ts";
import type { ToolOutcome } from "../tools/tool-outcome.ts";
import type { InvokeModel, ModelContext } from "../model/invoke-model.ts";
import { readModelTurn, type ModelTurnRequest } from "../model/read-model-turn.ts";
import type { ModelMessage, Session, ToolCallMessage } from "../session.ts";
import { retryDelay, type RetryOptions } from "./retry.ts";
import type { ToolSchema } from "../tools/tool.ts";

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

/** What `invokeModel` is given for one call: the model's view of the run (see `modelView`). */
export type ModelView = { tools: ToolSchema[]; session: Session; context: ModelContext };

/** What a model turn needs of its run. */
export type ModelTurnRun = {
  readonly invokeModel: InvokeModel;
  readonly abortRace: AbortRace;
  readonly emit: (event: AgentEvent) => void;
  readonly retry: false | RetryOptions | undefined;
  /** Starts eligible tool calls as soon as they are complete in the stream; absent: none start early. */
  readonly eager: EagerStarter | undefined;
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
    read = readModelTurn(turnRequest(run, view));
  } catch (error) {
    return retryTurn(run, view, error);
  }
  return Array.isArray(read) ? takeTurn(run, read) : awaitTurn(run, view, read);
}

function turnRequest(run: ModelTurnRun, view: ModelView): ModelTurnRequest {
  return {
    ...view,
    invokeModel: run.invokeModel,
    abortRace: run.abortRace,
    emit: run.emit,
    onToolCall: run.eager?.onToolCall,
  };
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
    run.eager?.take()?.discard();
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
    try {
      return takeTurn(run, await readModelTurn(turnRequest(run, view)));
    } catch (next) {
      error = next;
    }
  }
}

function takeTurn(run: ModelTurnRun, messages: ModelMessage[]): ModelTurn {
  const early = run.eager?.take();
  if (early === undefined) return { messages, started: undefined, release: noop, discard: noop };
  return { messages, started: early.started(), release: early.release, discard: early.discard };
}

/**
 * Starts tool calls while the model streams, for one run: one attempt at a time, each attempt's
 * starts taken (`take`) when it ends. Its callback is made once per run, not per call.
 */
export type EagerStarter = {
  /** Hears each complete tool call of the stream; starts it if its tool allows. */
  readonly onToolCall: (call: ToolCallMessage) => void;
  /** The current attempt's early starts (absent when nothing was heard), and forgets them. */
  readonly take: () => EagerStarts | undefined;
};

export function createEagerStarter(executor: ToolExecutor, runSignal: AbortSignal): EagerStarter {
  // Made on the first early start only: most turns (every non-streamed one) have none.
  let early: EagerStarts | undefined;
  return {
    onToolCall: (call) => (early ??= eagerStarts(executor, runSignal)).onToolCall(call),
    take: () => {
      const taken = early;
      early = undefined;
      return taken;
    },
  };
}

const noop = (): void => undefined;

type EagerStarts = ReturnType<typeof eagerStarts>;

// Early starts get their own signal, so a failed attempt can stop its tools without stopping the
// run; it follows the run's signal too. Created on the first early start only.
function eagerStarts(executor: ToolExecutor, runSignal: AbortSignal) {
  let scope: { controller: AbortController; calls: CallScope } | undefined;
  let started: Map<string, Promise<ToolOutcome>> | undefined;
  let running = 0;
  const settled = (): void => void running--;
  const follow = (): void => scope?.controller.abort(runSignal.reason);
  const open = (): { controller: AbortController; calls: CallScope } => {
    const controller = new AbortController();
    runSignal.addEventListener("abort", follow, { once: true });
    return { controller, calls: { signal: controller.signal, abortRace: createAbortRace(controller.signal) } };
  };
  const release = (): void => {
    if (scope === undefined) return;
    if (running > 0) scope.controller.abort();
    runSignal.removeEventListener("abort", follow);
    scope.calls.abortRace.dispose();
  };
  return {
    onToolCall: (call: ToolCallMessage): void => {
      if (!executor.isEager(call.name) || started?.has(call.id) === true) return;
      scope ??= open();
      started ??= new Map<string, Promise<ToolOutcome>>();
      const outcome = executor.start(call, scope.calls);
      running++;
      void outcome.then(settled);
      started.set(call.id, outcome);
    },
    started: () => started,
    discard: (): void => {
      scope?.controller.abort();
      release();
    },
    release,
  };
}
