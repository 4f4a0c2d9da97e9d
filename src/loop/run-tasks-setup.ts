import { AgentError, describeValue } from "../errors.ts";
import { checkChoice } from "../numeric-options.ts";
import type { Session, ToolResultMessage } from "../session.ts";
import { backgroundOf } from "../tools/background.ts";
import {
  hasLiveTasks,
  syncTaskRecord,
  type BackgroundTask,
  type TaskEvent,
  type TaskHost,
  type TaskOutputCheck,
} from "../tools/task-registry.ts";
import type { ToolDefinition } from "../tools/tool.ts";
import type { ToolHooks } from "../tools/tool-hooks.ts";
import type { ToolEvent } from "../tools/tool-events.ts";
import type { ToolGuardrails } from "../guardrails/tool-guardrails.ts";

/** The run option `backgroundTasks`: what a run does while tasks of its session run. */
export type BackgroundTasksOptions = {
  /**
   * `"wait"` (default): a final answer while tasks of the session run (or wait to be delivered)
   * does not end the run: it waits (`signal` and `timeouts.runMs` apply), delivers the next outcome
   * and calls the model again. `"end"`: the run ends `done` with `runningTasks` on `run-end`; the
   * tasks go on, each outcome recorded as it comes and delivered before the first model call of
   * the session's next run.
   */
  whenIdle?: "wait" | "end";
  /** Called once a task's settled record is written to the session (the app's hook to wake the session). */
  onTaskSettled?: (task: BackgroundTask, session: Session) => void;
};

/** Throws an `AgentError` naming the option unless `option` is a valid `backgroundTasks` run option. */
export function checkBackgroundTasksOptions(option: unknown): void {
  if (option === undefined) return;
  if (typeof option !== "object" || option === null || Array.isArray(option))
    throw new AgentError(`backgroundTasks must be an object; got ${describeValue(option)}`);
  const { whenIdle, onTaskSettled } = option as BackgroundTasksOptions;
  checkChoice("backgroundTasks.whenIdle", whenIdle, ["wait", "end"]);
  if (onTaskSettled !== undefined && typeof onTaskSettled !== "function")
    throw new AgentError(`backgroundTasks.onTaskSettled must be a function; got ${describeValue(onTaskSettled)}`);
}

/** A run's share in background tasks; it exists only in a run with background tools, or whose session has tasks running here. */
export type RunTasks = {
  readonly host: TaskHost;
  readonly whenIdle: "wait" | "end";
  /** What a delivered outcome is cut to (the run's `largeOutput`). */
  readonly maxChars: number | undefined;
};

/**
 * The run's share in background tasks, or `undefined` (nothing to pay) when none of its tools
 * runs in the background and this process holds no task of its session.
 */
export function createRunTasks(
  { tools, session, options }: { tools: readonly ToolDefinition[]; session: Session; options: RunTasksOptions },
  run: {
    emit: ((event: TaskEvent | ToolEvent) => void) | undefined;
    /** The run's `toolOutput` guardrails for tasks' outcomes (`readGuardrails`), if any. */
    guarded: ToolGuardrails | undefined;
    maxChars: number | undefined;
  },
): RunTasks | undefined {
  if (!tools.some((definition) => backgroundOf(definition) !== undefined) && !hasLiveTasks(session)) return undefined;
  return {
    host: {
      emit: run.emit,
      onSettled: options.backgroundTasks?.onTaskSettled,
      check: taskOutputCheck(options.hooks, run.guarded),
    },
    whenIdle: options.backgroundTasks?.whenIdle ?? "wait",
    maxChars: run.maxChars,
  };
}

/** The run options `createRunTasks` reads. */
type RunTasksOptions = { backgroundTasks?: BackgroundTasksOptions; hooks?: ToolHooks };

// A task's outcome goes through the run's `afterToolCall` hook and `toolOutput` guardrails, as a direct call's result.
export function taskOutputCheck(hooks: ToolHooks | undefined, guarded: ToolGuardrails | undefined): TaskOutputCheck {
  if (guarded === undefined)
    return { beforeToolCall: hooks?.beforeToolCall, afterToolCall: hooks?.afterToolCall, marked: undefined };
  const { beforeToolCall, afterToolCall } = guarded.hooks;
  return { beforeToolCall, afterToolCall, marked: guarded.marked };
}

/** A result entered the session: a task's record that changed while it was on its way is written now. */
export function taskResultEntered(session: Session, result: ToolResultMessage): void {
  if (result.task !== undefined) syncTaskRecord(session, result);
}
