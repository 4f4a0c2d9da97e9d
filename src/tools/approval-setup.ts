import type { ApprovalClassifier, ApprovalPolicy, AskHuman } from "./approval-policy.ts";
import { policyRules, type CompiledRules, type PolicyMatch } from "./match-policy.ts";

/** A run's approval policy, ready for its calls: built once per run (`createApprovalChain`). */
export type ApprovalChain = {
  /** The policy as given: a subagent's run inherits it (`ToolContext.approvalPolicy`). */
  readonly policy: ApprovalPolicy;
  readonly rules: CompiledRules;
  readonly classifier: ApprovalClassifier | undefined;
  readonly human: "pause" | "deny" | AskHuman;
  /** The time a decision is recorded at (a durable run's journaled clock). */
  readonly now: () => string;
};

/** Builds the chain of a checked policy. */
export function createApprovalChain(policy: ApprovalPolicy, now: () => string): ApprovalChain {
  return {
    policy,
    rules: policyRules(policy),
    classifier: policy.classifier,
    human: policy.human ?? "pause",
    now,
  };
}

/** The `ask` rule a tool's `requireApproval: true` stands for. */
export const requireApprovalRule: PolicyMatch = { action: "ask", rule: "requireApproval" };

// Tools the loop adds: outside the policy unless a rule names them (never through a `*`).
const ownTools = new WeakSet<object>();

/** Whether the loop added this tool itself. */
export function isOwnTool(definition: object): boolean {
  return ownTools.has(definition);
}

/** Marks a tool the loop adds itself (handoffs, `search_tools`, `recall_output`). */
export function markOwnTool<Definition extends object>(definition: Definition): Definition {
  ownTools.add(definition);
  return definition;
}
