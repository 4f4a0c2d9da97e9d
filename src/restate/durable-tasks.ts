import { RestatePromise, type ObjectContext } from "@restatedev/restate-sdk";
import { AgentError } from "../errors.ts";
import type { Session } from "../session.ts";
import { setTaskJournal, type TaskJournal } from "../tools/task-journal.ts";
import { cancelLiveTask, markDelivered, writeRecord } from "../tools/task-registry.ts";
import type { LiveTask, TaskOutcome } from "../tools/task-types.ts";
import type { ToolOutcome } from "../tools/tool-outcome.ts";
import type { ReplayClock } from "./replay-clock.ts";
import type { StepScheduler } from "./step-scheduler.ts";
import type { ToolStep } from "./tool-step.ts";

/** The state key that holds the awakeable cancelling task `id` while a run holds it (for `cancelTask`). */
export const taskKey = (id: string): string => `task:${id}`;

/** What a task's cancel awakeable is resolved with (the shared `cancelTask` handler). */
export type CancelRequest = { reason?: string };

/**
 * The background tasks of one invocation of `run`, kept through its journal (see `TaskJournal`):
 *
 * - a task's id comes from Restate's deterministic random, its times from the replay clock;
 * - each attempt of its handler journals its start (`task <id> start <attempt>`); the handler then
 *   runs outside any step, beside the run (a step in flight would hold the run's later steps);
 * - an outcome enters the session only at a safe point: a journaled step `tasks` lists the tasks
 *   whose handler ended (or were cancelled) since the last one, each ended one's outcome is
 *   journaled there (`task <id> outcome <attempt>`), and exactly those settle, in that order, on
 *   the first run and on every replay alike; the delivery follows at that point;
 * - a replay that finds a start journaled does not run the handler again: the journal has its
 *   outcome, or the worker running it stopped, and the task follows its `onRestart` (`rerun`:
 *   attempt + 1; `lost`);
 * - each task has an awakeable (its id in the state under `task:<id>` while it runs): the shared
 *   `cancelTask` handler resolves it; the run sees it while it waits for its tasks (or at its next
 *   wait), aborts the handler's signal and records the task `cancelled` at the safe point.
 */
export type DurableTasks = {
  /**
   * The journaled outcome of attempt `task.attempt` of a task: `ran` is the handler's outcome
   * when this worker started it, `undefined` when the start was replayed. Resolves once a safe
   * point has journaled it (never, for an attempt the worker running it did not finish).
   */
  readonly outcome: (task: { id: string; attempt: number }, ran: Promise<ToolStep | undefined>) => Promise<ToolStep>;
  /** Writes (and clears) the tasks' cancel awakeables in the state: at points every replay reaches alike. */
  readonly writeIndex: () => void;
  /** The invocation ends: its state keys go, and a task still running is let go (a later run finds it orphaned). */
  readonly close: () => void;
};

type Held = {
  readonly task: LiveTask;
  readonly attempt: (attempt: number) => Promise<ToolOutcome>;
  readonly cancelled: RestatePromise<{ id: string; request: CancelRequest | null }>;
  readonly awakeable: string;
  /** The running attempt's outcome, as the loop makes it of the journaled step. */
  body: Promise<ToolOutcome> | undefined;
  bodyAttempt: number;
  /** The attempt's handler outcome when this worker ran it; `undefined` when its start was replayed. */
  raw: ToolStep | undefined;
  journaled: ((step: ToolStep) => void) | undefined;
  /** What this worker saw first since the attempt began: its handler ended, or a cancel was asked. */
  ready: { cancel: false } | { cancel: true; reason: string | undefined } | undefined;
  open: ((outcome: ToolOutcome | TaskOutcome) => void) | undefined;
  indexed: boolean;
};

/** One entry of a `tasks` step: a task to settle there (its attempt's outcome, a restart, or cancelled). */
type Listed = { id: string; attempt: number; restarted?: true; cancel?: true; reason?: string };

/** What the functions below share: one invocation's tasks. */
type Tasks = {
  readonly ctx: ObjectContext;
  readonly scheduler: StepScheduler;
  readonly clock: ReplayClock;
  readonly held: Map<string, Held>;
  readonly settledWaits: Map<string, () => void>;
  wakers: (() => void)[];
};

