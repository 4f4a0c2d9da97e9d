import { editedFrom, truncateDue, type CompactionTally } from "./compaction.ts";
import { clearDue } from "./clear-tool-results.ts";
import { followSessionEdits, markSessionEdits } from "../session.ts";
import type { CompactionFallback, CompactionStrategy } from "./compaction-strategy.ts";
import type { AgentEvent } from "./events.ts";
import { watchCompaction } from "./compaction-report.ts";
import type { RunContext } from "./run-context.ts";

/**
 * Room before a model call: the context strategies when the run has them, else the default
 * compaction (a promise only for strategies).
 */
export function makeRoom(run: RunContext): void | Promise<void> {
  if (run.strategies !== undefined) return applyStrategies(run, run.strategies, "before-call");
  compact(run);
}

/**
 * The default compaction before each call: truncation, then clearing of old tool output; emits
 * `compaction` for each that changed something, from what each says it did (nothing watches the
 * session meanwhile: a call with nothing to do builds nothing). Both read what changed in the
 * session since the last call from one edit record, marked once both have read it (their own
 * replacements included).
 */
export function compact(run: RunContext): void {
  const { compaction, session } = run;
  if (compaction === undefined) return;
  const edits = (compaction.edits ??= followSessionEdits(session));
  const { tally, clearing } = compaction;
  if (truncateDue(compaction.truncation, session, editedFrom(edits), tally) > 0)
    emitCompaction(run, tally, "truncation");
  if (clearing !== undefined && clearDue(clearing, session, "before-call", edits, tally) > 0)
    emitCompaction(run, tally, "clear-tool-results");
  if (edits.count > 0) markSessionEdits(edits);
}

// The tally is zero between calls: only a compaction that did something touches it.
function emitCompaction(run: RunContext, tally: CompactionTally, strategy: string): void {
  const event = compactionEvent(tally, strategy);
  tally.count = 0;
  tally.characters = 0;
  run.emit(event);
}

function compactionEvent({ count, characters }: CompactionTally, strategy: string): AgentEvent {
  return { type: "compaction", count, strategy, tokensFreed: Math.max(0, Math.round(characters / 4)) };
}

/**
 * The context strategies: before each call, and once more after an overflow. Emits `compaction`
 * when messages were removed.
 */
export async function applyStrategies(
  run: RunContext,
  strategies: readonly CompactionStrategy[],
  reason: "before-call" | "overflow",
): Promise<void> {
  const { session } = run;
  const report = (fallback: CompactionFallback): void => run.emit({ type: "compaction-fallback", ...fallback });
  for (const strategy of strategies) {
    const watch = watchCompaction(session);
    const before = session.messages.length;
    try {
      await strategy(session, { reason, signal: run.signal, report, budget: run.ledger });
    } finally {
      // A strategy that removed messages without a recorded change is still reported, by count alone.
      const removed = before - session.messages.length;
      const done =
        watch.finish("custom") ?? (removed > 0 ? { count: removed, strategy: "custom", tokensFreed: 0 } : undefined);
      if (done !== undefined) run.emit({ type: "compaction", ...done });
    }
  }
}
