import type { ContentPart } from "../content-parts.ts";
import type { JsonObject, JsonValue, Session, TaskRecord, TaskStatus, ToolResultMessage } from "../session.ts";
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
  /** A task's handler settled (or it was cancelled); its record in the session says how. */
  | { type: "task-settled"; id: string; status: TaskStatus; durationMs: number }
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
  emit: ((event: TaskEvent) => void) | undefined;
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
