import type { Session } from "../session.ts";
import type { LiveTask, TaskOutcome } from "./task-types.ts";
import type { ToolOutcome } from "./tool-outcome.ts";

/**
 * How a durable run (Restate) keeps the background tasks of its session, so that a replay of its
 * journal starts, settles and delivers each one at the same point: ids and times that replay the
 * same, handlers run as journaled steps, and outcomes that enter the session only where the journal
 * says (its safe points), not whenever a handler happens to finish.
 */
export type TaskJournal = {
  /** A new task's id (from the journal's deterministic random). */
  readonly newId: () => string;
  /** The time a record is stamped with (ISO-8601 UTC), the same on every replay. */
  readonly now: () => string;
  /**
   * Runs task `task`'s handler (`attempt(n)` runs attempt `n`) and resolves with its outcome once
   * the journal settles it: a handler's outcome, or a `TaskOutcome` (`lost`) when the process
   * that ran it stopped and its `onRestart` is `"lost"`; with `"rerun"` the handler runs again
   * (`attempt` + 1) first. Never rejects.
   */
  readonly settle: (
    task: LiveTask,
    attempt: (attempt: number) => Promise<ToolOutcome>,
  ) => Promise<ToolOutcome | TaskOutcome>;
  /** Task `task` is settled (its record written where its result is in the session): called once `settle`'s outcome went through the run's checks. */
  readonly settled: (task: LiveTask) => void;
  /** Asks for task `task` to be cancelled: its handler's signal aborts now, its record says so at the next safe point. */
  readonly requestCancel: (task: LiveTask, reason: string | undefined) => void;
  /** The safe point: settles what the journal says has settled since the last one (a journaled step while tasks run). */
  readonly settlePoint: () => Promise<void>;
  /** Resolves once a running task has something to settle (its handler ended, or a cancel was asked). */
  readonly progress: () => Promise<void>;
};

const journals = new WeakMap<Session, TaskJournal>();

/** Makes the runs on `session` keep their tasks through `journal` (a durable run does, before it runs). */
export function setTaskJournal(session: Session, journal: TaskJournal): void {
  journals.set(session, journal);
}

/** The journal the runs on `session` keep their tasks through, if a durable run set one. */
export function taskJournalOf(session: Session): TaskJournal | undefined {
  return journals.get(session);
}
