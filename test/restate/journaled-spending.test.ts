// A tool step journals what the call charged the run's budget (a subagent's model calls): a
// replay, which answers the step from the journal without running the handler, charges it again,
// so the ledger after a replay is the one before it (no server needed: the journal is a map).
import type { ObjectContext } from "@restatedev/restate-sdk";
import { describe, expect, it } from "vitest";
import { createBudgetLedger, type BudgetLedger, type ToolContext, type ToolHandler } from "simple-agent-loop";
import { journaledTools } from "../../src/restate/journaled-tools.ts";
import { createReplayClock } from "../../src/restate/replay-clock.ts";
import type { StepScheduler } from "../../src/restate/step-scheduler.ts";

// `run` runs the closure and journals its result; on replay it answers from the journal.
function fakeJournal(journal: Map<string, unknown>, replay: boolean): ObjectContext {
  return {
    key: "session-1",
    run: async (name: string, closure: () => Promise<unknown>) => {
      if (replay) return structuredClone(journal.get(name));
      const value = await closure();
      journal.set(name, structuredClone(value));
      return value;
    },
  } as unknown as ObjectContext;
}

const scheduler = { await: (step: Promise<unknown>) => step } as unknown as StepScheduler;

function callContext(budget: BudgetLedger): ToolContext {
  const context: ToolContext = {
    signal: new AbortController().signal,
    id: "call-1",
    name: "research",
    session: { messages: [] },
    turn: [],
    update: () => undefined,
    budget,
    spend: (spent) => budget.charge(spent),
  };
  return context;
}

describe("Restate: what a tool step charged is journaled", () => {
  it("a replay charges the run's ledger as the first run did, without running the handler", async () => {
    const prices = { small: { inputPerMTok: 1, outputPerMTok: 5 } };
    let runs = 0;
    const research: ToolHandler = (_input, context: ToolContext) => {
      runs++;
      // Two model calls of a subagent, charged as they end.
      context.spend?.({ usage: { inputTokens: 1_000, outputTokens: 100 }, model: "small" });
      context.spend?.({ usage: { inputTokens: 2_000, outputTokens: 200 }, model: "small" });
      return "found it";
    };
    const journal = new Map<string, unknown>();
    const run = async (replay: boolean): Promise<{ ledger: BudgetLedger; output: unknown }> => {
      const ledger = createBudgetLedger({ limit: { usd: 1 }, prices });
      const { toolHandlers } = journaledTools(
        fakeJournal(journal, replay),
        [],
        { research },
        {
          toolTimeout: undefined,
          scheduler,
          clock: createReplayClock(0),
          maxStepBytes: 64 * 1024,
          recorder: undefined,
        },
      );
      const output = await toolHandlers.research!({}, callContext(createBudgetLedger({ within: ledger })));
      return { ledger, output };
    };
    const first = await run(false);
    expect(runs).toBe(1);
    expect(first.output).toBe("found it");
    expect(first.ledger.spent.tokens).toBe(3_300);
    const replayed = await run(true);
    expect(runs).toBe(1);
    expect(replayed.output).toBe("found it");
    expect(replayed.ledger.spent.tokens).toBe(first.ledger.spent.tokens);
    expect(replayed.ledger.spent.usd).toBeCloseTo(0.0045, 12);
  });
});
