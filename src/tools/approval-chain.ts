import { describeError, describeValue } from "../errors.ts";
import { clampDelay } from "../numeric-options.ts";
import { costOf, priceOf, type ModelPrice } from "../model/cost.ts";
import type { BudgetCharge, BudgetLedger } from "../model/budget.ts";
import {
  notifySessionChange,
  type BudgetOverrun,
  type ClassifierDecision,
  type ConsultedLink,
  type DecidedBy,
  type JsonObject,
  type ToolCallMessage,
  type Usage,
} from "../session.ts";
import type { ToolSchema } from "../shared/tool-schema.ts";
import type { ApprovalClassifier, ApprovalRequest } from "./approval-policy.ts";
import { isOwnTool, requireApprovalRule, type ApprovalChain } from "./approval-setup.ts";
import type { ExecutorSetup, ToolCallRun } from "./executor-setup.ts";
import type { PolicyMatch } from "./match-policy.ts";
import type { ToolDefinition } from "./tool.ts";

/** What the chain decided: run the call, answer it denied, or wait for a human (with the links asked before). */
export type ChainOutcome =
  | { readonly type: "approved" }
  | { readonly type: "denied" }
  | { readonly type: "aborted" }
  | { readonly type: "pending"; readonly consulted: ConsultedLink[] };

/**
 * Takes a call through the links of the chain after the `beforeToolCall` hook: the rules (with a
 * tool's `requireApproval` as an `ask` rule), then the classifier, then the human. Records the
 * decision on the call (an `update` with reason `approval`, before the handler runs) and reports
 * it (`tool-approval`). `askedByHook`: the hook asked for a human (an allow cannot skip them).
 * `earlier`: the links consulted when the call last waited for a human (a paused run's): they are
 * kept; a rule's `ask` among them still sends the call to the human, and a classifier that
 * answered then is not asked again.
 */
export async function runApprovalChain(
  run: ToolCallRun,
  definition: ToolDefinition | undefined,
  askedByHook: boolean,
  earlier?: readonly ConsultedLink[],
): Promise<ChainOutcome> {
  const { call, setup } = run;
  const chain = setup.approvals;
  const consulted: ConsultedLink[] = earlier === undefined ? [] : [...earlier];
  const humanDecides = askedByHook || consulted.some((link) => link.by === "rule" && link.action === "ask");
  const own = definition !== undefined && isOwnTool(definition);
  let match = chain?.rules.match(call.name, call.input, own);
  // `requireApproval` is an ask: a deny still wins, an allow cannot skip the human.
  if (definition?.requireApproval === true && (match === undefined || match.action === "allow"))
    match = requireApprovalRule;
  if (match?.action === "deny" || (match?.action === "allow" && !humanDecides)) {
    const status = match.action === "deny" ? "denied" : "approved";
    recordDecision(run, status, ruleLink(match), consulted);
    return status === "denied" ? denied : approved;
  }
  if (match?.action === "ask") {
    const rule = match.rule;
    if (!consulted.some((link) => link.by === "rule" && link.rule === rule)) consulted.push(ruleLink(match));
  } else if (!humanDecides) {
    // Without a policy (or for the loop's own tools) a call no rule asks about runs as it always did.
    if (chain === undefined || own) return approved;
    if (chain.classifier !== undefined && !consulted.some((link) => link.by === "classifier")) {
      const verdict = await askClassifier(run, chain.classifier, definition);
      if (verdict === undefined) return aborted;
      if (verdict.decision !== "unsure") {
        const status = verdict.decision === "allow" ? "approved" : "denied";
        recordDecision(run, status, verdict, consulted);
        return status === "denied" ? denied : approved;
      }
      consulted.push(verdict);
    }
  }
  return await askHuman(run, chain?.human ?? "pause", definition, consulted);
}

/** How a rule's decision is recorded. */
export function ruleLink(match: PolicyMatch): Extract<DecidedBy, { by: "rule" }> {
  return match.reason === undefined
    ? { by: "rule", rule: match.rule, action: match.action }
    : { by: "rule", rule: match.rule, action: match.action, reason: match.reason };
}

const approved: ChainOutcome = { type: "approved" };
const denied: ChainOutcome = { type: "denied" };
const aborted: ChainOutcome = { type: "aborted" };

