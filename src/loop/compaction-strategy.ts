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
 * call (and after a `ContextOverflowError`, once, before the call is retried). It changes the
 * session only through `spliceSession`, cutting at turn boundaries, so persistence follows and a
 * tool call is never separated from its result.
 */
export type CompactionStrategy = (session: Session, context: CompactionContext) => void | Promise<void>;
