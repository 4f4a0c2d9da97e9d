import { resumeSessionTasks } from "../tools/task-control.ts";
import { deliveryMessage } from "../tools/task-delivery.ts";
import { cancelLiveTask, liveTasksOf, markDelivered, onTaskSettledIn, type LiveTask } from "../tools/task-registry.ts";
import { taskJournalOf, type TaskJournal } from "../tools/task-journal.ts";
import type { RunTasks } from "./run-tasks-setup.ts";
import { callModelNext, type NextStep } from "./next-step.ts";
import type { RunContext } from "./run-context.ts";

/**
 * Before the run's first model call: tasks of the log no process holds get their `onRestart`
 * (rerun, or recorded lost), settled undelivered ones are held for delivery, and the ones this
 * process holds for the session are taken over by this run.
 */
export function resumeRunTasks(run: RunContext, tasks: RunTasks): void {
  // A rerun goes through the gate as the run's calls do, with the tasks' own guardrail verdicts.
  const { setup } = run.executor;
  const beforeToolCall = tasks.host.check?.beforeToolCall;
  const { hooks: _calls, ...rest } = setup;
  resumeSessionTasks(
    run.session,
    { ...rest, hooks: beforeToolCall === undefined ? undefined : { beforeToolCall } },
    tasks.host,
  );
}

/**
 * At a safe point (where steering enters): each settled task of the session whose outcome was not
 * given yet enters as a user message with `deliversTask`, at most once per task. A durable run
 * first settles what its journal says has settled (a promise then).
 */
export function deliverTasks(run: RunContext, tasks: RunTasks): void | Promise<void> {
  const journal = taskJournalOf(run.session);
  if (journal !== undefined) return journal.settlePoint().then(() => deliverSettled(run, tasks));
  deliverSettled(run, tasks);
}

function deliverSettled(run: RunContext, tasks: RunTasks): void {
  for (const task of liveTasksOf(run.session)) {
    if (!deliverable(task)) continue;
    markDelivered(task);
    run.add(deliveryMessage(run.session, task, tasks.maxChars));
  }
}

function deliverable(task: LiveTask): boolean {
  return task.record.status !== "running" && task.written && !task.delivered;
}

/**
 * The model answered and nothing else is queued: the run ends, unless tasks of the session have
 * outcomes to deliver (then the model is called again), or run: with `whenIdle: "wait"` the run
 * waits for the next one to settle, with `"end"` it ends `done` with their ids as `runningTasks`.
 */
export function idleStep(run: RunContext, tasks: RunTasks): NextStep | Promise<NextStep> {
  const held = liveTasksOf(run.session);
  if (held.some(deliverable)) return callModelNext;
  const running = held.filter((task) => task.record.status === "running").map((task) => task.id);
  if (running.length === 0) return done;
  if (tasks.whenIdle === "end") return { type: "end", end: { outcome: "done", runningTasks: running } };
  const journal = taskJournalOf(run.session);
  return journal === undefined ? waitForSettled(run) : waitForJournal(run, tasks, journal);
}

const done: NextStep = { type: "end", end: { outcome: "done" } };

// An abort ends the wait; the call-model step then ends the run as aborted.
async function waitForSettled(run: RunContext): Promise<NextStep> {
  let unsubscribe = (): void => undefined;
  const settled = new Promise<void>((resolve) => {
    unsubscribe = onTaskSettledIn(run.session, resolve);
  });
  try {
    await run.abortRace.race(settled);
  } catch {
    // Aborted: the next step sees it.
  } finally {
    unsubscribe();
  }
  return callModelNext;
}

// A durable run settles only at its journal's safe points: the wait ends when one settled
// something (a rerun settles nothing: the wait goes on).
async function waitForJournal(run: RunContext, tasks: RunTasks, journal: TaskJournal): Promise<NextStep> {
  try {
    await run.abortRace.race(journal.progress());
  } catch {
    return callModelNext;
  }
  await journal.settlePoint();
  return idleStep(run, tasks);
}

/**
 * The run is over: an aborted run cancels its session's running tasks (recorded `cancelled`);
 * the tasks that go on report no more events to it.
 */
export function closeRunTasks(run: RunContext, tasks: RunTasks): void {
  if (run.signal.aborted) for (const task of liveTasksOf(run.session)) cancelLiveTask(task, "the run was aborted");
  tasks.host.emit = undefined;
}