async function askHuman(
  run: ToolCallRun,
  human: ApprovalChain["human"],
  definition: ToolDefinition | undefined,
  consulted: ConsultedLink[],
): Promise<ChainOutcome> {
  const { call, abortRace, signal } = run;
  if (human === "pause") return { type: "pending", consulted };
  if (human === "deny") {
    const asked = consulted.find((link) => link.by === "rule");
    const reason = `no one is there to approve this call (${
      asked === undefined
        ? `no rule allows ${call.name}`
        : `rule ${JSON.stringify(asked.rule)} asks a human${asked.reason === undefined ? "" : `: ${asked.reason}`}`
    })`;
    recordDecision(run, "denied", { by: "policy", reason }, consulted);
    return denied;
  }
  let answer: unknown;
  try {
    const request = approvalRequest(run, definition);
    if (consulted.length > 0) request.consulted = [...consulted];
    answer = await abortRace.race(Promise.resolve(human(request)));
  } catch (error) {
    if (signal.aborted) return aborted;
    recordDecision(run, "denied", { by: "policy", reason: `asking failed: ${describeError(error)}` }, consulted);
    return denied;
  }
  const {
    approved: yes,
    reason,
    by,
  } = (typeof answer === "object" && answer !== null ? answer : {}) as Record<string, unknown>;
  if (typeof yes !== "boolean") {
    const problem = `the human's answer was not { approved: true or false }: ${describeValue(answer)}`;
    recordDecision(run, "denied", { by: "policy", reason: problem }, consulted);
    return denied;
  }
  const decidedBy: DecidedBy = { by: "human" };
  if (typeof by === "string") decidedBy.user = by;
  if (typeof reason === "string") decidedBy.reason = bounded(reason);
  recordDecision(run, yes ? "approved" : "denied", decidedBy, consulted);
  return yes ? approved : denied;
}

/** What a classifier and a human are shown of a call. */
function approvalRequest(
  { call, setup, signal, caller }: ToolCallRun,
  definition: ToolDefinition | undefined,
  requestSignal: AbortSignal = signal,
): ApprovalRequest {
  const request: ApprovalRequest = {
    call,
    tool: shownTool(call, definition),
    session: setup.session,
    signal: requestSignal,
  };
  if (setup.agentName !== undefined) request.agent = setup.agentName;
  if (caller !== undefined) request.caller = caller;
  return request;
}

function shownTool(call: ToolCallMessage, definition: ToolDefinition | undefined): ToolSchema {
  if (definition === undefined) return { name: call.name, description: "", input_schema: { type: "object" } };
  return { name: definition.name, description: definition.description, input_schema: definition.input_schema };
}

/** The default wait for a classifier's verdict (ms). */
export const defaultClassifierTimeoutMs = 60_000;

/**
 * Asks the classifier, within its time limit. Anything but a well-formed `allow` or `deny` is
 * `unsure` (a throw, a timeout, another answer: with `error`). Undefined when the run was aborted.
 * What it spent counts against the run's budget, priced with the run's prices.
 */
async function askClassifier(
  run: ToolCallRun,
  classifier: ApprovalClassifier,
  definition: ToolDefinition | undefined,
): Promise<ClassifierDecision | undefined> {
  const { signal, abortRace, setup, call } = run;
  const { name } = classifier;
  // A verdict is a model call the run pays for: none is bought once the budget is used up.
  const overrun = setup.spending?.ledger.exhausted();
  if (overrun !== undefined)
    return {
      by: "classifier",
      name,
      decision: "unsure",
      reason: "not asked: the run's budget is used up",
      error: `the budget is used up (${describeOverrun(overrun)}): the classifier was not asked`,
    };
  const limit = classifier.timeoutMs ?? defaultClassifierTimeoutMs;
  const controller = new AbortController();
  const follow = (): void => controller.abort(signal.reason);
  signal.addEventListener("abort", follow, { once: true });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<"timeout">((resolve) => {
    if (limit === Number.POSITIVE_INFINITY) return;
    timer = setTimeout(() => {
      controller.abort(new Error("timed out"));
      resolve("timeout");
    }, clampDelay(limit));
  });
  let answer: unknown;
  try {
    answer = await abortRace.race(
      Promise.race([
        Promise.resolve(classifier.classify(approvalRequest(run, definition, controller.signal))),
        timedOut,
      ]),
    );
  } catch (error) {
    if (signal.aborted) return undefined;
    return { by: "classifier", name, decision: "unsure", reason: "the classifier failed", error: describeError(error) };
  } finally {
    clearTimeout(timer);
    signal.removeEventListener("abort", follow);
  }
  if (answer === "timeout")
    return {
      by: "classifier",
      name,
      decision: "unsure",
      reason: "no verdict in time",
      error: `no verdict within ${limit} ms`,
    };
  let decision: ClassifierDecision;
  try {
    decision = readVerdict(name, answer);
  } catch (error) {
    // An answer whose reading throws (a getter, a proxy) is no verdict either.
    return {
      by: "classifier",
      name,
      decision: "unsure",
      reason: "the classifier's answer was not a verdict",
      error: describeError(error),
    };
  }
  if (decision.usage !== undefined) charge(setup, call.id, decision, decision.usage);
  return decision;
}

