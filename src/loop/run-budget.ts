import { BudgetExceededError } from "../errors.ts";
import { describeOverrun, limitReachedBy } from "../model/budget.ts";
import { isModelMessage, type BudgetOverrun, type Message, type ModelMessage } from "../session.ts";
import type { RunContext } from "./run-context.ts";

/**
 * The budget before a model call: `BudgetExceededError` when the run's ledger, or one it is within,
 * is used up (`spent >= limit`: its own calls, its tools' subagents, siblings spending for the same
 * call); before the run's first call, also when the session's last run already went over what this
 * run's limits allow. `undefined`: the call may start.
 */
export function budgetBeforeCall(run: RunContext): BudgetExceededError | undefined {
  return budgetUsedUp(run) ?? (run.state.iteration === 0 ? budgetSpentBefore(run) : undefined);
}

/** `BudgetExceededError` when the run's ledger, or one it is within, is used up: no attempt (a retry) starts then. */
export function budgetUsedUp(
  run: Pick<RunContext, "ledger" | "agentName" | "session">,
): BudgetExceededError | undefined {
  const overrun = run.ledger.exhausted();
  if (overrun === undefined) return undefined;
  return new BudgetExceededError(`Agent "${run.agentName ?? "agent"}" used up ${describeOverrun(overrun)}.`, {
    ...overrun,
    session: run.session,
  });
}

/**
 * What a model call cost, into the ledger once it ended; the call that used the budget up (or one
 * above it) is said at once (`budget-exceeded`) and marked on its turn (`state.overrun`).
 */
export function chargeModelCall(run: RunContext, iteration: number, last: ModelMessage): void {
  const { usage } = last;
  if (usage === undefined) return;
  const { state, ledger } = run;
  ledger.charge(last.model === undefined ? { usage } : { usage, model: last.model });
  if (state.overrun !== undefined) return;
  const overrun = ledger.exhausted();
  if (overrun === undefined) return;
  state.overrun = overrun;
  run.emit({ type: "budget-exceeded", iteration, ...overrun });
}

// A run that answered with the call that used its budget up ended with that answer
// (`budgetExceeded` on it); the session's next run must not spend more on the strength of a fresh
// count. So a run whose limits that spending already reaches refuses before its first call; a
// larger budget (or none) goes on.
function budgetSpentBefore(run: RunContext): BudgetExceededError | undefined {
  const overrun = lastTurnOverrun(run.session.messages);
  if (overrun === undefined) return undefined;
  const limit = limitReachedBy(run.ledger, overrun.spent);
  if (limit === undefined) return undefined;
  return new BudgetExceededError(
    `Agent "${run.agentName ?? "agent"}": the session's last run went over ${describeOverrun(overrun)}, ` +
      `more than this run's budget; give a larger budget (or none) to go on.`,
    { budget: limit, spent: { ...overrun.spent }, session: run.session },
  );
}

// The `budgetExceeded` mark of the session's last model turn, if it has one.
function lastTurnOverrun(messages: readonly Message[]): BudgetOverrun | undefined {
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index]!;
    if (!isModelMessage(message)) continue;
    // A turn ends with its usage, or at least with an answer.
    if (message.usage !== undefined || message.budgetExceeded !== undefined || "role" in message)
      return message.budgetExceeded;
  }
  return undefined;
}
