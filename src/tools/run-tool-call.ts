import { roundMs } from "../numeric-options.ts";
import type { ToolResultMessage } from "../session.ts";
import { knownToolNames, type ToolCallRun } from "./executor-setup.ts";
import { beginTool, invokeTool, settleCall, type AwaitedOutput } from "./invoke-tool.ts";
import { afterToolCall } from "./after-tool-call.ts";
import { checkGate, isGated } from "./tool-gate.ts";
import { decisionHolds } from "./approval.ts";
import { checkLoopGuard } from "./loop-guard.ts";
import type { ToolDefinition } from "./tool.ts";
import type { PendingApproval, ToolOutcome } from "./tool-outcome.ts";
import type { ToolExecutionEvent } from "./tool-events.ts";
import { notLoadedResult, thrownResult, unknownToolResult } from "./tool-errors.ts";
import { searchToolsName } from "./search-tools.ts";

/**
 * One call through its phases: the gate (approval, `beforeToolCall`), the handler (`invokeTool`),
 * then the `afterToolCall` hook and the `tool-execution-end` event. Gives the call's result or a
 * pause for approval, itself when nothing was awaited, else as one promise that never rejects.
 */
export function runToolCall(run: ToolCallRun): ToolOutcome | Promise<ToolOutcome> {
  return settleCall(run, beginToolCall(run));
}

/**
 * `runToolCall`, except that a call with nothing around its handler leaves the handler's promise
 * to the caller (`AwaitedOutput`, see `beginTool`), to await with whatever it does next.
 */
export function beginToolCall(run: ToolCallRun): ToolOutcome | Promise<ToolOutcome> | AwaitedOutput {
  const { call, setup } = run;
  // It already ran while an earlier call waited for approval: never run it again.
  if (call.heldResult !== undefined) return { type: "tool_result", id: call.id, ...call.heldResult };
  // Every call is answered: whatever escapes the phases (a thrown value whose very inspection
  // throws) becomes the call's error result instead of leaving it unanswered.
  try {
    const definition = setup.definitions.get(call.name);
    // A tool only programs may call is unknown to the model.
    if (run.caller === undefined && setup.programOnly?.has(call.name) === true)
      return unknownToolResult(call, knownToolNames(setup));
    // A deferred tool the model has not loaded is never run, not even asked about; a program's
    // call is read at its code call, the call the model made.
    if (
      definition?.deferred === true &&
      setup.offer?.callable(setup.session, call.name, run.caller ?? call.id) === false
    )
      return notLoadedResult(call, searchToolsName);
    const refused =
      setup.loopGuard !== undefined && reachesGuard(run) ? checkLoopGuard(setup.loopGuard, call) : undefined;
    // Nothing around the handler (no gate, no listener, no hook): its outcome is the call's,
    // without an async frame of its own (`invokeTool` never rejects).
    if (setup.onEvent === undefined && setup.hooks?.afterToolCall === undefined) {
      if (refused !== undefined) return refused;
      if (!isGated(call, definition, setup)) return beginTool(run, definition);
    }
    return runPhases(run, definition, refused);
  } catch (error) {
    return thrownResult(call, error);
  }
}

// A call the loop guard let through goes on to its gate; one it refused is answered by the refusal.
function reachesGuard({ call, signal, caller }: ToolCallRun): boolean {
  // The guard counts the model's calls: a program loops on purpose, and its code call was counted.
  if (signal.aborted || caller !== undefined) return false;
  const approval = call.approval;
  return approval === undefined || (approval.status === "approved" && decisionHolds(call));
}

async function runPhases(
  run: ToolCallRun,
  definition: ToolDefinition | undefined,
  refused: ToolResultMessage | undefined,
): Promise<ToolOutcome> {
  const { call, setup } = run;
  try {
    let answered = refused;
    let waitMs = 0;
    if (answered === undefined && isGated(call, definition, setup)) {
      const waitStart = performance.now();
      const gate = await checkGate(run, definition);
      // Time in the gate is waiting (a hook asking the user), not running: measured apart.
      waitMs = performance.now() - waitStart;
      if (gate.type === "pending")
        return approvalRequested(
          run,
          gate.consulted === undefined
            ? { type: "approval-pending", call }
            : { type: "approval-pending", call, consulted: gate.consulted },
        );
      if (gate.type === "answered") answered = gate.result;
    }
    setup.onEvent?.(withCaller({ type: "tool-execution-start", id: call.id, name: call.name, input: call.input }, run));
    // Only a listener hears the duration: without one (and no wait to record) no clock is read.
    const timing: Timing =
      setup.onEvent === undefined && waitMs === 0 ? untimed : { started: performance.now(), waitMs };
    const outcome = answered ?? (await invokeTool(run, definition));
    if (outcome.type === "approval-pending") return approvalRequested(run, outcome);
    const after = setup.hooks?.afterToolCall;
    if (after === undefined) return ended(run, outcome, timing);
    const replaced = await afterToolCall(run, after, outcome);
    // A task's record stays on its call's result whatever the hook made of the note.
    if (outcome.task !== undefined && replaced.task === undefined) replaced.task = outcome.task;
    return ended(run, replaced, timing);
  } catch (error) {
    return thrownResult(call, error);
  }
}

/** When the handler started, and how long the gate waited before it. */
type Timing = { readonly started: number; readonly waitMs: number };

const untimed: Timing = { started: 0, waitMs: 0 };

function ended(run: ToolCallRun, result: ToolResultMessage, { started, waitMs }: Timing): ToolResultMessage {
  const { call, setup } = run;
  if (waitMs >= 1) result.waitMs = Math.round(waitMs);
  setup.onEvent?.(
    withCaller(
      {
        type: "tool-execution-end",
        id: call.id,
        name: call.name,
        result,
        durationMs: roundMs(performance.now() - started),
        waitMs: roundMs(waitMs),
      },
      run,
    ),
  );
  return result;
}

function approvalRequested(run: ToolCallRun, pending: PendingApproval): PendingApproval {
  const { call } = pending;
  run.setup.onEvent?.(
    withCaller({ type: "tool-approval-request", id: call.id, name: call.name, input: call.input }, run),
  );
  return pending;
}

// A program's call says which code call started it.
function withCaller<Event extends ToolExecutionEvent>(event: Event, { caller }: ToolCallRun): Event {
  if (caller !== undefined) event.caller = caller;
  return event;
}
