import { CancelledError, type ObjectContext } from "@restatedev/restate-sdk";
import { AbortError, describeError, isInstance } from "../errors.ts";
import type { StepScheduler } from "./step-scheduler.ts";

/** What a check's step stores in the journal: its verdict, or what it threw (as text). */
type CheckStep<Verdict> = { verdict: Verdict } | { thrown: string };

/**
 * `check` asked in one journaled step (`ctx.run`, named by `stepName` for the input it is asked
 * about): a replay answers from the journal, so a resumed run never asks (nor pays) a check again
 * that already answered. The verdict is journaled as plain JSON, whatever object the check
 * answered with. What it throws is journaled as text and thrown again outside the step, so the
 * caller treats it as it treats a throw in process (a guardrail blocks or fails open, a classifier
 * is `unsure`); a cancelled invocation is an `AbortError`. Guardrails and the approval classifier
 * go through this one wrapper.
 */
export function journaledCheck<Input, Verdict>(
  ctx: ObjectContext,
  scheduler: StepScheduler,
  stepName: (input: Input) => string,
  check: (input: Input) => Verdict | Promise<Verdict>,
): (input: Input) => Promise<Verdict> {
  return async (input) => {
    const step = ctx.run<CheckStep<Verdict>>(stepName(input), async () => {
      try {
        return { verdict: JSON.parse(JSON.stringify(await check(input))) as Verdict };
      } catch (error) {
        return { thrown: describeError(error) };
      }
    });
    let result: CheckStep<Verdict>;
    try {
      result = await scheduler.await(step);
    } catch (error) {
      if (isInstance(error, CancelledError)) throw new AbortError();
      throw error;
    }
    if ("thrown" in result) throw new Error(result.thrown);
    return result.verdict;
  };
}
