import { checkBudgetCharge, createBudgetLedger, hasLimit, type BudgetLedger } from "../model/budget.ts";
import type { ToolSpending } from "./executor-setup.ts";
import type { ToolContext } from "./tool.ts";

/**
 * Gives a tool call's context its budget (`budget`, `spend`, and `budgetLeft` under a limit): the
 * call's own ledger within the run's, whose charges are recorded for `spender`'s result. Under a
 * limit the ledger is built at once. Without one, `budget` is a small stand-in whose methods are
 * shared: it asks the run's ledger until something is charged or `spent` is read (a subagent's
 * model call), and only then builds the call's ledger and its closures. Both are plain fields, so
 * a handler that spreads or destructures its context hands the same ledger on.
 */
export function addCallBudget(context: ToolContext, spending: ToolSpending, spender: string): void {
  const { ledger } = spending;
  if (ledger.prices !== undefined) context.prices = ledger.prices;
  if (hasLimit(ledger)) {
    const budget = callLedger(spending, spender);
    context.budget = budget;
    context.spend = chargeSpent.bind(budget);
    context.budgetLeft = budget.left;
    return;
  }
  const budget = Object.create(lazyLedger) as LazyLedger;
  budget.spending = spending;
  budget.id = spender;
  budget.built = undefined;
  context.budget = budget;
  context.spend = chargeSpent.bind(budget);
}

// `spend`, bound to the call's ledger: a bound shared function is smaller than a closure and its context.
function chargeSpent(this: BudgetLedger, spent: Parameters<NonNullable<ToolContext["spend"]>>[0]): void {
  this.charge(checkBudgetCharge(spent, "ToolContext.spend"));
}

/**
 * What a context's `budget` and `spend` hold between its making and `addCallBudget`, which always
 * replaces both (never seen by a handler): the context is made with every field it will have.
 */
export const unsetBudget = {} as BudgetLedger;
export const unsetSpend: NonNullable<ToolContext["spend"]> = () => undefined;

type LazyLedger = BudgetLedger & { spending: ToolSpending; id: string; built: BudgetLedger | undefined };

function callLedger(spending: ToolSpending, id: string): BudgetLedger {
  return createBudgetLedger({ within: spending.ledger, onCharge: (charge) => spending.record(id, charge) });
}

function built(budget: LazyLedger): BudgetLedger {
  return (budget.built ??= callLedger(budget.spending, budget.id));
}

// The call's ledger has no limit or prices of its own, so until it is built what it would say
// of limits is what the run's ledger says.
const lazyLedger: ThisType<LazyLedger> & Record<string, unknown> = {
  get within(): BudgetLedger {
    return this.spending.ledger;
  },
  get limit(): undefined {
    return undefined;
  },
  get prices(): undefined {
    return undefined;
  },
  get spent(): BudgetLedger["spent"] {
    return built(this).spent;
  },
  charge(...[charge, usd]: Parameters<BudgetLedger["charge"]>): void {
    built(this).charge(charge, usd);
  },
  exhausted(): ReturnType<BudgetLedger["exhausted"]> {
    return (this.built ?? this.spending.ledger).exhausted();
  },
  left(): ReturnType<BudgetLedger["left"]> {
    return (this.built ?? this.spending.ledger).left();
  },
};
