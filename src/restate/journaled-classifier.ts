import { CancelledError, type ObjectContext } from "@restatedev/restate-sdk";
import { AbortError, describeError, isInstance } from "../errors.ts";
import type { ApprovalClassifier, ApprovalPolicy, ClassifierVerdict } from "../tools/approval-policy.ts";
import type { StepScheduler } from "./step-scheduler.ts";

/** What a classifier step stores in the journal: its verdict, or what it threw (as text). */
type ClassifierStep = { verdict: ClassifierVerdict } | { thrown: string };

/**
 * The policy with its classifier asked in one journaled step per call (`ctx.run`, named
 * `approval <call id>`): a replay answers from the journal, so a resumed run never asks (nor pays)
 * the classifier again for a call it already judged. What it throws is journaled and thrown again
 * outside the step, where the chain records it as `unsure` with the error, as in process. A
 * policy without a classifier is returned as it is.
 */
export function journaledPolicy(
  ctx: ObjectContext,
  policy: ApprovalPolicy | undefined,
  scheduler: StepScheduler,
): ApprovalPolicy | undefined {
  if (policy?.classifier === undefined) return policy;
  return { ...policy, classifier: journaledClassifier(ctx, policy.classifier, scheduler) };
}

function journaledClassifier(
  ctx: ObjectContext,
  classifier: ApprovalClassifier,
  scheduler: StepScheduler,
): ApprovalClassifier {
  return {
    ...classifier,
    classify: async (request) => {
      const step = ctx.run<ClassifierStep>(`approval ${request.call.id}`, async () => {
        try {
          // Plain JSON in the journal, whatever object the classifier answered with.
          return { verdict: JSON.parse(JSON.stringify(await classifier.classify(request))) as ClassifierVerdict };
        } catch (error) {
          return { thrown: describeError(error) };
        }
      });
      let result: ClassifierStep;
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
