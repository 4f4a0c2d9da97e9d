import type { AgentEvent, RunOutcome } from "../loop/events.ts";
import type { RunMetrics } from "../loop/metrics.ts";

/**
 * How a task ended: the run's outcome, its metrics, the final answer, or the error that ended it.
 * `waitMs`: the part of `metrics.durationMs` spent waiting for the user to answer permission
 * prompts (absent when nothing was asked); the task worked the rest of the time.
 */
export type TaskResult = {
  outcome: RunOutcome;
  metrics?: RunMetrics;
  waitMs?: number;
  answer?: string;
  error?: unknown;
};

/**
 * Where a task's progress goes: the terminal (`terminalOutput`) or JSONL for scripts
 * (`jsonOutput`). `event` gets every event of the run in order, `finish` the result once.
 */
export type TaskOutput = {
  event: (event: AgentEvent) => void;
  finish: (result: TaskResult) => void;
  /** The user pressed Ctrl-C: the task is being stopped. */
  interrupting: () => void;
  /** Something else is about to use the terminal (a prompt): clear the spinner, end the line, hold output back until `resume`. */
  pause: () => void;
  /** The terminal is back: show what was held back. */
  resume: () => void;
};

/** The process exit code for a task's result: 0 done, 130 interrupted, 1 anything else. */
export function exitCodeOf(result: TaskResult): number {
  if (result.outcome === "done") return 0;
  return result.outcome === "aborted" ? 130 : 1;
}

/** How many model calls of a run reported no usage (they ended first: an interrupt, an error), so their tokens are unknown. */
export function unknownUsageCalls(metrics: RunMetrics): number {
  return Math.max(0, metrics.modelCalls - metrics.turns.filter((turn) => turn.usage !== undefined).length);
}
