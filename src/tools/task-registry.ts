import { AgentError } from "../errors.ts";
import { roundMs } from "../numeric-options.ts";
import { createAbortRace } from "../shared/abort.ts";
import {
  notifySessionChange,
  now,
  type JsonObject,
  type Message,
  type Session,
  type TaskRecord,
  type ToolCallMessage,
  type ToolResultMessage,
} from "../session.ts";
import { afterToolCall } from "./after-tool-call.ts";
import type { Background } from "./background.ts";
import type { ToolCallRun } from "./executor-setup.ts";
import type { ToolOutcome } from "./tool-outcome.ts";
import type { BackgroundTask, LiveTask, TaskEvent, TaskHost, TaskOutcome } from "./task-types.ts";
import { taskJournalOf } from "./task-journal.ts";
import type { ToolEvent } from "./tool-events.ts";
import { taskSpending } from "./task-spending.ts";

export type { BackgroundTask, LiveTask, TaskEvent, TaskHost, TaskOutcome, TaskOutputCheck } from "./task-types.ts";

// Liveness is holding: a task runs here while this map has it (its handler holds it anyway).
const liveTasks = new Map<string, LiveTask>();
// A settled task waits for its delivery in its session's set (a run on that session delivers it), so
// it lives as long as its session does: nothing here keeps a task whose session is gone. By id it is
// found through a weak reference while it lives (a run on a reloaded copy of the session takes it over).
const settledTasks = new Map<string, WeakRef<LiveTask>>();
const forgetSettled = new FinalizationRegistry<string>((id) => {
  if (settledTasks.get(id)?.deref() === undefined) settledTasks.delete(id);
});
const sessionTasks = new WeakMap<Session, Set<LiveTask>>();
const waiters = new WeakMap<Session, Set<() => void>>();
const taskWaiters = new Map<string, Set<() => void>>();

/** A task this process holds, by id: running, or settled and waiting for its delivery while its session lives. */
export function liveTask(id: string): LiveTask | undefined {
  return liveTasks.get(id) ?? settledTasks.get(id)?.deref();
}

/** How many tasks this process holds strongly: the ones running (a settled one lives as long as its session). */
export function runningTaskCount(): number {
  return liveTasks.size;
}

/** The tasks this process holds for `session`, in start order. */
export function liveTasksOf(session: Session): readonly LiveTask[] {
  const tasks = sessionTasks.get(session);
  return tasks === undefined ? noTasks : [...tasks];
}

/**
 * Whether this process holds any task of `session`, or of a copy of it (a task its log names).
 * Reads the log only while this process holds some task.
 */
export function hasLiveTasks(session: Session): boolean {
  if ((sessionTasks.get(session)?.size ?? 0) > 0) return true;
  if (liveTasks.size === 0 && settledTasks.size === 0) return false;
  for (const message of session.messages)
    if ("type" in message && message.type === "tool_result" && message.task !== undefined)
      if (liveTask(message.task.id) !== undefined) return true;
  return false;
}

const noTasks: readonly LiveTask[] = [];

/**
 * Starts call `run.call` as a background task: `begin` runs its handler under the task's own
 * signal (it outlives the run), and the call is answered at once with a `running` result that
 * carries the task's record. The task's settling writes its record into the session.
 */
export function startTask(
  run: ToolCallRun,
  background: Background,
  input: JsonObject,
  begin: (taskRun: ToolCallRun) => ToolOutcome | Promise<ToolOutcome>,
): ToolResultMessage {
  const { call, setup } = run;
  const journal = taskJournalOf(setup.session);
  const id = journal === undefined ? `task_${crypto.randomUUID()}` : journal.newId();
  const startedAt = journal === undefined ? now() : journal.now();
  const record: TaskRecord = { id, status: "running", onRestart: background.onRestart, attempt: 1, startedAt };
  const host = setup.tasks ?? { emit: undefined, onSettled: undefined };
  const task = hold({ id, callId: call.id, name: call.name, input, session: setup.session, host, record });
  host.emit?.({ type: "task-start", id, callId: call.id, name: call.name });
  runHandler(task, run, begin);
  return { type: "tool_result", id: call.id, output: runningOutput(id), task: record };
}

