import type { BudgetOverrun, Usage } from "../session.ts";

/**
 * What a run cost: model calls, tokens by kind, time in the model and in tools, per tool and per
 * turn. Durations are milliseconds to 0.1 ms.
 */
export type RunMetrics = {
  modelCalls: number;
  usage: Required<Usage>;
  /**
   * Wall time of the run, and its parts: waiting for the model, running tool turns, and waiting
   * in `beforeToolCall` hooks (for the user's permission, say; not counted in `toolMs`).
   */
  durationMs: number;
  modelMs: number;
  toolMs: number;
  waitMs: number;
  /**
   * By tool name (names come from the model: every entry is an own property, so a tool named
   * `__proto__` or `constructor` is an entry like any other). `totalMs` excludes waits.
   */
  tools: Record<string, { calls: number; errors: number; totalMs: number }>;
  turns: {
    iteration: number;
    modelMs: number;
    toolMs: number;
    waitMs: number;
    toolCalls: number;
    usage?: Usage;
    /** The model that answered (recorded on the turn's last message), and what the turn cost where its price is known. */
    model?: string;
    costUsd?: number;
  }[];
  /**
   * USD, with the run's `prices` (on `run-end`) or `sessionMetrics(session, { prices })`: the calls
   * whose model has a price, each at its own rates (`costOf`), the subagents' included. Absent
   * without prices.
   */
  costUsd?: number;
  /**
   * Model calls made inside tool calls (subagents, at any depth, each counted once, as recorded on
   * the results: `ToolResultMessage.subagentUsage`). Not in `modelCalls`, `usage` or `turns`, which
   * are this run's own calls; in `costUsd` and `costByModel`. Absent when there were none.
   */
  subagents?: { modelCalls: number; usage: Required<Usage>; costUsd?: number };
  /**
   * By the model that answered (the `model` recorded on each turn, so calls a `withFallback` moved
   * to another model count for the one that answered), subagents' calls included: its calls, and
   * their cost in USD (0 where no price is known, or without prices). Absent when no turn recorded a model.
   */
  costByModel?: Record<string, { costUsd: number; calls: number }>;
  /** On `run-end`: the run went over its `budget` (its budget and what it had spent then). */
  budgetExceeded?: BudgetOverrun;
};
