import type { CompactionFallback, CompactionStrategy } from "./compaction-strategy.ts";
import { watchCompaction } from "./compaction-report.ts";
import type { RunContext } from "./run-context.ts";

/**
 * The default compaction before each call: truncation, then clearing of old tool output; emits
 * `compaction` for each that changed something.
 */
export function compact(run: RunContext): void {
  const { compact, clearing, session } = run;
  if (compact !== undefined) {
    const watch = watchCompaction(session);
    compact(session);
    const report = watch.finish("truncation");
    if (report !== undefined) run.emit({ type: "compaction", ...report });
  }
  if (clearing !== undefined) {
    const watch = watchCompaction(session);
    clearing(session, "before-call");
    const report = watch.finish("clear-tool-results");
    if (report !== undefined) run.emit({ type: "compaction", ...report });
  }
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
      await strategy(session, { reason, signal: run.signal, report });
    } finally {
      // A strategy that removed messages without a recorded change is still reported, by count alone.
      const removed = before - session.messages.length;
      const done =
        watch.finish("custom") ?? (removed > 0 ? { count: removed, strategy: "custom", tokensFreed: 0 } : undefined);
      if (done !== undefined) run.emit({ type: "compaction", ...done });
    }
  }
}
