import { createAbortRace } from "../shared/abort.ts";
import { checkNumber } from "../numeric-options.ts";
import { checkToolTimeout, toolNameProblem, toolSchemaProblem } from "./tool.ts";
import { AgentError } from "../errors.ts";
import type { ToolEvent } from "./tool-events.ts";
import type { ToolHooks } from "./tool-hooks.ts";
import type { Session, ToolCallMessage, ToolResultMessage } from "../session.ts";
import type { ToolDefinition, ToolHandlers } from "./tool.ts";
import {
  createExecutorSetup,
  type CallScope,
  type ExecutorSetup,
  type ExecutorSetupOptions,
  type ToolCallRun,
} from "./executor-setup.ts";
import { beginToolCall, runToolCall } from "./run-tool-call.ts";
import { failedOutput, settledOutput } from "./invoke-tool.ts";
import { acquireSlot, createSlots, releaseSlot, type ToolSlots } from "./tool-slots.ts";
import type { ToolOutcome } from "./tool-outcome.ts";
import { needsLoopForApprovalResult } from "./tool-errors.ts";

export type ExecuteToolCallsOptions = {
  /** Tool schemas (and `tool()` definitions): used to validate input and to find handlers. */
  tools?: readonly ToolDefinition[];
  /** Run the calls concurrently (default) or one after another in call order. */
  parallel?: boolean | undefined;
  /** At most this many handlers at once: an integer >= 1 (default `Infinity`: no limit). */
  maxParallelTools?: number | undefined;
  /** Aborts running handlers; unfinished calls get error results. */
  signal?: AbortSignal;
  /**
   * Milliseconds before a handler is abandoned with an error result (a tool's own `timeout` wins);
   * > 0, default `Infinity` (no timer).
   */
  toolTimeout?: number | undefined;
  /** Passed to handlers in their context. */
  session?: Session;
  agentName?: string | undefined;
  /** Called with each result in call order, as soon as it and every result before it are ready. */
  onResult?: (result: ToolResultMessage) => void;
  /** Receives `tool-execution-start` and `tool-execution-end` for every call. */
  onEvent?: (event: ToolEvent) => void;
  /** `beforeToolCall` and `afterToolCall`; see `ToolHooks`. */
  hooks?: ToolHooks | undefined;
};

/**
 * Runs tool calls and returns exactly one result per call, in call order. Never
 * throws for a tool's failure: an unknown tool, input that fails the tool's schema (the handler is
 * not called), a throwing handler, a timeout or an abort each become an `isError` result. Rejects
 * with an `AgentError` naming the tool and the field for a definition in `options.tools` that no
 * call could use (a name no provider takes, no `input_schema` object).
 */
export async function executeToolCalls(
  toolCalls: readonly ToolCallMessage[],
  toolHandlers: ToolHandlers = {},
  options: ExecuteToolCallsOptions = {},
): Promise<ToolResultMessage[]> {
  checkNumber("maxParallelTools", options.maxParallelTools, { min: 1, integer: true, infinity: true });
  checkNumber("toolTimeout", options.toolTimeout, { min: 0, exclusive: true, infinity: true });
  for (const definition of options.tools ?? []) {
    // A definition no call could use (no input_schema object) is refused, as a run refuses it.
    const problem = toolNameProblem(definition.name, definition.description) ?? toolSchemaProblem(definition);
    if (problem !== undefined) throw new AgentError(problem);
    if ("timeout" in definition) checkToolTimeout(definition.name, definition.timeout);
  }
  const signal = options.signal ?? new AbortController().signal;
  const abortRace = createAbortRace(signal);
  try {
    const outcomes = await createToolExecutor(options.tools ?? [], toolHandlers, options).run(
      toolCalls,
      { signal, abortRace },
      undefined,
      undefined,
      allOutcomes,
    );
    // Pausing needs the loop; here a call that needs approval is simply not run.
    return outcomes.map((outcome) =>
      outcome.type === "tool_result" ? outcome : needsLoopForApprovalResult(outcome.call),
    );
  } finally {
    abortRace.dispose();
  }
}

const allOutcomes = (_scope: CallScope, _context: undefined, outcomes: ToolOutcome[]): ToolOutcome[] => outcomes;

