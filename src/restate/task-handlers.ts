import { TerminalError, type ObjectSharedContext } from "@restatedev/restate-sdk";
import type { Session } from "../session.ts";
import { backgroundTasks } from "../tools/task-control.ts";
import type { BackgroundTask } from "../tools/task-types.ts";
import { taskKey, type CancelRequest } from "./durable-tasks.ts";

/** The payload of `cancelTask`: the task's id, and why (shown to the model with its outcome). */
export type CancelTaskInput = { id: string; reason?: string };

/**
 * The shared `cancelTask` handler's work. A running task held by a run: its cancel awakeable is
 * resolved; the run sees it while it waits for its tasks (at once when it waits), aborts the
 * handler's signal and records it `cancelled` and tells the model; the task is returned as the
 * session has it then (still `running`). A settled task is returned unchanged. Throws a
 * `TerminalError`: 400 for a malformed payload, 404 for an id the session has no task of, 409 for a
 * running task no run holds (its worker stopped and no run has resumed the session yet: the next
 * `run` applies its `onRestart`).
 */
export async function cancelTaskRequest(
  ctx: ObjectSharedContext,
  session: Session,
  payload: unknown,
): Promise<BackgroundTask> {
  const { id, reason } = parseCancel(payload);
  const task = backgroundTasks(session).find((known) => known.id === id);
  if (task === undefined)
    throw new TerminalError(`this session has no background task ${JSON.stringify(id.slice(0, 200))}`, {
      errorCode: 404,
    });
  if (task.status !== "running") return task;
  const awakeable = await ctx.get<string>(taskKey(id));
  if (awakeable === null)
    throw new TerminalError(
      `background task "${id}" is held by no run (its worker stopped): the session's next run applies its onRestart`,
      { errorCode: 409 },
    );
  ctx.resolveAwakeable<CancelRequest>(awakeable, reason === undefined ? {} : { reason });
  return task;
}

function parseCancel(payload: unknown): CancelTaskInput {
  if (typeof payload !== "object" || payload === null || Array.isArray(payload))
    throw malformed("cancelTask takes { id, reason? }");
  const { id, reason, ...rest } = payload as Record<string, unknown>;
  const unknown = Object.keys(rest)[0];
  if (unknown !== undefined) throw malformed(`cancelTask takes { id, reason? }, not ${JSON.stringify(unknown)}`);
  if (typeof id !== "string" || id === "") throw malformed("cancelTask: id must be a non-empty string");
  if (reason !== undefined && typeof reason !== "string") throw malformed("cancelTask: reason must be a string");
  return reason === undefined ? { id } : { id, reason };
}

function malformed(message: string): TerminalError {
  return new TerminalError(message, { errorCode: 400 });
}
