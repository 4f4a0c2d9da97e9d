import { AgentError, describeValue } from "../errors.ts";
import { checkNumber } from "../numeric-options.ts";
import type { ConsultedLink, JsonValue, Session, ToolCallMessage, Usage } from "../session.ts";
import type { ToolSchema } from "../shared/tool-schema.ts";
import { globProblem, regexProblem } from "./input-match.ts";

/**
 * Who may approve a run's tool calls, asked in a chain: the `rules` first, then the `classifier`,
 * then the `human`; the first link that is sure decides. A rule's `allow` or `deny` decides, its
 * `ask` goes straight to the human. No matching rule: the classifier, if any; its `unsure` (or no
 * classifier): the human. `human`: `"pause"` (the default) pauses the run until `resolveApproval`,
 * as a tool's `requireApproval` does; an `AskHuman` function is asked inline; `"deny"` denies (no
 * one to ask). Plain data but for the functions: the rules load from JSON.
 *
 * `rules` may be replaced or changed (a rule added, removed or swapped at its index; a rule object
 * changed in place is not seen) while a run uses the policy (a prompt's "always" adds an allow
 * rule, the CLI's `--mode` changes): each call is matched against the rules of its moment,
 * checked as at run start (after a malformed change, a call does not run: its error result names
 * the rule and field).
 *
 * A tool's `requireApproval: true` is an `ask` rule with id `requireApproval`; the `beforeToolCall`
 * hook runs before the chain (its deny is recorded `{ by: "hook" }`). The loop's own tools (handoff
 * transfers, `search_tools`, `recall_output`) are outside the policy unless a rule names them.
 */
export type ApprovalPolicy = {
  rules?: ApprovalRule[];
  classifier?: ApprovalClassifier;
  human?: "pause" | "deny" | AskHuman;
};

/**
 * A rule: the calls it matches, and what it decides for them. Matching rules decide by action,
 * never by order: `deny` over `ask` over `allow`, so a broad allow never overrides a deny.
 *
 * `tool`: tool names, `*` matching any characters (`"mcp__github__*"`, `"*"`). `input`: matchers by
 * top-level input property, all of which must match; a missing property does not match.
 */
export type ApprovalRule = {
  /** Unique within the policy: the record of each decision names it. */
  id: string;
  tool: string | string[];
  input?: Record<string, InputMatch>;
  action: "allow" | "deny" | "ask";
  /** Shown to the model on a denial, and recorded. */
  reason?: string;
};

/**
 * A matcher of one input property. An `allow` matches a string, or an array of strings every one
 * of which matches; a `deny` or `ask` matches when any string within the value does (nested lists
 * and objects too; numbers and booleans as their JSON text).
 *
 * - `glob`: a path, normalized first (`src/../.env` is `.env`, `./a` is `a`); `*` any characters
 *   within a segment, `?` one character, `**` as a whole segment zero or more directories.
 * - `prefix`: a command that starts with the prefix, ending at a word boundary (`git status`
 *   matches `git status -s`, not `git statusx`). A command that chains or substitutes (`;`, `&`,
 *   `|`, a backquote, `$(`, `<`, `>`, a newline) never matches an `allow` rule's prefix; a `deny`
 *   or `ask` prefix is checked against each of its parts (`git status && rm -rf ~` matches `rm`),
 *   each read as the shell runs it (past quotes, a directory, assignments, keywords, `sudo`/`env`/
 *   `xargs`-like runners, `eval`, `sh -c`; any letter case: see `commandsRun`). A `deny` or
 *   `ask` glob matches in any letter case.
 * - `equals`: the value, compared as JSON.
 * - `regex`: a JavaScript regular expression (no flags), searched in the string. Patterns that can
 *   backtrack without bound (a quantified group holding a quantifier, a back-reference) are refused.
 */
export type InputMatch =
  { glob: string | string[] } | { prefix: string | string[] } | { equals: JsonValue } | { regex: string };

/** What a classifier and an `AskHuman` function are shown of a call. */
export type ApprovalRequest = {
  call: ToolCallMessage;
  /** The called tool as the model is shown it (name, description, input schema). */
  tool: ToolSchema;
  session: Session;
  /** The agent whose model made the call, in a run of agents. */
  agent?: string;
  /** For the human: the links asked before that were not sure (a rule's `ask`, with its reason; a classifier's `unsure`). */
  consulted?: ConsultedLink[];
  /** Aborted with the run: stop asking. */
  signal: AbortSignal;
  /** Set for a call a code-mode program made: the id of its code call (`run_code`), whose input holds the program. */
  caller?: string;
};

/**
 * Decides calls no rule decided. A verdict other than `allow` or `deny` (`unsure`, anything else,
 * a throw, no answer within `timeoutMs`) leaves the call to the human: a classifier never allows
 * by failing.
 */
export type ApprovalClassifier = {
  /** Recorded with each of its verdicts. */
  name: string;
  classify: (request: ApprovalRequest) => ClassifierVerdict | Promise<ClassifierVerdict>;
  /** Milliseconds to wait for a verdict (default 60,000; `Infinity`: no limit). */
  timeoutMs?: number;
};

/** A classifier's answer. `usage`/`model`: what asking it cost (priced with the run's `prices`, counted in its budget). */
export type ClassifierVerdict = {
  decision: "allow" | "deny" | "unsure";
  reason: string;
  confidence?: number;
  usage?: Usage;
  model?: string;
  /** Why an `unsure` verdict is no answer (the classifier's model answered something else): recorded. */
  error?: string;
};

/** A human asked inline (the CLI's prompt): `by` is their id, recorded with the decision. */
export type AskHuman = (request: ApprovalRequest) => Promise<{ approved: boolean; reason?: string; by?: string }>;

