import { createAbortRace, type AbortRace } from "../loop/abort.ts";
import { boundText, describeError, describeValue, isAbortError, isInstance, maxErrorLength } from "../errors.ts";
import { checkNumber, clampDelay, roundMs } from "../numeric-options.ts";
import { checkToolTimeout } from "./tool.ts";
import type { AgentEvent } from "../loop/events.ts";
import type { AgentHooks } from "../loop/hooks.ts";
import type { JsonValue, Session, ToolCallMessage, ToolResultMessage } from "../session.ts";
import type { ToolContext, ToolDefinition, ToolHandler, ToolHandlers } from "./tool.ts";
import { validateToolInput } from "./validate-input.ts";
import { pendingApprovals } from "./approval.ts";

export type ExecuteToolCallsOptions = {
  /** Tool schemas (and `tool()` definitions): used to validate input and to find handlers. */
  tools?: readonly ToolDefinition[];
  /** Run the calls concurrently (default) or one after another in call order. */
  parallel?: boolean;
  /** At most this many handlers at once: an integer >= 1 (default `Infinity`: no limit). */
  maxParallelTools?: number;
  /** Aborts running handlers; unfinished calls get error results. */
  signal?: AbortSignal;
  /**
   * Milliseconds before a handler is abandoned with an error result (a tool's own `timeout` wins);
   * > 0, default `Infinity` (no timer).
   */
  toolTimeout?: number;
  /** Passed to handlers in their context. */
  session?: Session;
  agentName?: string;
  /** Called with each result in call order, as soon as it and every result before it are ready. */
  onResult?: (result: ToolResultMessage) => void;
  /** Receives `tool-execution-start` and `tool-execution-end` for every call. */
  onEvent?: (event: AgentEvent) => void;
  /** `beforeToolCall` and `afterToolCall`; see `AgentHooks`. */
  hooks?: Pick<AgentHooks, "beforeToolCall" | "afterToolCall">;
};

/** A call that may not run before a human approves it (see `resolveApproval`). */
export type PendingApproval = {
  type: "approval-pending";
  call: ToolCallMessage;
  /** Set when the handler itself paused (a subagent whose run paused): its session, to resume later. */
  nested?: Session;
};

/** What running a call gives: its result, or a pause for approval. */
export type ToolOutcome = ToolResultMessage | PendingApproval;

/**
 * Runs tool calls and returns exactly one result per call, in call order. Never
 * throws for a tool's failure: an unknown tool, input that fails the tool's schema (the handler is
 * not called), a throwing handler, a timeout or an abort each become an `isError` result.
 */
export async function executeToolCalls(
  toolCalls: readonly ToolCallMessage[],
  toolHandlers: ToolHandlers = {},
  options: ExecuteToolCallsOptions = {},
): Promise<ToolResultMessage[]> {
  checkNumber("maxParallelTools", options.maxParallelTools, { min: 1, integer: true, infinity: true });
  checkNumber("toolTimeout", options.toolTimeout, { min: 0, exclusive: true, infinity: true });
  for (const definition of options.tools ?? []) if ("timeout" in definition) checkToolTimeout(definition.name, definition.timeout);
  const signal = options.signal ?? new AbortController().signal;
  const abortRace = createAbortRace(signal);
  try {
    const outcomes = await createToolExecutor(options.tools ?? [], toolHandlers, options).run(toolCalls, signal, abortRace);
    // Pausing needs the loop; here a call that needs approval is simply not run.
    return outcomes.map((outcome) =>
      outcome.type === "tool_result" ? outcome : errorResult(outcome.call.id, `Error: tool "${outcome.call.name}" needs approval; run it through agentLoop to pause for it.`),
    );
  } finally {
    abortRace.dispose();
  }
}

/** Runs tool calls for the loop: one at a time as they arrive (`start`), or a batch (`run`). */
export type ToolExecutor = {
  /**
   * Starts one call as soon as a slot is free (`maxParallelTools`); resolves with its result and
   * never rejects. Calls started in call order also acquire slots in call order.
   */
  start: (call: ToolCallMessage, signal: AbortSignal, abortRace: AbortRace, onOutcome?: (outcome: ToolOutcome) => void) => Promise<ToolOutcome>;
  /**
   * Runs a batch; `onResult` hears each result in call order as soon as the ones before it are
   * in. Calls found in `started` (begun early, while the model was streaming) are awaited, not rerun.
   */
  run: (
    toolCalls: readonly ToolCallMessage[],
    signal: AbortSignal,
    abortRace: AbortRace,
    started?: ReadonlyMap<string, Promise<ToolOutcome>>,
  ) => Promise<ToolOutcome[]>;
  /** Whether a tool may start while the model is still streaming (its definition does not say `eager: false`). */
  isEager: (name: string) => boolean;
};