// What the classifier spent counts in the run's budget and, on the call's result, in its metrics;
// its cost is priced as the run prices its own calls.
function charge(setup: ExecutorSetup, id: string, decision: ClassifierDecision, usage: Usage): void {
  const spending = setup.spending;
  if (spending === undefined) return;
  let prices: Readonly<Record<string, ModelPrice>> | undefined;
  for (
    let ledger: BudgetLedger | undefined = spending.ledger;
    ledger !== undefined && prices === undefined;
    ledger = ledger.within
  )
    prices = ledger.prices;
  const price = prices === undefined ? undefined : priceOf(prices, decision.model);
  if (price !== undefined) decision.costUsd = costOf(usage, price);
  const spent: BudgetCharge = { usage };
  if (decision.model !== undefined) spent.model = decision.model;
  spending.ledger.charge(spent);
  spending.record(id, spent);
}

// A verdict as recorded: checked field by field; a malformed one is `unsure`, keeping what it spent.
function readVerdict(name: string, answer: unknown): ClassifierDecision {
  const fields = (typeof answer === "object" && answer !== null ? answer : {}) as Record<string, unknown>;
  const decision: ClassifierDecision = { by: "classifier", name, decision: "unsure", reason: "" };
  const usage = readUsage(fields.usage);
  if (usage !== undefined) decision.usage = usage;
  if (typeof fields.model === "string") decision.model = bounded(fields.model);
  const { decision: verdict, reason, confidence } = fields;
  if ((verdict !== "allow" && verdict !== "deny" && verdict !== "unsure") || typeof reason !== "string") {
    decision.reason = "the classifier's answer was not a verdict";
    decision.error = `expected { decision: "allow" | "deny" | "unsure", reason: string }; got ${describeValue(answer)}`;
    return decision;
  }
  decision.decision = verdict;
  decision.reason = bounded(reason);
  if (verdict === "unsure" && typeof fields.error === "string") decision.error = bounded(fields.error);
  if (typeof confidence === "number" && confidence >= 0 && confidence <= 1) decision.confidence = confidence;
  return decision;
}

function describeOverrun({ budget, spent }: BudgetOverrun): string {
  return budget.usd !== undefined && spent.usd !== undefined
    ? `${spent.usd.toFixed(4)} of ${budget.usd} USD`
    : `${spent.tokens} of ${budget.tokens ?? 0} tokens`;
}

function readUsage(value: unknown): Usage | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const fields = value as Record<string, unknown>;
  const count = (key: string): number | undefined => {
    const number = fields[key];
    return typeof number === "number" && Number.isInteger(number) && number >= 0 ? number : undefined;
  };
  const inputTokens = count("inputTokens");
  const outputTokens = count("outputTokens");
  if (inputTokens === undefined || outputTokens === undefined) return undefined;
  const usage: Usage = { inputTokens, outputTokens };
  for (const key of ["cacheReadTokens", "cacheWriteTokens", "reasoningTokens"] as const) {
    const number = count(key);
    if (number !== undefined) usage[key] = number;
  }
  return usage;
}

/** The longest reason recorded (characters): a classifier's text is untrusted. */
const maxReasonChars = 2_000;

function bounded(text: string): string {
  return text.length > maxReasonChars ? `${text.slice(0, maxReasonChars)}…` : text;
}

/**
 * Records a decision on its call: the status, the input it holds for (a copy), who decided, the
 * links asked before, the time; as an `update` (reason `approval`) the store writes before the
 * handler runs, and a `tool-approval` event.
 */
export function recordDecision(
  { setup, call, caller }: ToolCallRun,
  status: "approved" | "denied",
  decidedBy: DecidedBy,
  consulted: readonly ConsultedLink[],
): void {
  const reason = "reason" in decidedBy ? decidedBy.reason : undefined;
  call.approval = {
    status,
    ...(reason === undefined ? {} : { reason }),
    input: JSON.parse(JSON.stringify(call.input)) as JsonObject,
    decidedBy,
    ...(consulted.length === 0 ? {} : { consulted: [...consulted] }),
    at: setup.approvals?.now() ?? new Date().toISOString(),
  };
  const { session } = setup;
  const index = session.messages.lastIndexOf(call);
  if (index !== -1) notifySessionChange(session, { type: "update", index, message: call, reason: "approval" });
  setup.onEvent?.({
    type: "tool-approval",
    id: call.id,
    name: call.name,
    status,
    decidedBy,
    ...(consulted.length === 0 ? {} : { consulted: [...consulted] }),
    ...(caller === undefined ? {} : { caller }),
  });
}