/** Runs tool calls for the loop: one at a time as they arrive (`start`), or a batch (`run`). */
export type ToolExecutor = {
  /** What every call of this executor reads (a background task's rerun goes through the same gate with it). */
  readonly setup: ExecutorSetup;
  /**
   * Starts one call as soon as a slot is free (`maxParallelTools`); resolves with its result and
   * never rejects. Calls started in call order also acquire slots in call order.
   */
  start: (call: ToolCallMessage, scope: CallScope, turn: readonly ToolCallMessage[]) => Promise<ToolOutcome>;
  /**
   * Runs a batch and hands its outcomes, in call order, to `answered` (with the scope and
   * `context`); `onResult` hears each result in call order as soon as the ones before it are in.
   * Calls found in `started` (begun early, while the model was streaming) are awaited, not rerun.
   * Returns what `answered` returns: itself when one call answered at once (a synchronous
   * handler), else a promise of it, which rejects only if `answered` throws. The caller's next
   * step is `answered` itself, so an awaited batch costs one promise reaction, not one per layer.
   */
  run: <S extends CallScope, C, R>(
    toolCalls: readonly ToolCallMessage[],
    scope: S,
    started: ReadonlyMap<string, Promise<ToolOutcome>> | undefined,
    context: C,
    answered: (scope: S, context: C, outcomes: ToolOutcome[]) => R | Promise<R>,
  ) => R | Promise<R>;
  /** Whether a tool may start while the model is still streaming (its definition does not say `eager: false`). */
  isEager: (name: string) => boolean;
  /**
   * Starts a call a code-mode program made (`caller`: the code call's id) as `start` does: the
   * same gate, handler and hooks, its events marked with `caller`. Program calls take slots of
   * their own, as many as the run's: the code call holds one of the run's while its program waits.
   */
  startProgramCall: (
    call: ToolCallMessage,
    scope: CallScope,
    turn: readonly ToolCallMessage[],
    caller: string,
  ) => Promise<ToolOutcome>;
};

/**
 * Prepares the lookups and the slots once, for a loop that executes tool calls every turn. Each
 * call goes through `runToolCall` (gate, handler, `afterToolCall`); the executor only decides when
 * a call starts (`startToolCall`) and in which order results are heard (`runInCallOrder`).
 */
export function createToolExecutor(
  tools: readonly ToolDefinition[],
  toolHandlers: ToolHandlers,
  options: Omit<ExecuteToolCallsOptions, "tools" | "signal"> &
    Pick<
      ExecutorSetupOptions,
      "offer" | "recorder" | "spending" | "approvals" | "elicit" | "programOnly" | "loopGuard" | "tasks"
    >,
): ToolExecutor {
  let programSlots: ToolSlots | undefined;
  const slots = createSlots(options);
  // One record: `run`, called every turn, is a shared function reading it, so a turn's tool phase
  // reaches one object of its executor, not a closure, its context and the parts behind them.
  const executor: ToolExecutor & ExecutorParts = {
    setup: createExecutorSetup(tools, toolHandlers, options),
    slots,
    limited: slots.limit !== Number.POSITIVE_INFINITY,
    onResult: options.onResult,
    start: (call, scope, turn) => startToolCall(executor, callRun(executor, scope, call, turn)),
    run: runInCallOrder,
    // Under a policy the decision is recorded on the stored call before it runs: no call starts
    // before its turn is in the session.
    isEager: (name) => executor.setup.approvals === undefined && executor.setup.definitions.get(name)?.eager !== false,
    startProgramCall: (call, { signal, abortRace }, turn, caller) => {
      programSlots ??= createSlots(options);
      const programParts: ExecutorParts = {
        setup: executor.setup,
        slots: programSlots,
        limited: programSlots.limit !== Number.POSITIVE_INFINITY,
        onResult: executor.onResult,
      };
      return startToolCall(programParts, { signal, abortRace, call, setup: executor.setup, turn, caller });
    },
  };
  return executor;
}

/** What an executor holds for all its calls, built once by `createToolExecutor`. */
type ExecutorParts = {
  readonly setup: ExecutorSetup;
  readonly slots: ToolSlots;
  /** Whether `slots` limits anything (`maxParallelTools`): without a limit there are no slots to take. */
  readonly limited: boolean;
  readonly onResult: ((result: ToolResultMessage) => void) | undefined;
};

// The call with what its phases read: the scope's two fields only (the loop passes its whole run context as the scope).
function callRun(
  { setup }: ExecutorParts,
  { signal, abortRace }: CallScope,
  call: ToolCallMessage,
  turn: readonly ToolCallMessage[],
): ToolCallRun {
  return { signal, abortRace, call, setup, turn };
}

/** A batch of calls to run: the turn's calls, where they run, and the ones that started early. */
type Batch = {
  readonly toolCalls: readonly ToolCallMessage[];
  readonly scope: CallScope;
  readonly started: ReadonlyMap<string, Promise<ToolOutcome>> | undefined;
};