/** Prepares the lookups once, for a loop that executes tool calls every turn. */
export function createToolExecutor(
  tools: readonly ToolDefinition[],
  toolHandlers: ToolHandlers,
  options: Omit<ExecuteToolCallsOptions, "tools" | "signal">,
): ToolExecutor {
  const definitions = new Map(tools.map((definition) => [definition.name, definition]));
  // A limit that is not a whole number >= 1 (NaN) would never let a call start.
  const limit = options.parallel === false ? 1 : Math.max(1, Math.floor(options.maxParallelTools ?? Number.POSITIVE_INFINITY) || 1);
  const { onEvent, onResult, hooks } = options;
  let active = 0;
  const waiting: (() => void)[] = [];

  async function start(
    call: ToolCallMessage,
    signal: AbortSignal,
    abortRace: AbortRace,
    onOutcome?: (outcome: ToolOutcome) => void,
  ): Promise<ToolOutcome> {
    if (limit === Number.POSITIVE_INFINITY) {
      const outcome = await runOne(call, signal, abortRace);
      onOutcome?.(outcome);
      return outcome;
    }
    if (active < limit) active++;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      const outcome = await runOne(call, signal, abortRace);
      // Heard before the slot passes on: with parallel: false a result is recorded before the
      // next call starts, so a crash between them never loses a finished call.
      onOutcome?.(outcome);
      return outcome;
    } finally {
      // Hand the slot straight to the next waiting call, if any.
      const next = waiting.shift();
      if (next === undefined) active--;
      else next();
    }
  }

  async function runOne(call: ToolCallMessage, signal: AbortSignal, abortRace: AbortRace): Promise<ToolOutcome> {
    // It already ran while an earlier call waited for approval: never run it again.
    if (call.heldResult !== undefined) return { type: "tool_result", id: call.id, ...call.heldResult };
    // Every call is answered: whatever escapes the steps below (a thrown value whose very
    // inspection throws) becomes the call's error result instead of leaving it unanswered.
    try {
      const definition = definitions.get(call.name);
      // Most calls have nothing to check: no approval state, no flag, no hook. Skip the await.
      const gated = call.approval !== undefined || hooks?.beforeToolCall !== undefined || (definition as { requireApproval?: boolean } | undefined)?.requireApproval === true;
      const waitStart = gated ? performance.now() : 0;
      const gate = gated ? await checkGate(call, definition, signal, abortRace) : "run";
      // Time in the gate is waiting (a hook asking the user), not running: measured apart.
      const waitMs = gated ? performance.now() - waitStart : 0;
      // A subagent paused inside this call earlier: resume it once all its own calls are decided.
      const nested = call.approval?.nested;
      if (gate === "pending") {
        onEvent?.({ type: "tool-approval-request", id: call.id, name: call.name, input: call.input });
        return { type: "approval-pending", call };
      }
      const handler = definition !== undefined && "handler" in definition ? definition.handler : ownHandler(toolHandlers, call.name);
      onEvent?.({ type: "tool-execution-start", id: call.id, name: call.name, input: call.input });
      const started = performance.now();
      let result: ToolResultMessage;
      try {
        result = gate === "run" ? await answer(call, definition, handler, signal, abortRace, nested) : gate;
      } catch (error) {
        if (!isApprovalPause(error)) throw error;
        onEvent?.({ type: "tool-approval-request", id: call.id, name: call.name, input: call.input });
        return { type: "approval-pending", call, nested: error.session };
      }
      if (hooks?.afterToolCall !== undefined) result = await afterHook(call, result, abortRace);
      if (waitMs >= 1) result.waitMs = Math.round(waitMs);
      onEvent?.({ type: "tool-execution-end", id: call.id, name: call.name, result, durationMs: roundMs(performance.now() - started), waitMs: roundMs(waitMs) });
      return result;
    } catch (error) {
      return errorResult(call.id, `Error: ${describeError(error)}`);
    }
  }

  // Approval decisions recorded on the call win; then the tool's own flag and the hook.
  async function checkGate(
    call: ToolCallMessage,
    definition: ToolDefinition | undefined,
    signal: AbortSignal,
    abortRace: AbortRace,
  ): Promise<"run" | "pending" | ToolResultMessage> {
    const decision = call.approval?.status;
    if (decision === "pending") {
      const nested = call.approval?.nested;
      return nested !== undefined && pendingApprovals(nested).every((inner) => inner.approval?.status !== "pending") ? "run" : "pending";
    }
    if (decision === "denied") return errorResult(call.id, `Rejected: ${call.approval?.reason ?? "the call was not approved"}`);
    let needsApproval = decision !== "approved" && (definition as { requireApproval?: boolean } | undefined)?.requireApproval === true;
    if (hooks?.beforeToolCall !== undefined && !signal.aborted) {
      try {
        const verdict = await abortRace.race(Promise.resolve(hooks.beforeToolCall({ call, session: options.session ?? { messages: [] } })));
        if (verdict !== undefined && "deny" in verdict) return errorResult(call.id, `Denied: ${verdict.deny}`);
        if (verdict !== undefined && verdict.requireApproval === true && decision !== "approved") needsApproval = true;
      } catch (error) {
        if (signal.aborted) return errorResult(call.id, abortedText);
        onEvent?.({ type: "hook-error", hook: "beforeToolCall", id: call.id, error: describeError(error) });
        return errorResult(call.id, `Denied: the beforeToolCall hook failed: ${describeError(error)}`);
      }
    }
    return needsApproval ? "pending" : "run";
  }

  async function afterHook(call: ToolCallMessage, result: ToolResultMessage, abortRace: AbortRace): Promise<ToolResultMessage> {
    try {
      const replaced = await abortRace.race(Promise.resolve(hooks!.afterToolCall!({ call, result, session: options.session ?? { messages: [] } })));
      if (replaced === undefined) return result;
      // `{ output, isError? }`, or the new output itself.
      const shaped = typeof replaced === "object" && replaced !== null && !Array.isArray(replaced) && "output" in replaced;
      const next: ToolResultMessage = { type: "tool_result", id: call.id, output: toJsonOutput(shaped ? replaced.output : replaced) };
      if (shaped && replaced.isError === true) next.isError = true;
      return next;
    } catch (error) {
      onEvent?.({ type: "hook-error", hook: "afterToolCall", id: call.id, error: describeError(error) });
      return errorResult(call.id, `Error: the afterToolCall hook failed: ${describeError(error)}`);
    }
  }

  async function answer(
    call: ToolCallMessage,
    definition: ToolDefinition | undefined,
    handler: ToolHandler | undefined,
    signal: AbortSignal,
    abortRace: AbortRace,
    nested?: Session,
  ): Promise<ToolResultMessage> {
    if (handler === undefined) {
      const available = [...new Set([...definitions.keys(), ...Object.keys(toolHandlers)])].join(", ");
      return errorResult(call.id, `Error: unknown tool ${describeValue(call.name)}. Available tools: ${available || "none"}.`);
    }
    if (signal.aborted) return errorResult(call.id, abortedText);
    // The adapter could not accept what the model sent: the call never runs.
    if (typeof call.inputError === "string") return errorResult(call.id, `Error: invalid input for tool "${call.name}": ${call.inputError}`);
    let input: unknown = call.input;
    try {
      if (definition !== undefined) {
        let validation = validateToolInput(definition, input);
        if (validation instanceof Promise) validation = await abortRace.race(validation);
        if (!validation.ok) {
          return errorResult(call.id, `Error: invalid input for tool "${call.name}": ${boundText(validation.message, maxErrorLength)}`);
        }
        input = validation.value;
      }
      const timeout = (definition !== undefined && "timeout" in definition ? definition.timeout : undefined) ?? options.toolTimeout;
      let output = timeout === undefined || timeout === Number.POSITIVE_INFINITY ? runHandler(handler, input, contextFor(call, signal, nested), abortRace) : runWithTimeout(handler, input, call, signal, timeout, nested);
      // A synchronous handler's value is used as it is: no extra turn of the event loop.
      if (output instanceof Promise) output = await output;
      return { type: "tool_result", id: call.id, output: toJsonOutput(output) };
    } catch (error) {
      if (isApprovalPause(error) && !signal.aborted) {
        // A pause with nothing to decide would resume as if approved: the call fails instead.
        if (pendingApprovals(error.session).length === 0) return errorResult(call.id, "Error: the tool paused for approval, but nothing in its session waits for a decision");
        throw error;
      }
      if (signal.aborted && isAbortError(error)) return errorResult(call.id, abortedText);
      if (isInstance(error, ToolTimeoutError)) return errorResult(call.id, `Error: ${error.message}`);
      return errorResult(call.id, `Error: ${describeError(error)}`);
    }
  }

  function contextFor(call: ToolCallMessage, signal: AbortSignal, nested?: Session): ToolContext {
    const context: ToolContext = {
      signal,
      id: call.id,
      name: call.name,
      session: options.session ?? { messages: [] },
      update: (progress) => onEvent?.({ type: "tool-execution-update", id: call.id, name: call.name, progress }),
    };
    if (options.agentName !== undefined) context.agentName = options.agentName;
    if (nested !== undefined) context.resume = nested;
    return context;
  }

  async function runWithTimeout(
    handler: ToolHandler,
    input: unknown,
    call: ToolCallMessage,
    runSignal: AbortSignal,
    timeout: number,
    nested?: Session,
  ): Promise<unknown> {
    const controller = new AbortController();
    const onRunAbort = (): void => controller.abort(runSignal.reason);
    runSignal.addEventListener("abort", onRunAbort, { once: true });
    const timer = setTimeout(
      () => controller.abort(new ToolTimeoutError(`tool "${call.name}" timed out after ${timeout} ms`)),
      clampDelay(timeout),
    );
    const callRace = createAbortRace(controller.signal);
    try {
      return await runHandler(handler, input, contextFor(call, controller.signal, nested), callRace);
    } catch (error) {
      if (controller.signal.reason instanceof ToolTimeoutError) throw controller.signal.reason;
      throw error;
    } finally {
      clearTimeout(timer);
      runSignal.removeEventListener("abort", onRunAbort);
      callRace.dispose();
    }
  }

  async function run(
    toolCalls: readonly ToolCallMessage[],
    signal: AbortSignal,
    abortRace: AbortRace,
    started?: ReadonlyMap<string, Promise<ToolOutcome>>,
  ): Promise<ToolOutcome[]> {
    if (toolCalls.length === 1) {
      // The common case, without the bookkeeping of ordering several results.
      const call = toolCalls[0]!;
      const early = started?.get(call.id);
      if (early === undefined) return [await start(call, signal, abortRace, deliverAlone)];
      const outcome = await early;
      deliverAlone(outcome);
      return [outcome];
    }
    const outcomes = new Array<ToolOutcome | undefined>(toolCalls.length);
    let delivered = 0;
    // Results enter in call order: once a call waits for approval, later results wait with it
    // (the caller holds them; see `heldResult`).
    let waitingForApproval = false;
    const deliver = (index: number, outcome: ToolOutcome): void => {
      outcomes[index] = outcome;
      for (let next = outcomes[delivered]; next !== undefined; next = outcomes[++delivered]) {
        if (next.type === "approval-pending") waitingForApproval = true;
        else if (!waitingForApproval) onResult?.(next);
      }
    };
    await Promise.all(
      toolCalls.map((call, index) => {
        const early = started?.get(call.id);
        return early !== undefined ? early.then((outcome) => deliver(index, outcome)) : start(call, signal, abortRace, (outcome) => deliver(index, outcome));
      }),
    );
    return outcomes as ToolOutcome[];
  }

  function deliverAlone(outcome: ToolOutcome): void {
    if (outcome.type === "tool_result") onResult?.(outcome);
  }

  const isEager = (name: string): boolean => (definitions.get(name) as { eager?: boolean } | undefined)?.eager !== false;

  return { start, run, isEager };
}

