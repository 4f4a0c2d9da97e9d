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
   * The journaled outcome of attempt `task.attempt` of a task: `started` resolves once its start
   * step did, with the handler's outcome on its way (`running`) when this worker started it,
   * `undefined` when the start was replayed. Resolves once a safe point has journaled it (never,
   * for an attempt the worker running it did not finish).
   */
  readonly outcome: (
    task: { id: string; attempt: number },
    started: Promise<{ running: Promise<ToolStep> } | undefined>,
  ) => Promise<ToolStep>;
  /** Writes (and clears) the tasks' cancel awakeables in the state: at points every replay reaches alike. */
  readonly writeIndex: () => void;
  /**
   * The run waits for `promise` (an approval's decision) outside the loop: meanwhile each task
   * whose handler ends (or that is cancelled) is settled as at a safe point, its record written
   * (`written` is called after each), so an outcome that came during the wait is kept however the
   * wait ends; its delivery comes at the run's next safe point.
   */
  readonly whileWaiting: <T>(promise: RestatePromise<T>, written: () => void) => Promise<T>;
  /**
   * The run failed: the tasks that ended (or were cancelled) before are settled, their records
   * written, for the session's next run to deliver; the others are left to `close`.
   */
  readonly settleEnded: () => Promise<void>;
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
  /** Stops racing its cancel awakeable with the invocation's steps. */
  unwatch: () => void;
  /** The key of its running attempt in `attempts`, while this invocation attempt started or took it over. */
  attemptKey: string | undefined;
};

/**
 * A task handler's attempt this process runs, by invocation, task and attempt: Restate may end the
 * invocation's attempt while it runs (a model step retried after a transient failure, a
 * suspension), and a later attempt of the same invocation, replayed in this process, takes it over
 * (its outcome, its signal) instead of applying `onRestart` to work still going on here.
 */
type RunningAttempt = {
  readonly outcome: Promise<ToolStep>;
  readonly abort: (reason: unknown) => void;
  timer: ReturnType<typeof setTimeout> | undefined;
};

const attempts = new Map<string, RunningAttempt>();

/**
 * How long the handler of an invocation attempt Restate ended goes on, waiting for a later attempt
 * to take it over (on another worker, none will): then its signal aborts and it is forgotten.
 */
const orphanGraceMs = 10 * 60 * 1000;

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
  // The attempt ended without `close` (Restate retries it, or it suspended): the handlers it runs
  // go on for a while, for a later attempt of the invocation in this process to take over.
  ctx.request().attemptCompletedSignal.addEventListener("abort", () => orphan(tasks), { once: true });
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
    outcome: (task, started) => outcome(tasks, task, started),
    writeIndex: () => writeIndex(tasks),
    whileWaiting: (promise, written) => whileWaiting(tasks, promise, written),
    settleEnded: () => settlePoint(tasks, false),
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
    unwatch: () => undefined,
    attemptKey: undefined,
  };
  // A cancel is seen whenever the run awaits a step (a model call too), not only while it waits
  // for its tasks: the handler's signal aborts then, the record follows at the next safe point.
  entry.unwatch = tasks.scheduler.watch(entry.cancelled, (won) =>
    requestCancel(tasks, entry.task, reasonOf(won.request)),
  );
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
  started: Promise<{ running: Promise<ToolStep> } | undefined>,
): Promise<ToolStep> {
  const entry = tasks.held.get(task.id);
  if (entry === undefined) return started.then(async (here) => (await here?.running) ?? { restarted: true, at: 0 });
  const key = `${tasks.ctx.request().id}\u0000${task.id}\u0000${task.attempt}`;
  const ran = started.then((here) => (here === undefined ? takeOver(entry, key) : keep(entry, key, here.running)));
  void ran.then((step) => {
    if (entry.bodyAttempt !== task.attempt) return;
    entry.raw = step;
    if (entry.ready !== undefined) return;
    entry.ready = { cancel: false };
    wake(tasks);
  });
  return new Promise((resolve) => (entry.journaled = resolve));
}

function keep(entry: Held, key: string, running: Promise<ToolStep>): Promise<ToolStep> {
  const { controller } = entry.task;
  attempts.set(key, { outcome: running, abort: (reason) => controller.abort(reason), timer: undefined });
  entry.attemptKey = key;
  return running;
}

// A replayed start: an earlier attempt of this invocation may still run it here.
function takeOver(entry: Held, key: string): Promise<ToolStep> | undefined {
  const running = attempts.get(key);
  if (running === undefined) return undefined;
  clearTimeout(running.timer);
  running.timer = undefined;
  entry.attemptKey = key;
  const { signal } = entry.task.controller;
  signal.addEventListener("abort", () => running.abort(signal.reason), { once: true });
  return running.outcome;
}