// `onOutcome` hears the outcome before the slot passes on: with parallel: false a result is
// recorded before the next call starts, so a crash between them never loses a finished call.
async function startToolCall(
  { slots, limited }: ExecutorParts,
  run: ToolCallRun,
  onOutcome?: (outcome: ToolOutcome) => void,
): Promise<ToolOutcome> {
  if (limited) await acquireSlot(slots);
  try {
    const outcome = await runToolCall(run);
    onOutcome?.(outcome);
    return outcome;
  } finally {
    if (limited) releaseSlot(slots);
  }
}

/**
 * Runs a batch and hears its results in call order: `onResult` gets each result once it and all
 * before it are in. Once a call waits for approval, later results wait with it (the loop holds
 * them on their calls; see `heldResult`) and `onResult` hears none of them. Then `answered`.
 */
function runInCallOrder<S extends CallScope, C, R>(
  this: ExecutorParts,
  toolCalls: readonly ToolCallMessage[],
  scope: S,
  started: ReadonlyMap<string, Promise<ToolOutcome>> | undefined,
  context: C,
  answered: (scope: S, context: C, outcomes: ToolOutcome[]) => R | Promise<R>,
): R | Promise<R> {
  // `run` of the executor's record: a shared function reading it.
  const { onResult } = this;
  if (toolCalls.length !== 1 || this.limited)
    return runSeveral(this, { toolCalls, scope, started }).then((outcomes) => answered(scope, context, outcomes));
  // The common case, without the bookkeeping of ordering several results: the call's outcome at
  // once when it answered at once; else the reaction to the handler's promise, raced against the
  // run's abort, makes the outcome, delivers it and takes the caller's next step (one reaction
  // from the handler's answer to the loop's next step, one record per call, no closures).
  const call = toolCalls[0]!;
  const early = started?.get(call.id);
  if (early !== undefined) return early.then((outcome) => answerOne(onResult, scope, context, answered, outcome));
  const one: CallOfOne<S, C, R> = {
    signal: scope.signal,
    abortRace: scope.abortRace,
    call,
    setup: this.setup,
    turn: toolCalls,
    onResult,
    scope,
    context,
    answered,
  };
  const begun = beginToolCall(one);
  if (begun instanceof Promise) return begun.then((outcome) => answerOne(onResult, scope, context, answered, outcome));
  if (begun.type === "awaited-output") return scope.abortRace.raceThen(begun.output, one, valueOfOne, failureOfOne);
  return answerOne(onResult, scope, context, answered, begun);
}

/** A batch of one, awaited: the call's run and what comes once its outcome is in (`answerOne`). */
type CallOfOne<S extends CallScope, C, R> = ToolCallRun & {
  readonly onResult: ((result: ToolResultMessage) => void) | undefined;
  readonly scope: S;
  readonly context: C;
  readonly answered: (scope: S, context: C, outcomes: ToolOutcome[]) => R | Promise<R>;
};

function valueOfOne<S extends CallScope, C, R>(one: CallOfOne<S, C, R>, output: unknown): R | Promise<R> {
  return answerOne(one.onResult, one.scope, one.context, one.answered, settledOutput(one, output));
}

function failureOfOne<S extends CallScope, C, R>(one: CallOfOne<S, C, R>, error: unknown): R | Promise<R> {
  return answerOne(one.onResult, one.scope, one.context, one.answered, failedOutput(one, error));
}

// A batch of one: its result is heard (a pause is not), then the caller goes on.
function answerOne<S extends CallScope, C, R>(
  onResult: ((result: ToolResultMessage) => void) | undefined,
  scope: S,
  context: C,
  answered: (scope: S, context: C, outcomes: ToolOutcome[]) => R | Promise<R>,
  outcome: ToolOutcome,
): R | Promise<R> {
  if (outcome.type === "tool_result") onResult?.(outcome);
  return answered(scope, context, [outcome]);
}

function runSeveral(parts: ExecutorParts, { toolCalls, scope, started }: Batch): Promise<ToolOutcome[]> {
  const { onResult } = parts;
  const outcomes = new Array<ToolOutcome | undefined>(toolCalls.length);
  let delivered = 0;
  let waitingForApproval = false;
  const deliver = (index: number, outcome: ToolOutcome): void => {
    outcomes[index] = outcome;
    for (let next = outcomes[delivered]; next !== undefined; next = outcomes[++delivered]) {
      if (next.type === "approval-pending") waitingForApproval = true;
      else if (!waitingForApproval) onResult?.(next);
    }
  };
  return Promise.all(
    toolCalls.map(async (call, index) => {
      const onOutcome = (outcome: ToolOutcome): void => deliver(index, outcome);
      const early = started?.get(call.id);
      if (early === undefined)
        return startToolCall(parts, callRun(parts, scope, call, toolCalls.slice(0, index + 1)), onOutcome);
      const outcome = await early;
      onOutcome(outcome);
      return outcome;
    }),
  );
}