const actions = new Set(["allow", "deny", "ask"]);
const matchers = new Set(["glob", "prefix", "equals", "regex"]);

/**
 * Checks a policy where a run starts: throws an `AgentError` naming the rule (its id, else its
 * index) and the field for a rule without an id, two of one id, an unknown action or matcher, a
 * glob or regex that does not compile, a classifier without `classify`, an unknown `human`.
 */
export function checkApprovalPolicy(policy: unknown, option = "approvalPolicy"): asserts policy is ApprovalPolicy {
  if (!isRecord(policy)) throw new AgentError(`${option} must be an object; got ${describeValue(policy)}`);
  for (const key of Object.keys(policy))
    if (key !== "rules" && key !== "classifier" && key !== "human")
      throw new AgentError(`${option}: unknown field ${JSON.stringify(key)} (rules, classifier, human)`);
  const { rules, classifier, human } = policy;
  if (rules !== undefined) {
    if (!Array.isArray(rules)) throw new AgentError(`${option}.rules must be an array; got ${describeValue(rules)}`);
    const seen = new Set<string>();
    rules.forEach((rule: unknown, index) => {
      checkRule(rule, index, option);
      if (seen.has(rule.id))
        throw new AgentError(`${option}.rules[${index}]: two rules have the id ${JSON.stringify(rule.id)}`);
      seen.add(rule.id);
    });
  }
  if (classifier !== undefined) {
    if (!isRecord(classifier))
      throw new AgentError(`${option}.classifier must be an object; got ${describeValue(classifier)}`);
    if (typeof classifier.classify !== "function")
      throw new AgentError(
        `${option}.classifier.classify must be a function; got ${describeValue(classifier.classify)}`,
      );
    if (typeof classifier.name !== "string" || classifier.name === "")
      throw new AgentError(
        `${option}.classifier.name must be a non-empty string; got ${describeValue(classifier.name)}`,
      );
    checkNumber(`${option}.classifier.timeoutMs`, classifier.timeoutMs, { min: 0, exclusive: true, infinity: true });
  }
  if (human !== undefined && human !== "pause" && human !== "deny" && typeof human !== "function")
    throw new AgentError(`${option}.human must be "pause", "deny" or a function; got ${describeValue(human)}`);
}

function checkRule(rule: unknown, index: number, option: string): asserts rule is ApprovalRule {
  if (!isRecord(rule)) throw new AgentError(`${option}.rules[${index}] must be an object; got ${describeValue(rule)}`);
  if (typeof rule.id !== "string" || rule.id === "")
    throw new AgentError(`${option}.rules[${index}].id must be a non-empty string; got ${describeValue(rule.id)}`);
  const name = `${option}.rules[${index}] (${JSON.stringify(rule.id)})`;
  for (const key of Object.keys(rule))
    if (!["id", "tool", "input", "action", "reason"].includes(key))
      throw new AgentError(`${name}: unknown field ${JSON.stringify(key)} (id, tool, input, action, reason)`);
  if (typeof rule.action !== "string" || !actions.has(rule.action))
    throw new AgentError(`${name}.action must be "allow", "deny" or "ask"; got ${describeValue(rule.action)}`);
  const tools: unknown[] = Array.isArray(rule.tool) ? rule.tool : [rule.tool];
  if (tools.length === 0 || tools.some((tool) => typeof tool !== "string" || tool === ""))
    throw new AgentError(`${name}.tool must be a tool name or a list of them; got ${describeValue(rule.tool)}`);
  if (rule.reason !== undefined && typeof rule.reason !== "string")
    throw new AgentError(`${name}.reason must be a string; got ${describeValue(rule.reason)}`);
  if (rule.input === undefined) return;
  if (!isRecord(rule.input)) throw new AgentError(`${name}.input must be an object; got ${describeValue(rule.input)}`);
  for (const [property, matcher] of Object.entries(rule.input)) checkMatcher(matcher, `${name}.input.${property}`);
}

function checkMatcher(matcher: unknown, field: string): void {
  if (!isRecord(matcher)) throw new AgentError(`${field} must be an object; got ${describeValue(matcher)}`);
  const kinds = Object.keys(matcher);
  if (kinds.length !== 1 || !matchers.has(kinds[0]!))
    throw new AgentError(
      `${field} must have exactly one of glob, prefix, equals, regex; got ${kinds.map((kind) => JSON.stringify(kind)).join(", ") || "none"}`,
    );
  const kind = kinds[0]!;
  const value = matcher[kind];
  if (kind === "equals") {
    if (!isJson(value, 0)) throw new AgentError(`${field}.equals must be a JSON value; got ${describeValue(value)}`);
    return;
  }
  if (kind === "regex") {
    if (typeof value !== "string") throw new AgentError(`${field}.regex must be a string; got ${describeValue(value)}`);
    const problem = regexProblem(value);
    if (problem !== undefined) throw new AgentError(`${field}.regex ${problem}`);
    return;
  }
  const list: unknown[] = Array.isArray(value) ? value : [value];
  if (list.length === 0 || list.some((entry) => typeof entry !== "string" || entry === ""))
    throw new AgentError(`${field}.${kind} must be a non-empty string or a list of them; got ${describeValue(value)}`);
  if (kind === "glob")
    for (const pattern of list as string[]) {
      const problem = globProblem(pattern);
      if (problem !== undefined) throw new AgentError(`${field}.glob ${problem}`);
    }
}

function isJson(value: unknown, depth: number): boolean {
  if (depth > 64) return false;
  if (value === null || typeof value === "string" || typeof value === "boolean") return true;
  if (typeof value === "number") return Number.isFinite(value);
  if (Array.isArray(value)) return value.every((entry) => isJson(entry, depth + 1));
  return isRecord(value) && Object.values(value).every((entry) => isJson(entry, depth + 1));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