/** What the model is told at once of a call that became a task. */
export function runningOutput(id: string): JsonObject {
  return {
    task: id,
    status: "running",
    note:
      "This call runs in the background. Its outcome will come as a message when it settles; " +
      "check_task, wait_task and cancel_task act on it by this task id, where they are offered.",
  };
}

/**
 * Holds a task again after a restart: its handler runs once more with the same input and id
 * (`attempt` + 1), the new record written to the session.
 */
export function rerunTask(
  session: Session,
  found: { record: TaskRecord; callId: string; name: string; input: JsonObject },
  host: TaskHost,
  run: Omit<ToolCallRun, "signal" | "abortRace" | "task">,
  begin: (taskRun: ToolCallRun) => ToolOutcome | Promise<ToolOutcome>,
): void {
  const record: TaskRecord = {
    id: found.record.id,
    status: "running",
    onRestart: found.record.onRestart,
    attempt: found.record.attempt + 1,
    startedAt: taskJournalOf(session)?.now() ?? now(),
  };
  const task = hold({ ...found, id: record.id, session, host, record });
  writeRecord(task);
  runHandler(task, run, begin);
}

/** Holds a task found settled in the log (or recorded lost now) until its outcome is delivered. */
export function holdSettled(
  session: Session,
  found: { record: TaskRecord; callId: string; name: string; input: JsonObject },
  host: TaskHost,
): LiveTask {
  const task = hold({ ...found, id: found.record.id, session, host });
  task.settledHeard = true;
  if (found.record.status === "lost") writeRecord(task);
  else task.written = true;
  return task;
}

function hold(fields: {
  id: string;
  callId: string;
  name: string;
  input: JsonObject;
  session: Session;
  host: TaskHost;
  record: TaskRecord;
}): LiveTask {
  const task: LiveTask = {
    ...fields,
    controller: new AbortController(),
    startedMs: performance.now(),
    written: false,
    delivered: false,
    settledHeard: false,
    spent: undefined,
  };
  if (task.record.status === "running") liveTasks.set(task.id, task);
  else holdWeakly(task);
  tasksOf(task.session).add(task);
  return task;
}

// A settled task is held by its session's set alone: it goes when its session goes.
function holdWeakly(task: LiveTask): void {
  liveTasks.delete(task.id);
  if (settledTasks.get(task.id)?.deref() === task) return;
  settledTasks.set(task.id, new WeakRef(task));
  forgetSettled.register(task, task.id);
}

function tasksOf(session: Session): Set<LiveTask> {
  let tasks = sessionTasks.get(session);
  if (tasks === undefined) sessionTasks.set(session, (tasks = new Set()));
  return tasks;
}

function runHandler(
  task: LiveTask,
  run: Omit<ToolCallRun, "signal" | "abortRace" | "task">,
  begin: (taskRun: ToolCallRun) => ToolOutcome | Promise<ToolOutcome>,
): void {
  const { signal } = task.controller;
  const abortRace = createAbortRace(signal);
  // Its progress goes to the run holding the task now, and what it spends to that run's budget.
  const setup = {
    ...run.setup,
    onEvent: (event: ToolEvent) => taskEvent(task, event),
    spending: taskSpending(task, run.setup.spending?.ledger),
    session: task.session,
  };
  const taskRun: ToolCallRun = {
    call: { ...run.call, input: task.input },
    setup,
    turn: run.turn,
    signal,
    abortRace,
    task: { id: task.id, attempt: task.record.attempt },
  };
  // A durable run's journal runs each attempt and says when the outcome settles.
  const journal = taskJournalOf(task.session);
  const ran: Promise<ToolOutcome | TaskOutcome> =
    journal === undefined
      ? Promise.resolve(begin(taskRun))
      : journal.settle(task, async (attempt) => begin({ ...taskRun, task: { id: task.id, attempt } }));
  // `begin` never rejects (`invokeTool`); a value that comes after a cancel is dropped by `settle`.
  void ran
    .then<ToolOutcome | TaskOutcome>((outcome) => ("status" in outcome ? outcome : checked(task, taskRun, outcome)))
    .then(
      (outcome) => {
        abortRace.dispose();
        settleTask(task, "status" in outcome ? outcome : settledRecord(task, outcome));
        journal?.settled(task);
      },
      (error: unknown) => {
        abortRace.dispose();
        settleTask(task, { status: "failed", output: `Error: ${String(error)}`, isError: true });
        journal?.settled(task);
      },
    );
}

