import { AgentError, TimeoutError, describeValue } from "../errors.ts";
import { checkNumber, clampDelay } from "../numeric-options.ts";
import { abortReason } from "../shared/abort.ts";
import {
  notifySessionChange,
  now,
  type JsonObject,
  type Message,
  type Session,
  type TaskRecord,
  type ToolCallMessage,
} from "../session.ts";
import { backgroundOf, handlerInput } from "./background.ts";
import type { ExecutorSetup, ToolCallRun } from "./executor-setup.ts";
import { checkGate, isGated } from "./tool-gate.ts";
import type { ToolOutcome } from "./tool-outcome.ts";
import { invokeTool } from "./invoke-tool.ts";
import {
  adoptTask,
  cancelLiveTask,
  findRecordHolder,
  holdSettled,
  liveTask,
  onTaskSettled,
  rerunTask,
  taskView,
  viewOf,
  type BackgroundTask,
  type TaskHost,
} from "./task-registry.ts";
import type { ToolDefinition } from "./tool.ts";
import { taskJournalOf } from "./task-journal.ts";

/**
 * The background tasks of `session`, in start order, read from the session alone: a loaded copy
 * of it (and the viewer) list the same.
 */
export function backgroundTasks(session: Session): BackgroundTask[] {
  const { messages } = session;
  const delivered = deliveredTasks(messages);
  const calls = callsById(messages);
  const tasks: BackgroundTask[] = [];
  for (const message of messages) {
    if (!("type" in message) || message.type !== "tool_result" || message.task === undefined) continue;
    tasks.push(taskView(message.task, callOf(calls, message.id, message.task), delivered.has(message.task.id)));
  }
  return tasks;
}

/** Options of `waitForTask`. */
export type WaitForTaskOptions = {
  /** Milliseconds to wait at most (> 0); past it a `TimeoutError`, and the task goes on. Default: no limit. */
  timeoutMs?: number;
  /** Stops the wait (not the task): the promise rejects with the signal's reason. */
  signal?: AbortSignal;
};

/**
 * Waits until task `id` of `session` settles and returns it (at once when it has). Throws an
 * `AgentError` naming an id the session has no task of, a `TimeoutError` past `timeoutMs`.
 */
export async function waitForTask(
  session: Session,
  id: string,
  options: WaitForTaskOptions = {},
): Promise<BackgroundTask> {
  checkNumber("waitForTask: timeoutMs", options.timeoutMs, { min: 0, exclusive: true, infinity: true });
  const known = findTask(session, id, "waitForTask");
  if (known.status !== "running") return known;
  const { timeoutMs, signal } = options;
  signal?.throwIfAborted();
  const started = performance.now();
  return await new Promise<BackgroundTask>((resolve, reject) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const stop = (): void => {
      unsubscribe();
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    };
    const unsubscribe = onTaskSettled(id, () => {
      stop();
      resolve(findTask(session, id, "waitForTask"));
    });
    const onAbort = (): void => {
      stop();
      reject(abortReason(signal!));
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    if (timeoutMs !== undefined && timeoutMs !== Number.POSITIVE_INFINITY)
      timer = setTimeout(() => {
        stop();
        reject(new TimeoutError("waitForTask", performance.now() - started, { retryable: false }));
      }, clampDelay(timeoutMs));
  });
}

/**
 * Cancels task `id` of `session` and returns it: the handler's signal aborts with `reason`, and the
 * task is recorded `cancelled` whether or not the handler stops (it is not waited for; a value it
 * gives later is dropped). A settled task is returned unchanged. A task no process holds (its
 * process was killed) is recorded cancelled and never rerun. Throws an `AgentError` naming an id
 * the session has no task of.
 */
export function cancelTask(session: Session, id: string, reason?: string): BackgroundTask {
  if (reason !== undefined && typeof reason !== "string")
    throw new AgentError(`cancelTask: reason must be a string; got ${describeValue(reason)}`);
  const known = findTask(session, id, "cancelTask");
  if (known.status !== "running") return known;
  const live = liveTask(id);
  if (live !== undefined) {
    // A durable run records the cancel where its journal says (its next safe point).
    const journal = taskJournalOf(live.session);
    if (journal === undefined) cancelLiveTask(live, reason);
    else journal.requestCancel(live, reason);
    return viewOf(live);
  }
  const holder = findRecordHolder(session.messages, id)!;
  const { message, index } = holder;
  const previous = message.type === "tool_result" ? message.task! : message.heldResult!.task!;
  const record: TaskRecord = {
    ...previous,
    status: "cancelled",
    settledAt: now(),
    output: reason === undefined ? "The task was cancelled." : `The task was cancelled: ${reason}.`,
    isError: true,
    ...(reason === undefined ? {} : { reason }),
  };
  if (message.type === "tool_result") message.task = record;
  else message.heldResult!.task = record;
  notifySessionChange(session, { type: "update", index, message, reason: "task" });
  return findTask(session, id, "cancelTask");
}

