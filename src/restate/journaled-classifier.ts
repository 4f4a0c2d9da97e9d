import type { ObjectContext } from "@restatedev/restate-sdk";
import type { ApprovalPolicy } from "../tools/approval-policy.ts";
import { journaledCheck } from "./journaled-check.ts";
import type { StepScheduler } from "./step-scheduler.ts";

/**
 * The policy with its classifier asked in one journaled step per call (named `approval <call id>`,
 * see `journaledCheck`): a resumed run never asks (nor pays) the classifier again for a call it
 * already judged, and what it threw reaches the chain again, which records it as `unsure` with the
 * error, as in process. A policy without a classifier is returned as it is.
 */
export function journaledPolicy(
  ctx: ObjectContext,
  policy: ApprovalPolicy | undefined,
  scheduler: StepScheduler,
): ApprovalPolicy | undefined {
  if (policy?.classifier === undefined) return policy;
  const classifier = policy.classifier;
  return {
    ...policy,
    classifier: {
      ...classifier,
      classify: journaledCheck(
        ctx,
        scheduler,
        (request) => `approval ${request.call.id}`,
        (request) => classifier.classify(request),
      ),
    },
  };
}