// A handler's `context.update(progress)` becomes the task's `task-update`; what a rerun's gate
// reports goes on as it is.
function taskEvent(task: LiveTask, event: ToolEvent): void {
  const { emit } = task.host;
  if (emit === undefined) return;
  if (event.type !== "tool-execution-update") return emit(event);
  emit({ type: "task-update", id: task.id, callId: task.callId, name: task.name, progress: event.progress });
}

// The outcome goes through what a direct call's result does (the `afterToolCall` hook, the
// `toolOutput` guardrails) before it is recorded: what they block never enters the session or a log.
async function checked(task: LiveTask, taskRun: ToolCallRun, outcome: ToolOutcome): Promise<ToolOutcome> {
  if (outcome.type !== "tool_result") return outcome;
  const check = task.host.check ?? { afterToolCall: taskRun.setup.hooks?.afterToolCall, marked: undefined };
  let result = outcome;
  if (check.afterToolCall !== undefined) result = await afterToolCall(taskRun, check.afterToolCall, outcome);
  return check.marked === undefined ? result : check.marked(result);
}

function settledRecord(task: LiveTask, outcome: ToolOutcome): TaskOutcome {
  if (outcome.type === "approval-pending")
    return {
      status: "failed",
      output: "Error: the call waited for an approval, which a background task cannot ask for",
      isError: true,
    };
  if (task.controller.signal.aborted && outcome.isError === true)
    return { status: "cancelled", output: outcome.output, isError: true };
  const settled: TaskOutcome = {
    status: outcome.isError === true ? "failed" : "completed",
    output: outcome.output,
  };
  if (outcome.isError === true) settled.isError = true;
  if (outcome.content !== undefined) settled.content = outcome.content;
  return settled;
}

/**
 * Settles a running task: its record gets `status`, `settledAt` and the outcome, and is written to
 * the session at once (a session change `{ type: "update", reason: "task" }`). A task that has
 * settled already is left as it is (a late value after a cancel is dropped).
 */
export function settleTask(task: LiveTask, outcome: TaskOutcome): void {
  if (task.record.status !== "running") return;
  const settledAt = taskJournalOf(task.session)?.now() ?? now();
  const record: TaskRecord = { ...task.record, status: outcome.status, settledAt };
  if (outcome.output !== undefined) record.output = outcome.output;
  if (outcome.isError === true) record.isError = true;
  if (outcome.content !== undefined) record.content = outcome.content;
  if (outcome.reason !== undefined) record.reason = outcome.reason;
  task.record = record;
  task.written = false;
  holdWeakly(task);
  const { spent } = task;
  writeRecord(task);
  const settled: TaskEvent = {
    type: "task-settled",
    id: task.id,
    status: record.status,
    durationMs: roundMs(performance.now() - task.startedMs),
  };
  if (spent !== undefined) settled.subagentUsage = spent;
  task.host.emit?.(settled);
}

/** Cancels a running task: its signal aborts with `reason`, and it is recorded `cancelled` without waiting for the handler. */
export function cancelLiveTask(task: LiveTask, reason: string | undefined): void {
  if (task.record.status !== "running") return;
  const text = reason === undefined ? "cancelled" : `cancelled: ${reason}`;
  task.controller.abort(new AgentError(`background task ${task.id} ${text}`));
  settleTask(task, {
    status: "cancelled",
    output: `The task was ${text}.`,
    isError: true,
    ...(reason === undefined ? {} : { reason }),
  });
}

/**
 * Writes the task's record to its call's result in the session (in place, as an `update` change a
 * bound store records at once), when the result is there; a result still on its way is written
 * when it enters (`syncTaskRecord`). Once a settled record is written, the waiters and the app's
 * `onSettled` hear of it.
 */
