import type { ObjectContext } from "@restatedev/restate-sdk";
import type { Guardrail, Guardrails } from "../guardrails/guardrail.ts";
import { journaledCheck } from "./journaled-check.ts";
import type { StepScheduler } from "./step-scheduler.ts";

/**
 * The guardrails with each check run as one journaled step (named `guardrail <name>`, see
 * `journaledCheck`): a resumed run never asks a guardrail again that already answered, and what a
 * check threw reaches the loop again, which blocks on it (or lets it through, `failOpen`), as it
 * does in process.
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
    check: journaledCheck(
      ctx,
      scheduler,
      () => `guardrail ${guardrail.name}`,
      (input: Parameters<Guardrail["check"]>[0]) => guardrail.check(input),
    ),
  };
}
