import { isTimeoutError } from "../errors.ts";
import type { JsonObject, Session } from "../session.ts";
import { backgroundTasks, cancelTask, waitForTask } from "./task-control.ts";
import { taskDelivery } from "./task-delivery.ts";
import { liveTask, markDelivered, type BackgroundTask } from "./task-registry.ts";
import type { Tool } from "./tool.ts";
import { notForPrograms } from "./code-mode/code-mode-option.ts";

/**
 * Tools the model uses on its background tasks: `check_task` (`{ id? }`: status and elapsed time
 * of one task or all, never the output), `wait_task` (`{ id, timeoutSeconds? }`, 1-600, default 60:
 * a settled task's outcome becomes its result, which carries `deliversTask`, so no message gives
 * it again) and `cancel_task` (`{ id, reason? }`). An unknown id is an error result.
 */
export function taskTools(): Tool[] {
  return [checkTaskTool, waitTaskTool, cancelTaskTool];
}

/** Whether `definition` is `taskTools()`'s `wait_task` (a durable run refuses it: its wait would hold a journaled step). */
export function isWaitTaskTool(definition: unknown): boolean {
  return definition === waitTaskTool;
}

/**
 * Whether `definition` is `taskTools()`'s `cancel_task`: a durable run asks for its cancel again
 * after the call's step, where a replay, which does not run the handler, passes too.
 */
export function isCancelTaskTool(definition: unknown): boolean {
  return definition === cancelTaskTool;
}

const checkTaskTool: Tool<{ id?: string }> = {
  name: "check_task",
  description:
    "Shows the status and elapsed time of a background task (by id), or of every background task of this conversation. Never its output: that comes as a message, or from wait_task.",
  input_schema: {
    type: "object",
    properties: { id: { type: "string", description: "The task id; omit it for every task." } },
    additionalProperties: false,
  },
  handler: (input, context) => {
    const tasks = backgroundTasks(context.session);
    if (input.id === undefined) return tasks.map(statusOf);
    const task = tasks.find((known) => known.id === input.id);
    if (task === undefined) throw unknownTask(input.id);
    return statusOf(task);
  },
};

const waitTaskTool: Tool<{ id: string; timeoutSeconds?: number }> = {
  name: "wait_task",
  description:
    "Waits until a background task settles (at most timeoutSeconds, default 60) and gives its outcome as this call's result.",
  input_schema: {
    type: "object",
    properties: {
      id: { type: "string", description: "The task id." },
      timeoutSeconds: {
        type: "number",
        minimum: 1,
        maximum: 600,
        description: "How long to wait at most (default 60).",
      },
    },
    required: ["id"],
    additionalProperties: false,
  },
  handler: async (input, context) => {
    const session = context.session;
    known(session, input.id);
    // Held before the wait: another wait of the same response may take the outcome meanwhile.
    const held = liveTask(input.id);
    const timeoutSeconds = input.timeoutSeconds ?? 60;
    let task: BackgroundTask;
    try {
      task = await waitForTask(session, input.id, { timeoutMs: timeoutSeconds * 1000, signal: context.signal });
    } catch (error) {
      if (!isTimeoutError(error)) throw error;
      return { task: input.id, status: "running", note: `Still running after ${timeoutSeconds} s.` };
    }
    if (task.delivered || held?.delivered === true)
      return { task: task.id, status: task.status, note: "Its outcome was given already." };
    // The outcome is this result's: no message gives it again.
    const live = liveTask(task.id) ?? held;
    if (live !== undefined) markDelivered(live);
    return taskDelivery(
      {
        id: task.id,
        status: task.status,
        onRestart: task.onRestart,
        attempt: task.attempt,
        startedAt: task.startedAt,
        ...(task.output === undefined ? {} : { output: task.output }),
        ...(task.isError === true ? { isError: true } : {}),
        ...(live?.record.content === undefined ? {} : { content: live.record.content }),
      },
      task.name,
    );
  },
};

// Its outcome is delivered as the call's own result: a program's call has none in the session.
notForPrograms(waitTaskTool, "its result delivers a background task's outcome, which must be a message of the session");

const cancelTaskTool: Tool<{ id: string; reason?: string }> = {
  name: "cancel_task",
  description: "Cancels a running background task. Its outcome then comes as a message saying it was cancelled.",
  input_schema: {
    type: "object",
    properties: {
      id: { type: "string", description: "The task id." },
      reason: { type: "string", description: "Why, for the record." },
    },
    required: ["id"],
    additionalProperties: false,
  },
  handler: (input, context) => {
    known(context.session, input.id);
    return statusOf(cancelTask(context.session, input.id, input.reason));
  },
};

function statusOf(task: BackgroundTask): JsonObject {
  const end = task.settledAt === undefined ? Date.now() : Date.parse(task.settledAt);
  const elapsedSeconds = Math.max(0, Math.round((end - Date.parse(task.startedAt)) / 100) / 10);
  return { id: task.id, name: task.name, status: task.status, elapsedSeconds };
}

function known(session: Session, id: string): void {
  if (!backgroundTasks(session).some((task) => task.id === id) && liveTask(id)?.session !== session)
    throw unknownTask(id);
}

function unknownTask(id: string): Error {
  return new Error(`no background task ${JSON.stringify(id.slice(0, 200))} in this conversation`);
}