/** Sets the task journal of `session` for the runs of this invocation; see `DurableTasks`. */
export function durableTasks(
  ctx: ObjectContext,
  session: Session,
  run: { scheduler: StepScheduler; clock: ReplayClock },
): DurableTasks {
  const tasks: Tasks = { ctx, ...run, held: new Map(), settledWaits: new Map(), wakers: [] };
  const journal: TaskJournal = {
    newId: () => `task_${ctx.rand.uuidv4()}`,
    now: run.clock.now,
    settle: (task, attempt) => hold(tasks, task, attempt),
    settled: (task) => {
      const resolve = tasks.settledWaits.get(task.id);
      tasks.settledWaits.delete(task.id);
      resolve?.();
    },
    requestCancel: (task, reason) => requestCancel(tasks, task, reason),
    settlePoint: () => settlePoint(tasks),
    progress: () => progress(tasks),
  };
  setTaskJournal(session, journal);
  return {
    outcome: (task, ran) => outcome(tasks, task, ran),
    writeIndex: () => writeIndex(tasks),
    close: () => close(tasks),
  };
}

function hold(
  tasks: Tasks,
  task: LiveTask,
  attempt: (attempt: number) => Promise<ToolOutcome>,
): Promise<ToolOutcome | TaskOutcome> {
  const { id: awakeable, promise } = tasks.ctx.awakeable<CancelRequest | null>();
  const entry: Held = {
    task,
    attempt,
    awakeable,
    cancelled: promise.map((request) => ({ id: task.id, request: request ?? null })),
    body: undefined,
    bodyAttempt: task.record.attempt,
    raw: undefined,
    journaled: undefined,
    ready: undefined,
    open: undefined,
    indexed: false,
  };
  tasks.held.set(task.id, entry);
  const settled = new Promise<ToolOutcome | TaskOutcome>((resolve) => (entry.open = resolve));
  begin(entry, task.record.attempt);
  return settled;
}

function wake(tasks: Tasks): void {
  const waiting = tasks.wakers;
  tasks.wakers = [];
  for (const resume of waiting) resume();
}

function pending(tasks: Tasks): Held[] {
  return [...tasks.held.values()].filter((entry) => entry.open !== undefined && entry.task.record.status === "running");
}

function begin(entry: Held, attempt: number): void {
  entry.bodyAttempt = attempt;
  entry.ready = undefined;
  entry.raw = undefined;
  entry.journaled = undefined;
  // The attempt's start is journaled here, where every replay starts it alike.
  entry.body = entry.attempt(attempt);
}

function outcome(
  tasks: Tasks,
  task: { id: string; attempt: number },
  ran: Promise<ToolStep | undefined>,
): Promise<ToolStep> {
  const entry = tasks.held.get(task.id);
  if (entry === undefined) return ran.then((step) => step ?? { restarted: true, at: 0 });
  void ran.then((step) => {
    if (entry.bodyAttempt !== task.attempt) return;
    entry.raw = step;
    if (entry.ready !== undefined) return;
    entry.ready = { cancel: false };
    wake(tasks);
  });
  return new Promise((resolve) => (entry.journaled = resolve));
}

function requestCancel(tasks: Tasks, task: LiveTask, reason: string | undefined): void {
  const entry = tasks.held.get(task.id);
  if (entry === undefined || entry.ready?.cancel === true || entry.open === undefined) return;
  // Its handler ended first: the outcome stands.
  if (entry.ready !== undefined && entry.raw !== undefined) return;
  entry.ready = { cancel: true, reason };
  const text = reason === undefined ? "cancelled" : `cancelled: ${reason}`;
  task.controller.abort(new AgentError(`background task ${task.id} ${text}`));
  wake(tasks);
}

function writeIndex(tasks: Tasks): void {
  for (const entry of tasks.held.values()) {
    const running = entry.task.record.status === "running";
    if (running && !entry.indexed) tasks.ctx.set(taskKey(entry.task.id), entry.awakeable);
    else if (!running && entry.indexed) tasks.ctx.clear(taskKey(entry.task.id));
    entry.indexed = running;
  }
}

