import type { JsonObject } from "../session.ts";
import { checkApprovalPolicy, type ApprovalPolicy, type ApprovalRule } from "./approval-policy.ts";
import { compileMatch, type CompiledMatch } from "./input-match.ts";

/** What the rules of a policy say about a call: the deciding rule's action, its id and reason. */
export type PolicyMatch = { action: "allow" | "deny" | "ask"; rule: string; reason?: string };

/**
 * What the rules of `policy` decide for a call, or `undefined` when none matches. Matching rules
 * decide by action, never by order: `deny` over `ask` over `allow` (of several with one action,
 * the first). Throws an `AgentError` for a malformed policy (see `checkApprovalPolicy`).
 */
export function matchPolicy(
  policy: ApprovalPolicy,
  call: { name: string; input: JsonObject },
): PolicyMatch | undefined {
  let rules = compiledPolicies.get(policy);
  if (rules === undefined) {
    checkApprovalPolicy(policy);
    rules = policyRules(policy);
    compiledPolicies.set(policy, rules);
  }
  return rules.match(call.name, call.input, false);
}

// Compiled once per policy object (and again when its rules change: see `policyRules`).
const compiledPolicies = new WeakMap<ApprovalPolicy, CompiledRules>();

/**
 * The rules of `policy` as they are at each call: compiled once, and again (checked first) when
 * `policy.rules` was replaced or changed since (the CLI's mode changes, an "always" answer, a rule
 * swapped at its index), so a call is matched against the rules of its moment. A comparison of
 * the list's rule objects on every other call: a rule object changed in place is not seen (replace it).
 */
export function policyRules(policy: ApprovalPolicy): CompiledRules {
  let seen = policy.rules;
  let snapshot = seen?.slice() ?? [];
  let compiled = compileRules(seen ?? []);
  return {
    match: (name, input, ownTool) => {
      const rules = policy.rules;
      if (rules !== seen || !sameRules(rules ?? [], snapshot)) {
        checkApprovalPolicy(policy);
        compiled = compileRules(rules ?? []);
        seen = rules;
        snapshot = rules?.slice() ?? [];
      }
      return compiled.match(name, input, ownTool);
    },
  };
}

function sameRules(rules: readonly ApprovalRule[], snapshot: readonly ApprovalRule[]): boolean {
  if (rules.length !== snapshot.length) return false;
  for (let index = 0; index < rules.length; index++) if (rules[index] !== snapshot[index]) return false;
  return true;
}

/** A policy's rules ready to match, built once per run. */
export type CompiledRules = {
  /**
   * The deciding rule for tool `name` with `input`. `ownTool`: a tool the loop adds (handoffs,
   * `search_tools`, `recall_output`), which only a rule naming it exactly (no `*`) matches.
   */
  match: (name: string, input: JsonObject, ownTool: boolean) => PolicyMatch | undefined;
};

type Compiled = {
  readonly rule: ApprovalRule;
  readonly rank: number;
  /** The rule's place in the list: of two with one action, the first decides. */
  readonly order: number;
  readonly inputs: readonly (readonly [string, CompiledMatch])[];
};

const rankOf = { deny: 0, ask: 1, allow: 2 } as const;

/** Compiles checked rules: exact tool names by a map lookup, patterns with `*` as regular expressions. */
export function compileRules(rules: readonly ApprovalRule[]): CompiledRules {
  const byName = new Map<string, Compiled[]>();
  const patterns: { test: RegExp; rule: Compiled }[] = [];
  for (const [order, rule] of rules.entries()) {
    const compiled: Compiled = {
      rule,
      order,
      rank: rankOf[rule.action],
      inputs: Object.entries(rule.input ?? {}).map(([property, matcher]) => [property, compileMatch(matcher)] as const),
    };
    for (const tool of Array.isArray(rule.tool) ? rule.tool : [rule.tool]) {
      if (tool.includes("*")) patterns.push({ test: toolPattern(tool), rule: compiled });
      else byName.set(tool, [...(byName.get(tool) ?? []), compiled]);
    }
  }
  return {
    match: (name, input, ownTool) => {
      let best: Compiled | undefined;
      const consider = (candidate: Compiled): void => {
        if (
          best !== undefined &&
          (candidate.rank > best.rank || (candidate.rank === best.rank && candidate.order > best.order))
        )
          return;
        if (inputMatches(candidate, input)) best = candidate;
      };
      for (const candidate of byName.get(name) ?? []) consider(candidate);
      if (!ownTool) for (const { test, rule } of patterns) if (test.test(name)) consider(rule);
      if (best === undefined) return undefined;
      const { rule } = best;
      return rule.reason === undefined
        ? { action: rule.action, rule: rule.id }
        : { action: rule.action, rule: rule.id, reason: rule.reason };
    },
  };
}

// Every matcher must match; a missing property matches none. An allow holds each value to the strict reading.
function inputMatches({ rule, inputs }: Compiled, input: JsonObject): boolean {
  const strict = rule.action === "allow";
  for (const [property, matches] of inputs)
    if (!Object.hasOwn(input, property) || !matches(input[property], strict)) return false;
  return true;
}

function toolPattern(tool: string): RegExp {
  return new RegExp(`^${tool.split("*").map(escapeRegex).join(".*")}$`, "s");
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
