import { AgentError } from "../errors.ts";
import { checkNumber } from "../numeric-options.ts";
import type { BudgetOverrun, Usage } from "../session.ts";
import { costOf, priceOf, type ModelPrice } from "./cost.ts";

/** A limit on what model calls may spend: tokens (input + output) and, with prices, USD. */
export type BudgetLimit = { usd?: number; tokens?: number };

/** One model call's spending (or `calls` of them), as a run, a tool or a subagent reports it. */
export type BudgetCharge = { usage: Usage; model?: string; calls?: number };

/**
 * One live count of what model calls spend, shared by everything that spends for one call of the
 * library: a run's own model calls, its tools' subagents (parallel ones included), a handoff's or
 * a compaction's summarizer, each fallback model. A ledger may sit within another (a subagent's
 * within its parent's call, each agent of a `runAgent` call within the call's): a charge counts
 * here and in every ledger above at once, so each sees what its siblings spend as they spend it.
 *
 * Used up means `spent >= limit` (tokens, or USD with prices) in this ledger or any above it: from
 * then on no model call starts (`exhausted`). A call already in flight is never cancelled; its
 * spending is counted when it ends, so the total can end above the limit by what the calls in
 * flight at that moment spent.
 */
export type BudgetLedger = {
  /** This ledger's own limit; absent when it has none (the ones above may). */
  readonly limit: BudgetLimit | undefined;
  /** What USD is priced with here; absent: USD comes priced from below (or is not counted). */
  readonly prices: Readonly<Record<string, ModelPrice>> | undefined;
  /** What was charged here so far (what was charged within it included): tokens and, priced, USD. */
  readonly spent: { tokens: number; usd: number };
  /** Counts `charge` here and in every ledger above. `usd`: its cost as priced below, for a ledger without prices. */
  charge: (charge: BudgetCharge, usd?: number) => void;
  /** The first limit used up, here or above (`spent >= limit`), with what was spent against it; `undefined` while none is. */
  exhausted: () => BudgetOverrun | undefined;
  /** What is left before the nearest limit, here or above (never below 0); empty without limits. */
  left: () => BudgetLimit;
  /** The ledger this one is within, if any. */
  readonly within: BudgetLedger | undefined;
};

/** What a ledger is made of; `onCharge` hears each charge made here, with its USD as priced here (to record it, say on a tool call's result). */
export type BudgetLedgerOptions = {
  limit?: BudgetLimit | undefined;
  prices?: Readonly<Record<string, ModelPrice>> | undefined;
  within?: BudgetLedger | undefined;
  onCharge?: ((charge: BudgetCharge, usd: number) => void) | undefined;
};

export function createBudgetLedger(options: BudgetLedgerOptions = {}): BudgetLedger {
  const { limit, prices, within, onCharge } = options;
  const spent = { tokens: 0, usd: 0 };
  const ledger: BudgetLedger = {
    limit,
    prices,
    spent,
    within,
    charge: (charge, usd) => {
      const { usage } = charge;
      spent.tokens += usage.inputTokens + usage.outputTokens;
      let cost = usd ?? 0;
      if (prices !== undefined) {
        const price = priceOf(prices, charge.model);
        cost = price === undefined ? 0 : costOf(usage, price);
      }
      spent.usd += cost;
      onCharge?.(charge, cost);
      within?.charge(charge, cost);
    },
    exhausted: () => {
      for (let node: BudgetLedger | undefined = ledger; node !== undefined; node = node.within) {
        const reached = limitReached(node, node.spent);
        if (reached) return { budget: { ...node.limit }, spent: spentAgainst(node) };
      }
      return undefined;
    },
    left: () => {
      const left: BudgetLimit = {};
      for (let node: BudgetLedger | undefined = ledger; node !== undefined; node = node.within) {
        for (const key of ["usd", "tokens"] as const) {
          const cap = node.limit?.[key];
          if (cap === undefined) continue;
          left[key] = Math.min(left[key] ?? Infinity, Math.max(0, cap - node.spent[key]));
        }
      }
      return left;
    },
  };
  return ledger;
}

/**
 * The limit of `ledger` (or of one above it) that `spent` reaches: for a session whose last run
 * went over a budget, whether this run's limits leave it anything. `undefined` when none is reached.
 */
export function limitReachedBy(ledger: BudgetLedger, spent: { usd?: number; tokens: number }): BudgetLimit | undefined {
  for (let node: BudgetLedger | undefined = ledger; node !== undefined; node = node.within)
    if (limitReached(node, { tokens: spent.tokens, usd: spent.usd ?? 0 })) return { ...node.limit };
  return undefined;
}

/** The words for an overrun: which limit, and what was spent against it. */
export function describeOverrun(overrun: BudgetOverrun): string {
  const { budget, spent } = overrun;
  return budget.usd !== undefined && spent.usd !== undefined && spent.usd >= budget.usd
    ? `budget.usd (${budget.usd}): spent $${spent.usd.toFixed(4)}`
    : `budget.tokens (${budget.tokens}): spent ${spent.tokens} tokens`;
}

function limitReached(
  node: BudgetLedger,
  spent: { tokens: number; usd: number },
): node is BudgetLedger & {
  limit: BudgetLimit;
} {
  const { limit } = node;
  if (limit === undefined) return false;
  return (
    (limit.tokens !== undefined && spent.tokens >= limit.tokens) || (limit.usd !== undefined && spent.usd >= limit.usd)
  );
}

// USD is reported only where it is counted: with prices here, or priced below.
function spentAgainst(node: BudgetLedger): { usd?: number; tokens: number } {
  return node.limit?.usd === undefined && node.prices === undefined
    ? { tokens: node.spent.tokens }
    : { tokens: node.spent.tokens, usd: node.spent.usd };
}

/**
 * `charge` as given by code outside the library (`ToolContext.spend`): held to what a model's usage
 * is held to before anything is counted. Throws an `AgentError` naming `where` and the field.
 */
export function checkBudgetCharge(charge: unknown, where: string): BudgetCharge {
  const {
    usage,
    model,
    calls = 1,
  } = (typeof charge === "object" && charge !== null ? charge : {}) as Partial<BudgetCharge & { usage: unknown }>;
  if (typeof usage !== "object" || usage === null) throw new AgentError(`${where}: usage must be an object`);
  for (const name of ["inputTokens", "outputTokens"] as const)
    if ((usage as Partial<Usage>)[name] === undefined) throw new AgentError(`${where}: usage.${name} is required`);
  for (const [name, count] of Object.entries(usage))
    checkNumber(`${where}: usage.${name}`, count, { min: 0, integer: true });
  checkNumber(`${where}: calls`, calls, { min: 0, integer: true });
  if (model !== undefined && typeof model !== "string") throw new AgentError(`${where}: model must be a string`);
  return { usage: usage, calls, ...(model === undefined ? {} : { model }) };
}

/** Whether `ledger` or one above it has a limit. */
export function hasLimit(ledger: BudgetLedger): boolean {
  for (let node: BudgetLedger | undefined = ledger; node !== undefined; node = node.within)
    if (node.limit !== undefined && (node.limit.usd !== undefined || node.limit.tokens !== undefined)) return true;
  return false;
}
