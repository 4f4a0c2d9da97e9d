import type { ModelMessage } from "../session.ts";
import type { PendingApproval } from "../tools/tool-outcome.ts";
import type { OpenTurn } from "./open-turn.ts";
import type { RunContext } from "./run-context.ts";

/**
 * What the loop does next: the states of a run. Each phase of the loop takes one step and returns
 * the next; `runSteps` switches on `type` until the step is `end`. Steps are plain objects.
 */
export type NextStep =
  /**
   * Answer the open turn's tool calls: run them (results enter the session in call order), or, when
   * the model stopped for another reason than tool use, close them with error results. The step
   * is the open turn itself: one object a turn.
   */
  | ({ type: "answer-tools" } & OpenTurn)
  /** Call the model for the next turn: after the abort check, queued steering and the iteration limit. */
  | { type: "call-model" }
  /** The final answer broke the `output` schema: close its turn and send the problems back. */
  | { type: "correct-output"; last: ModelMessage | undefined; problems: string }
  /** The model answered without tool calls: the run ends, unless steering or a follow-up goes on with it. */
  | { type: "answered"; last: ModelMessage | undefined }
  /** The run is over; `run-end` is emitted for it in one place. */
  | { type: "end"; end: RunEnd };

/** How a run ends, with what its `run-end` event reports. */
export type RunEnd =
  /**
   * `done`: the model answered; `stopped`: it stopped for another reason than tool use; `aborted`: the signal.
   * `runningTasks`: a run with `backgroundTasks.whenIdle: "end"` ended while these tasks go on.
   */
  | { outcome: "done" | "stopped" | "aborted" | "stop-condition" | "loop-detected"; runningTasks?: string[] }
  /** `timeouts.runMs` ran out: ended as an abort, reported with the `TimeoutError`, not thrown. */
  | { outcome: "timeout"; error: unknown }
  /**
   * A guardrail blocked the input or the answer: the blocked message's marker is in the session.
   * With `throwOnBlock` the loop throws `GuardrailTrippedError` after `run-end`.
   */
  | { outcome: "blocked"; kind: "input" | "output"; guardrail: string; message: string }
  /** Tool calls wait for a human's approval; the session holds the paused state. */
  | { outcome: "paused"; pending: readonly PendingApproval[] }
  /** A phase threw (a `MaxIterationsError` included): the loop rethrows it after `run-end`. */
  | { outcome: "error"; error: unknown };

/** The `call-model` step: it carries nothing, so one object serves every run. */
export const callModelNext: NextStep = { type: "call-model" };

/** Ends the run as aborted: an `aborted` assistant message (with what streamed, if anything) closes the session. */
export function endAborted(run: Pick<RunContext, "add">, content: string): NextStep {
  run.add({ role: "assistant", content, stopReason: "aborted" });
  return { type: "end", end: { outcome: "aborted" } };
}
