import { newScan, type ClearScan } from "./clear-tool-results.ts";
import { createTruncation, defaultTruncationBatch, type CompactionTally, type Truncation } from "./compaction.ts";
import type { CompactionStrategy } from "./compaction-strategy.ts";
import type { AgentLoopOptions } from "./loop-options.ts";
import { unfollowSessionEdits, type Session, type SessionEdits } from "../session.ts";

/**
 * A run's `compaction` option, read once: the default compaction (truncation and clearing, made
 * only then), context strategies, or neither (`false`).
 */
export function readCompaction(option: AgentLoopOptions["compaction"]): {
  compaction: DefaultCompaction | undefined;
  strategies: readonly CompactionStrategy[] | undefined;
} {
  if (option === false) return { compaction: undefined, strategies: undefined };
  if (typeof option === "function") return { compaction: undefined, strategies: [option] };
  if (Array.isArray(option)) return { compaction: undefined, strategies: option };
  // Truncation options alone ask for truncation alone. The default is the cheapest that keeps every
  // fact reachable (bench/context.ts, bench/cost.ts): truncation and clearing of old tool output,
  // each in batches, so the prompt prefix a provider cached holds for many turns.
  const truncation = createTruncation({ batch: defaultTruncationBatch, ...option });
  const clearing = option === undefined ? newScan({}) : undefined;
  return {
    compaction: { truncation, clearing, tally: { count: 0, characters: 0 }, edits: undefined },
    strategies: undefined,
  };
}

/**
 * The default compaction of a run: what truncation and clearing of old tool output (absent when
 * truncation options are given: they ask for truncation alone) know of the session, the session's
 * edits both follow (from the run's first call), and what each did on the current call. Made only
 * for a run with the default compaction (no strategies, not `false`).
 */
export type DefaultCompaction = {
  readonly truncation: Truncation;
  readonly clearing: ClearScan | undefined;
  /** What the default compaction did on this call, added up by truncation and clearing themselves. */
  readonly tally: CompactionTally;
  /** The session's edits since the last call, followed from the first; `undefined` before it. */
  edits: SessionEdits | undefined;
};

/** Stops following the run's session's edits (the run ended). */
export function releaseCompaction(compaction: DefaultCompaction | undefined, session: Session): void {
  if (compaction?.edits === undefined) return;
  unfollowSessionEdits(session, compaction.edits);
  compaction.edits = undefined;
}
