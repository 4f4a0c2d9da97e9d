import type { BudgetLedger } from "../model/budget.ts";
import type { Session } from "../session.ts";

/** What a strategy knows when the loop asks it to make room. */
export type CompactionContext = {
  /** `before-call`: before each model call; `overflow`: the provider just refused the request as too long. */
  reason: "before-call" | "overflow";
  signal: AbortSignal;
  /**
   * Tells the run that the strategy could not do its work and fell back (the loop turns it into a
   * `compaction-fallback` event). Absent when a strategy is called outside a run.
   */
  report?: (fallback: CompactionFallback) => void;
  /**
   * The run's budget: a strategy that calls a model (a summarizer) passes it as that run's
   * `parentBudget`, so the call counts against the run's budget and does not start once it is used
   * up. Absent when a strategy is called outside a run.
   */
  budget?: BudgetLedger;
};

/** What a strategy that could not do its work did instead, and why. */
export type CompactionFallback = {
  strategy: string;
  /** Why, e.g. "the summarizer called tools". */
  reason: string;
  /** `sliding-window`: the older turns were dropped without a summary; `none`: the session was left as it was. */
  fallback: "sliding-window" | "none";
};

/**
 * A context-management strategy: a plain function that may shorten the session before a model
 * call (and after a `ContextOverflowError`, once, before the call is retried). It may change the
 * session in two ways only, each through a recorded change so persistence follows: remove whole
 * turns, or put a summary in their place, through `spliceSession`, cutting at turn boundaries so a
 * tool call is never separated from its result; or replace a message by a shorter equivalent of
 * the same kind and id (a tool result's output by a placeholder, as `clearToolResults` does) by
 * assigning the new object at its index and reporting a `replace` change (`notifySessionChange`),
 * keeping what it replaced reachable (`keepOutput`, `recorded: true`). Naming itself in the
 * changes' `details` (`{ strategy: "my-strategy" }`) names it in the `compaction` event.
 */
export type CompactionStrategy = (session: Session, context: CompactionContext) => void | Promise<void>;