/** What `resumeTasks` (and a run, before its first model call) did with a task of the log. */
export type TaskResumeAction = { id: string; action: "rerun" | "lost" | "deliver" };

/**
 * The resume `resumeTasks` and a run share: the tasks of the log no process holds get their
 * `onRestart`, the settled undelivered ones are held for delivery, and the tasks this process holds
 * for the session (a reloaded copy of it too) are taken over by `host`.
 */
export function resumeSessionTasks(session: Session, setup: ExecutorSetup, host: TaskHost): TaskResumeAction[] {
  const { messages } = session;
  const delivered = deliveredTasks(messages);
  const calls = callsById(messages);
  const actions: TaskResumeAction[] = [];
  for (const message of messages) {
    if (!("type" in message) || message.type !== "tool_result" || message.task === undefined) continue;
    const record = message.task;
    const live = liveTask(record.id);
    if (live !== undefined) {
      adoptTask(live, session, host);
      continue;
    }
    if (delivered.has(record.id)) continue;
    const call = calls.get(message.id);
    const found = { record, callId: message.id, name: call?.name ?? "", input: inputOf(call, setup) };
    const action = resumeOne(session, setup, host, found, call);
    actions.push({ id: record.id, action });
    host.emit?.({ type: "task-resume", id: record.id, action });
  }
  return actions;
}

function resumeOne(
  session: Session,
  setup: ExecutorSetup,
  host: TaskHost,
  found: { record: TaskRecord; callId: string; name: string; input: JsonObject },
  call: ToolCallMessage | undefined,
): TaskResumeAction["action"] {
  const { record } = found;
  if (record.status !== "running") {
    holdSettled(session, found, host);
    return "deliver";
  }
  const definition = call === undefined ? undefined : setup.definitions.get(call.name);
  if (record.onRestart === "rerun" && call !== undefined && definition !== undefined) {
    rerunTask(session, found, host, { call, setup, turn: [call] }, (taskRun) => rerunCall(taskRun, definition));
    return "rerun";
  }
  const lost: TaskRecord = {
    ...record,
    status: "lost",
    settledAt: taskJournalOf(session)?.now() ?? now(),
    reason: "the process running it stopped before it settled",
  };
  holdSettled(session, { ...found, record: lost }, host);
  return "lost";
}

// A rerun is a call: it goes through the gate again (the run's `beforeToolCall` hook with its
// `toolInput` guardrails, the approval policy; a decision recorded on the call for its input
// holds) before its handler runs. One that would wait for a human fails: a task cannot ask.
async function rerunCall(taskRun: ToolCallRun, definition: ToolDefinition): Promise<ToolOutcome> {
  const { call, setup } = taskRun;
  if (isGated(call, definition, setup)) {
    const gate = await checkGate(taskRun, definition);
    if (gate.type === "pending") return { type: "approval-pending", call };
    if (gate.type === "answered") return gate.result;
  }
  return await invokeTool(taskRun, definition);
}

// The input the handler got: the call's, without `run_in_background`.
function inputOf(call: ToolCallMessage | undefined, setup: ExecutorSetup): JsonObject {
  if (call === undefined) return {};
  return handlerInput(backgroundOf(setup.definitions.get(call.name)), call.input);
}

function findTask(session: Session, id: string, caller: string): BackgroundTask {
  if (typeof id !== "string") throw new AgentError(`${caller}: a task id must be a string; got ${describeValue(id)}`);
  const live = liveTask(id);
  if (live !== undefined && live.session === session) return viewOf(live);
  const { messages } = session;
  const holder = findRecordHolder(messages, id);
  if (holder === undefined)
    throw new AgentError(`${caller}: this session has no background task ${JSON.stringify(id.slice(0, 200))}`);
  const { message } = holder;
  const record = message.type === "tool_result" ? message.task! : message.heldResult!.task!;
  return taskView(record, callOf(callsById(messages), message.id, record), deliveredTasks(messages).has(id));
}

function deliveredTasks(messages: readonly Message[]): Set<string> {
  const delivered = new Set<string>();
  for (const message of messages) {
    const id = (message as { deliversTask?: unknown }).deliversTask;
    if (typeof id === "string") delivered.add(id);
  }
  return delivered;
}

function callsById(messages: readonly Message[]): Map<string, ToolCallMessage> {
  const calls = new Map<string, ToolCallMessage>();
  for (const message of messages) if ("type" in message && message.type === "tool_call") calls.set(message.id, message);
  return calls;
}

function callOf(
  calls: ReadonlyMap<string, ToolCallMessage>,
  callId: string,
  record: TaskRecord,
): { callId: string; name: string; input: JsonObject } {
  const call = calls.get(callId);
  const live = liveTask(record.id);
  if (live !== undefined) return { callId, name: live.name, input: live.input };
  if (call === undefined) return { callId, name: "", input: {} };
  const { run_in_background: _asked, ...input } = call.input;
  return { callId, name: call.name, input };
}