export function writeRecord(task: LiveTask): void {
  const { session } = task;
  const found = findRecordHolder(session.messages, task.id);
  if (found === undefined) return;
  const { index, message } = found;
  const holder = message.type === "tool_result" ? message : message.heldResult!;
  holder.task = task.record;
  // What the handler spent enters with its settled record, once.
  if (task.spent !== undefined && task.record.status !== "running") {
    holder.subagentUsage = [...(holder.subagentUsage ?? []), ...task.spent];
    task.spent = undefined;
  }
  task.written = message.type === "tool_result";
  notifySessionChange(session, { type: "update", index, message, reason: "task" });
  if (!task.written || task.record.status === "running") return;
  wake(task);
  if (!task.settledHeard) {
    task.settledHeard = true;
    try {
      task.host.onSettled?.(viewOf(task), session);
    } catch {
      // The app's hook runs outside any run that could report its failure; the record stands.
    }
  }
}

/** A task's result entered the session: a record that changed while it was on its way is written now. */
export function syncTaskRecord(session: Session, result: ToolResultMessage): void {
  const task = result.task === undefined ? undefined : liveTask(result.task.id);
  if (task === undefined || task.written || task.session !== session) return;
  if (result.task !== task.record) writeRecord(task);
  else if (task.record.status === "running") task.written = true;
  else writeRecord(task);
}

/** The message that holds task `id`'s record: its call's result, or the call holding that result back. */
export function findRecordHolder(
  messages: readonly Message[],
  id: string,
): { index: number; message: ToolResultMessage | ToolCallMessage } | undefined {
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index]!;
    if (!("type" in message)) continue;
    if (message.type === "tool_result" && message.task?.id === id) return { index, message };
    if (message.type === "tool_call" && message.heldResult?.task?.id === id) return { index, message };
  }
  return undefined;
}

function recordIn(session: Session, id: string): TaskRecord | undefined {
  const found = findRecordHolder(session.messages, id);
  if (found === undefined) return undefined;
  const { message } = found;
  return message.type === "tool_result" ? message.task : message.heldResult?.task;
}

/** The task's outcome was given to the model: this process lets it go. */
export function markDelivered(task: LiveTask): void {
  task.delivered = true;
  liveTasks.delete(task.id);
  if (settledTasks.get(task.id)?.deref() === task) settledTasks.delete(task.id);
  sessionTasks.get(task.session)?.delete(task);
}

/** A run on `session` takes the tasks this process holds for it (by id: a reloaded copy of the session too). */
export function adoptTask(task: LiveTask, session: Session, host: TaskHost): void {
  task.host = host;
  if (task.session === session) return;
  sessionTasks.get(task.session)?.delete(task);
  task.session = session;
  tasksOf(session).add(task);
  // The copy may have been loaded before the task settled: it gets the record as it is now.
  if (task.record.status !== "running" && recordIn(session, task.id)?.status === "running") writeRecord(task);
}

/** Calls `listener` whenever a task of `session` settles (its record written). Returns the unsubscribe. */
export function onTaskSettledIn(session: Session, listener: () => void): () => void {
  let set = waiters.get(session);
  if (set === undefined) waiters.set(session, (set = new Set()));
  set.add(listener);
  return () => set.delete(listener);
}

/** Calls `listener` once task `id` settles (its record written). Returns the unsubscribe. */
export function onTaskSettled(id: string, listener: () => void): () => void {
  let set = taskWaiters.get(id);
  if (set === undefined) taskWaiters.set(id, (set = new Set()));
  set.add(listener);
  return () => {
    set.delete(listener);
    if (set.size === 0) taskWaiters.delete(id);
  };
}

function wake(task: LiveTask): void {
  for (const listener of [...(waiters.get(task.session) ?? [])]) listener();
  for (const listener of [...(taskWaiters.get(task.id) ?? [])]) listener();
}

/** A live task as `backgroundTasks` lists it. */
export function viewOf(task: LiveTask): BackgroundTask {
  return taskView(task.record, { callId: task.callId, name: task.name, input: task.input }, task.delivered);
}

/** A task record as `backgroundTasks` lists it. */
export function taskView(
  record: TaskRecord,
  call: { callId: string; name: string; input: JsonObject },
  delivered: boolean,
): BackgroundTask {
  const view: BackgroundTask = {
    id: record.id,
    callId: call.callId,
    name: call.name,
    input: call.input,
    status: record.status,
    delivered,
    attempt: record.attempt,
    onRestart: record.onRestart,
    startedAt: record.startedAt,
  };
  if (record.settledAt !== undefined) view.settledAt = record.settledAt;
  if (record.output !== undefined) view.output = record.output;
  if (record.isError === true) view.isError = true;
  return view;
}
