import { createClearer, type Clearer } from "./clear-tool-results.ts";
import { createTruncation, defaultTruncationBatch, type CompactionTally } from "./compaction.ts";
import type { CompactionStrategy } from "./compaction-strategy.ts";
import type { AgentLoopOptions } from "./loop-options.ts";
import type { Session } from "../session.ts";

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
  const tally = { count: 0, characters: 0 };
  // Truncation options alone ask for truncation alone. The default is the cheapest that keeps every
  // fact reachable (bench/context.ts, bench/cost.ts): truncation and clearing of old tool output,
  // each in batches, so the prompt prefix a provider cached holds for many turns.
  const truncation = { batch: defaultTruncationBatch, ...option };
  const clearing = option === undefined ? createClearer() : undefined;
  return { compaction: { truncate: createTruncation(truncation), clearing, tally }, strategies: undefined };
}

/**
 * The default compaction of a run: truncation, and clearing of old tool output (absent when
 * truncation options are given: they ask for truncation alone), with what each did on the current
 * call. Made only for a run with the default compaction (no strategies, not `false`).
 */
export type DefaultCompaction = {
  readonly truncate: (session: Session, tally: CompactionTally) => number;
  readonly clearing: Clearer | undefined;
  /** What the default compaction did on this call, added up by truncation and clearing themselves. */
  readonly tally: CompactionTally;
};
