import type { ContentPart } from "../content-parts.ts";
import type { BudgetLedger } from "../model/budget.ts";
import type {
  JsonObject,
  JsonValue,
  Session,
  SubagentUsage,
  TaskRecord,
  TaskStatus,
  ToolResultMessage,
} from "../session.ts";
import type { ToolEvent } from "./tool-events.ts";
import type { ToolHooks } from "./tool-hooks.ts";

/** A background task as `backgroundTasks(session)` lists it, read from the session alone. */
export type BackgroundTask = {
  id: string;
  /** The id of the tool call that started it (its result carries the task's record). */
  callId: string;
  name: string;
  /** The call's input, as the handler got it (without `run_in_background`). */
  input: JsonObject;
  status: TaskStatus;
  /** Whether a message (or a `wait_task` result) gave the model its outcome. */
  delivered: boolean;
  attempt: number;
  onRestart: "rerun" | "lost";
  startedAt: string;
  settledAt?: string;
  output?: JsonValue;
  isError?: boolean;
};

/** The events of background tasks (each a part of the loop's `AgentEvent`). */
export type TaskEvent =
  /** A call became a background task: its result (status `running`) is on its way into the session. */
  | { type: "task-start"; id: string; callId: string; name: string }
  /**
   * A task's handler settled (or it was cancelled); its record in the session says how.
   * `subagentUsage`: what its handler spent on models (a subagent's calls), by model, also recorded
   * on its call's result; it counted against the budget of the run holding the task as it was spent.
   */
  | { type: "task-settled"; id: string; status: TaskStatus; durationMs: number; subagentUsage?: SubagentUsage[] }
  /** A running task's handler reported progress (`context.update(progress)`; a subagent's events). */
  | { type: "task-update"; id: string; callId: string; name: string; progress: JsonValue }
  /**
   * Before its first model call, a run found a task of its session's log that no process holds
   * (`rerun`, `lost`), or one settled and not yet delivered (`deliver`).
   */
  | { type: "task-resume"; id: string; action: "rerun" | "lost" | "deliver" };

/**
 * Who hears of a task while it runs: the run that started (or last adopted) it. `emit` is cleared
 * when that run ends; `onSettled` is the app's hook, called once the settled record is written.
 */
export type TaskHost = {
  /** The holding run's events: the tasks' own, and what a rerun's gate reports (a hook's error, an approval). */
  emit: ((event: TaskEvent | ToolEvent) => void) | undefined;
  /** The holding run's budget ledger: what a task's handler spends on models is charged there as it is spent. */
  ledger?: BudgetLedger;
  onSettled: ((task: BackgroundTask, session: Session) => void) | undefined;
  /** What a task's outcome goes through before it is recorded; absent: the executor's `afterToolCall` hook alone. */
  check?: TaskOutputCheck;
};

/**
 * What a direct call's result goes through, for a task's outcome: the run's `afterToolCall` hook
 * with its `toolOutput` guardrails around it, then `marked` (the verdict's result in place of one
 * a guardrail blocked or redacted). Its own guardrail instance: a task's verdict never mixes with
 * the running note's of the same call id.
 */
export type TaskOutputCheck = {
  /** What a rerun's call goes through before its handler runs again: the run's `beforeToolCall` with its `toolInput` guardrails. */
  readonly beforeToolCall: ToolHooks["beforeToolCall"];
  readonly afterToolCall: ToolHooks["afterToolCall"];
  readonly marked: ((result: ToolResultMessage) => ToolResultMessage) | undefined;
};

/**
 * A task this process holds. A task in a session's log that no process holds (its process was
 * killed) is orphaned: a run applies its `onRestart`.
 */
export type LiveTask = {
  readonly id: string;
  readonly callId: string;
  readonly name: string;
  readonly input: JsonObject;
  session: Session;
  host: TaskHost;
  readonly controller: AbortController;
  readonly startedMs: number;
  record: TaskRecord;
  /** The record the session holds is `record`. */
  written: boolean;
  delivered: boolean;
  settledHeard: boolean;
  /** What its handler spent on models, by model, not yet written to its result (`taskSpending`). */
  spent: SubagentUsage[] | undefined;
};

/** How a task settled: what its record gets. */
export type TaskOutcome = {
  status: TaskStatus;
  /** Absent for a `lost` task: nobody knows its outcome. */
  output?: JsonValue;
  isError?: boolean;
  content?: ContentPart[];
  reason?: string;
};
