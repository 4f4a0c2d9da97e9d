import { CancelledError, type ObjectContext } from "@restatedev/restate-sdk";
import { AbortError, describeError, isInstance } from "../errors.ts";
import type { Guardrail, Guardrails, GuardrailVerdict } from "../guardrails/guardrail.ts";
import type { StepScheduler } from "./step-scheduler.ts";

/** What a guardrail step stores in the journal: its verdict, or what it threw (as text). */
type GuardrailStep = { verdict: GuardrailVerdict } | { thrown: string };

/**
 * The guardrails with each check run as one journaled step (`ctx.run`, named `guardrail <name>`):
 * a replay answers from the journal, so a resumed run never asks a guardrail again that already
 * answered. What a check throws is journaled too and thrown again outside the step, where the
 * loop blocks on it (or lets it through, `failOpen`), as it does in process.
 */
export function journaledGuardrails(
  ctx: ObjectContext,
  guardrails: Guardrails | undefined,
  scheduler: StepScheduler,
): Guardrails | undefined {
  if (guardrails === undefined) return undefined;
  const journaled: Guardrails = {};
  for (const kind of ["input", "output", "toolInput", "toolOutput"] as const) {
    const list = guardrails[kind];
    if (list !== undefined) journaled[kind] = list.map((guardrail) => journaledGuardrail(ctx, guardrail, scheduler));
  }
  return journaled;
}

function journaledGuardrail(ctx: ObjectContext, guardrail: Guardrail, scheduler: StepScheduler): Guardrail {
  return {
    ...guardrail,
    check: async (input) => {
      const step = ctx.run<GuardrailStep>(`guardrail ${guardrail.name}`, async () => {
        try {
          // Plain JSON in the journal, whatever object the check answered with.
          return { verdict: JSON.parse(JSON.stringify(await guardrail.check(input))) as GuardrailVerdict };
        } catch (error) {
          return { thrown: describeError(error) };
        }
      });
      let result: GuardrailStep;
      try {
        result = await scheduler.await(step);
      } catch (error) {
        if (isInstance(error, CancelledError)) throw new AbortError();
        throw error;
      }
      if ("thrown" in result) throw new Error(result.thrown);
      return result.verdict;
    },
  };
}
