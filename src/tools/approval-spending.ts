import type { BudgetCharge } from "../model/budget.ts";
import type { ToolCallMessage } from "../session.ts";
import type { ExecutorSetup } from "./executor-setup.ts";

/**
 * What the classifiers asked about a call spent, as its approval records it (the deciding
 * verdict and the `unsure` ones consulted before it): one charge per verdict that recorded usage.
 * The run that asked charged its budget at once; the record is what a later reader counts.
 */
export function approvalSpending(call: ToolCallMessage): BudgetCharge[] {
  const approval = call.approval;
  if (approval === undefined) return [];
  const charges: BudgetCharge[] = [];
  for (const link of [...(approval.consulted ?? []), ...(approval.decidedBy === undefined ? [] : [approval.decidedBy])])
    if (link.by === "classifier" && link.usage !== undefined)
      charges.push(link.model === undefined ? { usage: link.usage } : { usage: link.usage, model: link.model });
  return charges;
}

/**
 * A call that runs (or is denied) on a decision taken in an earlier run (it paused for a human, or
 * its run stopped between the decision and the result): what the classifiers spent on it then
 * never reached a result, so it goes on this one's (`subagentUsage`), where `sessionMetrics`
 * counts it. Not charged again: the earlier run's budget paid it.
 */
export function recordEarlierSpending(setup: ExecutorSetup, call: ToolCallMessage): void {
  const spending = setup.spending;
  if (spending === undefined) return;
  for (const charge of approvalSpending(call)) spending.record(call.id, charge);
}
