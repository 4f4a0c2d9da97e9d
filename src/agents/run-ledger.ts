import type { AgentEvent } from "../loop/events.ts";
import type { AgentLoopOptions } from "../loop/loop-options.ts";
import type { RunMetrics } from "../loop/run-metrics.ts";
import type { Session, Usage } from "../session.ts";
import { BudgetExceededError } from "../errors.ts";
import { createBudgetLedger, describeOverrun, type BudgetLedger } from "../model/budget.ts";

type RunEnd = Extract<AgentEvent, { type: "run-end" }>;

/**
 * What the agents of one `runAgent` call spent and did, each agent's run after the other: the
 * budget is the call's, one ledger every agent's run is within (`budget`, given to each as its
 * `parentBudget`), and the call's one `run-end` carries the sum of their metrics (`close`).
 */
export type RunLedger = {
  /** The call's budget: its `budget` option, within the `parentBudget` it was given, if any. */
  budget: BudgetLedger;
  /**
   * The call's budget is used up (a handoff's summary can use it up): the next agent must not
   * start.
   */
  overdrawn: (session: Session) => BudgetExceededError | undefined;
  /** One agent's run ended with `end`. */
  add: (end: RunEnd) => void;
  /** The call's `run-end`: `end` (the last agent's, or the call's own error) with the summed metrics and cost. */
  close: (end: RunEnd) => RunEnd;
};

export function createRunLedger(options: Pick<AgentLoopOptions, "budget" | "prices" | "parentBudget">): RunLedger {
  let metrics: RunMetrics | undefined;
  let costUsd: number | undefined;
  const budget = createBudgetLedger({
    limit: options.budget,
    prices: options.prices ?? options.parentBudget?.prices,
    within: options.parentBudget,
  });
  return {
    budget,
    overdrawn: (session) => {
      const overrun = budget.exhausted();
      if (overrun === undefined) return undefined;
      return new BudgetExceededError(
        `The run used up ${describeOverrun(overrun)} before its next agent's first call.`,
        {
          ...overrun,
          session,
        },
      );
    },
    add: (end) => {
      if (end.costUsd !== undefined) costUsd = (costUsd ?? 0) + end.costUsd;
      if (end.metrics === undefined) return;
      metrics = metrics === undefined ? structuredClone(end.metrics) : sumMetrics(metrics, end.metrics);
    },
    close: (end) => {
      const closed: RunEnd = { ...end };
      if (metrics !== undefined) closed.metrics = { ...metrics, ...(costUsd === undefined ? {} : { costUsd }) };
      else delete closed.metrics;
      if (costUsd !== undefined) closed.costUsd = costUsd;
      return closed;
    },
  };
}

// The metrics of two runs one after the other: counts and times add up, turns follow each other.
function sumMetrics(first: RunMetrics, second: RunMetrics): RunMetrics {
  const sum: RunMetrics = {
    modelCalls: first.modelCalls + second.modelCalls,
    usage: sumUsage(first.usage, second.usage),
    durationMs: first.durationMs + second.durationMs,
    modelMs: first.modelMs + second.modelMs,
    toolMs: first.toolMs + second.toolMs,
    waitMs: first.waitMs + second.waitMs,
    tools: {},
    turns: [...first.turns, ...second.turns.map((turn) => ({ ...turn, iteration: turn.iteration + first.modelCalls }))],
  };
  for (const tools of [first.tools, second.tools])
    addEntries(sum.tools, tools, (known, stats) => ({
      calls: known.calls + stats.calls,
      errors: known.errors + stats.errors,
      totalMs: known.totalMs + stats.totalMs,
    }));
  if (first.costByModel !== undefined || second.costByModel !== undefined) {
    const byModel: NonNullable<RunMetrics["costByModel"]> = {};
    for (const costs of [first.costByModel ?? {}, second.costByModel ?? {}])
      addEntries(byModel, costs, (known, entry) => ({
        calls: known.calls + entry.calls,
        costUsd: known.costUsd + entry.costUsd,
      }));
    sum.costByModel = byModel;
  }
  const subagents = [first.subagents, second.subagents].filter((entry) => entry !== undefined);
  if (subagents.length > 0)
    sum.subagents = subagents.reduce((total, entry) => ({
      modelCalls: total.modelCalls + entry.modelCalls,
      usage: sumUsage(total.usage, entry.usage),
      ...(total.costUsd === undefined && entry.costUsd === undefined
        ? {}
        : { costUsd: (total.costUsd ?? 0) + (entry.costUsd ?? 0) }),
    }));
  return sum;
}

function sumUsage(first: Required<Usage>, second: Required<Usage>): Required<Usage> {
  return {
    inputTokens: first.inputTokens + second.inputTokens,
    outputTokens: first.outputTokens + second.outputTokens,
    cacheReadTokens: first.cacheReadTokens + second.cacheReadTokens,
    cacheWriteTokens: first.cacheWriteTokens + second.cacheWriteTokens,
    reasoningTokens: first.reasoningTokens + second.reasoningTokens,
  };
}

// By name, every entry an own property whatever the name (`__proto__` included), as the metrics keep them.
function addEntries<T extends object>(
  target: Record<string, T>,
  source: Record<string, T>,
  combine: (known: T, added: T) => T,
): void {
  for (const name of Object.keys(source)) {
    const added = source[name]!;
    const value = Object.hasOwn(target, name) ? combine(target[name]!, added) : { ...added };
    Object.defineProperty(target, name, { value, enumerable: true, writable: true, configurable: true });
  }
}
