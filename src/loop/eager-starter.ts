import { createAbortRace } from "../shared/abort.ts";
import type { ToolExecutor } from "../tools/execute-tool-calls.ts";
import type { CallScope } from "../tools/executor-setup.ts";
import type { ToolOutcome } from "../tools/tool-outcome.ts";
import type { ToolCallMessage } from "../session.ts";

/**
 * Starts tool calls while the model streams, for one run: one attempt at a time, each attempt's
 * starts taken (`takeEarlyStarts`) when it ends. Its callback is made once per run, not per call.
 */
export type EagerStarter = {
  /** Hears each complete tool call of the stream; starts it if its tool allows. */
  readonly onToolCall: (call: ToolCallMessage) => void;
  /** The current attempt's early starts: absent when nothing was heard (every non-streamed turn). */
  early: EagerStarts | undefined;
};

export function createEagerStarter(executor: ToolExecutor, runSignal: AbortSignal): EagerStarter {
  const starter: EagerStarter = {
    // Made on the first early start only: most turns (every non-streamed one) have none.
    onToolCall: (call) => (starter.early ??= eagerStarts(executor, runSignal)).onToolCall(call),
    early: undefined,
  };
  return starter;
}

/** The current attempt's early starts (absent when nothing was heard), forgotten by the starter. */
export function takeEarlyStarts(starter: EagerStarter | undefined): EagerStarts | undefined {
  const taken = starter?.early;
  if (taken !== undefined) starter!.early = undefined;
  return taken;
}

type EagerStarts = ReturnType<typeof eagerStarts>;

// Early starts get their own signal, so a failed attempt can stop its tools without stopping the
// run; it follows the run's signal too. Created on the first early start only.
function eagerStarts(executor: ToolExecutor, runSignal: AbortSignal) {
  let scope: { controller: AbortController; calls: CallScope } | undefined;
  let started: Map<string, Promise<ToolOutcome>> | undefined;
  let running = 0;
  // Every call heard in this attempt, eager or not: a call started now sees those before it.
  const heard: ToolCallMessage[] = [];
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
      if (started?.has(call.id) === true) return;
      heard.push(call);
      if (!executor.isEager(call.name)) return;
      scope ??= open();
      started ??= new Map<string, Promise<ToolOutcome>>();
      const outcome = executor.start(call, scope.calls, heard.slice());
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