async function settlePoint(tasks: Tasks): Promise<void> {
  writeIndex(tasks);
  const open = pending(tasks);
  if (open.length === 0) return;
  // What this worker has seen is journaled; a replay settles what the journal lists.
  const listed = await tasks.scheduler.await(tasks.ctx.run<Listed[]>("tasks", () => open.flatMap(listing)));
  for (const entry of listed) await settleListed(tasks, entry);
  writeIndex(tasks);
}

async function settleListed(tasks: Tasks, listed: Listed): Promise<void> {
  const entry = tasks.held.get(listed.id);
  if (entry?.open === undefined || entry.task.record.status !== "running") return;
  if (listed.cancel === true) {
    entry.open = undefined;
    cancelLiveTask(entry.task, listed.reason);
    return;
  }
  if (listed.restarted === true) return restart(tasks, entry);
  const raw = entry.raw;
  const step = await tasks.scheduler.await(
    tasks.ctx.run<ToolStep>(`task ${entry.task.id} outcome ${listed.attempt}`, () => raw ?? restarted()),
  );
  // Listed as ended by a worker that stopped before its outcome was journaled.
  if ("restarted" in step) return restart(tasks, entry);
  entry.journaled?.(step);
  await openGate(tasks, entry, await entry.body!);
}

function restarted(): ToolStep {
  return { restarted: true, at: Date.now() };
}

async function restart(tasks: Tasks, entry: Held): Promise<void> {
  const { task } = entry;
  if (task.record.onRestart === "rerun") {
    task.record = { ...task.record, attempt: task.record.attempt + 1, startedAt: tasks.clock.now() };
    writeRecord(task);
    task.host.emit?.({ type: "task-resume", id: task.id, action: "rerun" });
    begin(entry, task.record.attempt);
    return;
  }
  task.host.emit?.({ type: "task-resume", id: task.id, action: "lost" });
  await openGate(tasks, entry, { status: "lost", reason: "the worker running it stopped before it settled" });
}

async function openGate(tasks: Tasks, entry: Held, settledWith: ToolOutcome | TaskOutcome): Promise<void> {
  const settled = new Promise<void>((resolve) => tasks.settledWaits.set(entry.task.id, resolve));
  const open = entry.open!;
  entry.open = undefined;
  open(settledWith);
  // Its outcome goes through the run's checks (journaled guardrails) before the next one does.
  await settled;
}

// The wait is a journaled step that ends when a task has something to settle (at once when one
// has: every wait is a step, so a replay, which sees tasks ready sooner, waits alike), raced with
// the tasks' cancel awakeables: nothing stays in flight after it (a step in flight holds the next).
async function progress(tasks: Tasks): Promise<void> {
  const open = pending(tasks);
  const ended = tasks.ctx.run<null>("tasks wait", async () => {
    if (!pending(tasks).some((entry) => entry.ready !== undefined))
      await new Promise<void>((resolve) => tasks.wakers.push(resolve));
    return null;
  });
  const won = await tasks.scheduler.await(
    RestatePromise.race([ended.map(() => undefined), ...open.map((entry) => entry.cancelled)]),
  );
  if (won !== undefined) requestCancel(tasks, tasks.held.get(won.id)!.task, reasonOf(won.request));
}

function close(tasks: Tasks): void {
  for (const entry of tasks.held.values()) {
    if (entry.indexed) tasks.ctx.clear(taskKey(entry.task.id));
    entry.indexed = false;
    if (entry.task.record.status !== "running") continue;
    // The invocation is over: this worker no longer holds the task.
    entry.open = undefined;
    entry.task.controller.abort(new AgentError(`background task ${entry.task.id}: its run ended`));
    markDelivered(entry.task);
  }
  wake(tasks);
}

// A ready task as the `tasks` step lists it: cancelled, ended here, or started by a worker that stopped.
function listing(entry: Held): Listed[] {
  const { ready } = entry;
  if (ready === undefined) return [];
  const base = { id: entry.task.id, attempt: entry.bodyAttempt };
  if (ready.cancel) return [{ ...base, cancel: true, ...(ready.reason === undefined ? {} : { reason: ready.reason }) }];
  return entry.raw === undefined ? [{ ...base, restarted: true }] : [base];
}

function reasonOf(request: CancelRequest | null): string | undefined {
  return typeof request?.reason === "string" ? request.reason : undefined;
}
