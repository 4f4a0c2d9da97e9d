import type { BudgetLedger } from "../model/budget.ts";
import type { SubagentUsage } from "../session.ts";
import type { ToolSpending } from "./executor-setup.ts";
import { addSubagentUsage } from "./subagent-usage.ts";
import type { TaskHost } from "./task-types.ts";

/** What `taskSpending` reads and writes of a task: who holds it now, and what it spent so far. */
export type SpendingTask = { readonly host: TaskHost; spent: SubagentUsage[] | undefined };

/**
 * How a background task's handler spends on models (a subagent's calls): each charge counts, as
 * it is made, in the ledger of the run that holds the task now (the one that started it, or the
 * one that took it over; `fallback` when none does), so that run's `budget` bounds the task as it
 * bounds a direct call, and its cost counts there. What was charged is kept by model on the task
 * (`spent`), for its result's `subagentUsage` when it settles: the running result entered long ago.
 * `undefined` when nothing could count it (no run, no ledger).
 */
export function taskSpending(task: SpendingTask, fallback: BudgetLedger | undefined): ToolSpending | undefined {
  if (task.host.ledger === undefined && fallback === undefined) return undefined;
  return {
    ledger: holderLedger(task, fallback),
    record: (_id, charge) => addSubagentUsage((task.spent ??= []), charge),
  };
}

// A ledger with nothing of its own: limits, prices and charges are those of the holding run's ledger.
function holderLedger(task: SpendingTask, fallback: BudgetLedger | undefined): BudgetLedger {
  const holder = (): BudgetLedger | undefined => task.host.ledger ?? fallback;
  const spent = { tokens: 0, usd: 0 };
  return {
    limit: undefined,
    get prices() {
      return holder()?.prices;
    },
    spent,
    get within() {
      return holder();
    },
    charge: (charge, usd) => {
      spent.tokens += charge.usage.inputTokens + charge.usage.outputTokens;
      spent.usd += usd ?? 0;
      holder()?.charge(charge, usd);
    },
    exhausted: () => holder()?.exhausted(),
    left: () => holder()?.left() ?? {},
  };
}
