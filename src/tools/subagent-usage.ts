import type { BudgetCharge } from "../model/budget.ts";
import type { SubagentUsage, Usage } from "../session.ts";

/**
 * Adds one charge to a call's `subagentUsage` (one entry per model, in the order models were
 * first charged): the calls and the tokens add up; a cache or reasoning count stays absent until
 * some charge reports it. Changes `entries` in place.
 */
export function addSubagentUsage(entries: SubagentUsage[], charge: BudgetCharge): void {
  const { usage, model, calls = 1 } = charge;
  const entry = entries.find((known) => known.model === model);
  if (entry === undefined) entries.push({ ...(model === undefined ? {} : { model }), calls, usage: { ...usage } });
  else {
    entry.calls += calls;
    entry.usage = sumUsage(entry.usage, usage);
  }
}

function sumUsage(total: Usage, usage: Usage): Usage {
  const sum: Usage = {
    inputTokens: total.inputTokens + usage.inputTokens,
    outputTokens: total.outputTokens + usage.outputTokens,
  };
  for (const key of ["cacheReadTokens", "cacheWriteTokens", "reasoningTokens"] as const)
    if (total[key] !== undefined || usage[key] !== undefined) sum[key] = (total[key] ?? 0) + (usage[key] ?? 0);
  return sum;
}