const abortedText = "Error: aborted before the tool finished";

/**
 * Thrown by a handler whose work paused for a human's approval (a subagent whose own run paused):
 * the call waits too, keeping `session`, and on resume the handler gets it back as `context.resume`.
 */
export class ApprovalPause extends Error {
  override name = "ApprovalPause";
  readonly session: Session;

  constructor(session: Session) {
    super("paused for approval");
    this.session = session;
  }
}

class ToolTimeoutError extends Error {
  override name = "ToolTimeoutError";
}

function isApprovalPause(error: unknown): error is ApprovalPause {
  return isInstance(error, ApprovalPause);
}

/** A handler from `toolHandlers`: only its own keys, so a model naming `constructor` or `__proto__` gets an unknown tool. */
function ownHandler(toolHandlers: ToolHandlers, name: string): ToolHandler | undefined {
  return Object.hasOwn(toolHandlers, name) ? toolHandlers[name] : undefined;
}

function errorResult(id: string, output: string): ToolResultMessage {
  return { type: "tool_result", id, output, isError: true };
}

// A handler that ignores its signal cannot hold the run: the race settles on abort and the
// handler's late result is dropped.
function runHandler(handler: ToolHandler, input: unknown, context: ToolContext, abortRace: AbortRace): unknown {
  const output = handler(input, context);
  if (output !== null && typeof output === "object" && typeof (output as PromiseLike<unknown>).then === "function") {
    return abortRace.race(output as PromiseLike<unknown>);
  }
  return output;
}

/** Tool output must be plain JSON to stay in the session; `undefined` becomes `""`. Throws for values JSON cannot hold. */
function toJsonOutput(output: unknown): JsonValue {
  if (output === undefined) return "";
  if (typeof output === "string" || typeof output === "boolean" || output === null) return output;
  if (typeof output === "number" && Number.isFinite(output)) return output;
  const text = JSON.stringify(output);
  if (text === undefined) return "";
  return JSON.parse(text) as JsonValue;
}