// Its outcome is journaled, or the run let it go: no later attempt takes it over.
function release(entry: Held): void {
  if (entry.attemptKey === undefined) return;
  const running = attempts.get(entry.attemptKey);
  clearTimeout(running?.timer);
  attempts.delete(entry.attemptKey);
  entry.attemptKey = undefined;
}

function orphan(tasks: Tasks): void {
  for (const entry of tasks.held.values()) {
    const key = entry.attemptKey;
    const running = key === undefined ? undefined : attempts.get(key);
    if (key === undefined || running === undefined) continue;
    clearTimeout(running.timer);
    running.timer = setTimeout(() => {
      if (attempts.get(key) !== running) return;
      attempts.delete(key);
      running.abort(new AgentError(`background task ${entry.task.id}: its invocation's attempt ended`));
    }, orphanGraceMs);
    running.timer.unref?.();
  }
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

// `restarts: false`: a task whose worker stopped is left as it is (the run is ending; the next one applies its onRestart).
async function settlePoint(tasks: Tasks, restarts = true): Promise<void> {
  writeIndex(tasks);
  const open = pending(tasks);
  if (open.length === 0) return;
  // What this worker has seen is journaled; a replay settles what the journal lists.
  const listed = await tasks.scheduler.await(
    tasks.ctx.run<Listed[]>("tasks", () =>
      open.flatMap(listing).filter((entry) => restarts || entry.restarted !== true),
    ),
  );
  for (const entry of listed) await settleListed(tasks, entry);
  writeIndex(tasks);
}

async function settleListed(tasks: Tasks, listed: Listed): Promise<void> {
  const entry = tasks.held.get(listed.id);
  if (entry?.open === undefined || entry.task.record.status !== "running") return;
  if (listed.cancel === true) {
    entry.open = undefined;
    entry.unwatch();
    release(entry);
    cancelLiveTask(entry.task, listed.reason);
    return;
  }
  if (listed.restarted === true) {
    // An earlier attempt of the invocation, still running here, is superseded by the journal's restart.
    const superseded = entry.attemptKey === undefined ? undefined : attempts.get(entry.attemptKey);
    release(entry);
    superseded?.abort(new AgentError(`background task ${entry.task.id}: restarted by its run`));
    return restart(tasks, entry);
  }
  const raw = entry.raw;
  const step = await tasks.scheduler.await(
    tasks.ctx.run<ToolStep>(`task ${entry.task.id} outcome ${listed.attempt}`, () => raw ?? restarted()),
  );
  release(entry);
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
  entry.unwatch();
  open(settledWith);
  // Its outcome goes through the run's checks (journaled guardrails) before the next one does.
  await settled;
}

// The wait is a journaled step that ends when a task has something to settle (at once when one
// has: every wait is a step, so a replay, which sees tasks ready sooner, waits alike). A cancel
// asked meanwhile (the tasks' awakeables are watched by the scheduler) ends it too.
async function progress(tasks: Tasks): Promise<void> {
  await tasks.scheduler.await(waitStep(tasks));
}

// `until.stopped`: the wait is not wanted any more (its closure may start after that).
function waitStep(tasks: Tasks, until: { stopped: boolean } = { stopped: false }): RestatePromise<null> {
  return tasks.ctx.run<null>("tasks wait", async () => {
    if (!until.stopped && !pending(tasks).some((entry) => entry.ready !== undefined))
      await new Promise<void>((resolve) => tasks.wakers.push(resolve));
    return null;
  });
}

// The approval wait with tasks running: raced with a tasks wait, which settles what ended and goes
// on; once `promise` wins, the wait step is ended at once (no step stays in flight: it would hold
// the run's next ones) and its value is the answer. A replay races the same journaled completions.
async function whileWaiting<T>(tasks: Tasks, promise: RestatePromise<T>, written: () => void): Promise<T> {
  const decided = promise.map((value, failure) => {
    if (failure !== undefined) throw failure;
    return { value: value as T };
  });
  for (;;) {
    if (pending(tasks).length === 0) return (await tasks.scheduler.await(decided)).value;
    const until = { stopped: false };
    const ended = waitStep(tasks, until);
    const won = await tasks.scheduler.await(RestatePromise.race([decided, ended.map(() => undefined)]));
    if (won !== undefined) {
      until.stopped = true;
      wake(tasks);
      await tasks.scheduler.await(ended);
      return won.value;
    }
    await settlePoint(tasks);
    written();
  }
}

function close(tasks: Tasks): void {
  for (const entry of tasks.held.values()) {
    if (entry.indexed) tasks.ctx.clear(taskKey(entry.task.id));
    entry.indexed = false;
    if (entry.task.record.status !== "running") continue;
    // The invocation is over: this worker no longer holds the task.
    entry.open = undefined;
    entry.unwatch();
    release(entry);
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
