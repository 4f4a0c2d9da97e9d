import type { CompactionFallback, CompactionStrategy } from "./compaction-strategy.ts";
import type { ModelView } from "./model-turn.ts";
import type { RunContext } from "./run-context.ts";
import { watchCompaction } from "./compaction-report.ts";
import { describeError } from "../errors.ts";
import type { ModelContext } from "../model/invoke-model.ts";
import type { AgentHooks } from "./hooks.ts";

/** A hook's answer when the run was aborted while it ran. */
export const aborted = Symbol("aborted");

/** What the `beforeModelCall` hook answered for one call (`undefined`: it kept the defaults, or there is none). */
export type ModelCallChanges = Awaited<ReturnType<NonNullable<AgentHooks["beforeModelCall"]>>>;

/**
/**
 * The model's view of the run for one call, built fresh for every call (the first attempt, and
 * the retry after a context overflow once `makeRoom` shortened the session) from the session and
 * what the hook answered for that call: a new context (with the hook's settings, or none), the
 * tools, and the messages (the output instruction first, then the session's messages or the ones
 * the hook put in their place). The one place that builds it: two builds must never disagree.
 */
export function modelView(run: RunContext, iteration: number, changes: ModelCallChanges): ModelView {
  const { session } = run;
  const context: ModelContext =
    run.agentName === undefined
      ? { signal: run.signal, iteration }
      : { signal: run.signal, iteration, agentName: run.agentName };
  if (run.output !== undefined) context.output = run.output;
  if (changes?.settings !== undefined) context.settings = changes.settings;
  const tools = changes?.tools ?? run.offer.offered(session);
  const messages = changes?.messages ?? session.messages;
  if (run.instruction !== undefined) return { tools, session: { messages: [run.instruction, ...messages] }, context };
  return { tools, session: messages === session.messages ? session : { messages }, context };
}

/** Truncation compaction (the default) before each call; emits `compaction` when messages were cut. */
export function compact(run: RunContext): void {
  const { compact } = run;
  if (compact === undefined) return;
  const watch = watchCompaction(run.session);
  compact(run.session);
  const report = watch.finish("truncation");
  if (report !== undefined) run.emit({ type: "compaction", ...report });
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

/**
 * Runs a model hook, raced against the abort: `aborted` when the run was aborted meanwhile. A
 * hook that throws ends the run: its error is reported as `hook-error`, then rethrown.
 */
export async function runModelHook<T>(
  run: RunContext,
  hook: "beforeModelCall" | "afterModelCall",
  call: () => T | Promise<T>,
): Promise<T | typeof aborted> {
  try {
    return await run.abortRace.race(Promise.resolve(call()));
  } catch (error) {
    if (run.signal.aborted) return aborted;
    run.emit({ type: "hook-error", hook, error: describeError(error) });
    throw error;
  }
}
