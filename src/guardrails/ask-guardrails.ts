import { describeError } from "../errors.ts";
import { notifySessionChange, type GuardrailRecord, type GuardrailVerdict } from "../session.ts";
import { defaultMaxRetries, type Guardrail, type GuardrailEvent, type GuardrailInput } from "./guardrail.ts";

/**
 * What a list of guardrails decided about one text: let it through (`redacted` when one replaced
 * it: `text` is what goes on), block it, or send feedback to the model (`retry`).
 */
export type GuardrailDecision =
  | { action: "allow"; text: string | undefined; redacted?: { name: string; replacement: string } }
  | { action: "block"; name: string; message: string }
  | { action: "retry"; name: string; feedback: string; maxRetries: number };

/** Where the answers go: the run's events, and the session's listeners (a store writes a `guardrail` entry). */
export type GuardrailReport = {
  readonly emit: (event: GuardrailEvent) => void;
  /** Races each check against the run's abort (rejects with the abort reason). */
  readonly race: <T>(promise: Promise<T>) => Promise<T>;
  /** The run's signal: a check that fails once it aborted failed because of it. */
  readonly signal: AbortSignal;
  readonly agent: string | undefined;
};

/**
 * Asks the guardrails in order, each about the text as the ones before it left it: the first
 * `block` or `retry` decides; `redact`s chain. A guardrail that throws or answers no verdict blocks
 * (fail closed), or allows with `failOpen: true`. Every answer is a `guardrail` event and a
 * `guardrail` session change; `unsaved`: the text is not in the session, so a block's record keeps
 * it (the audit trail: the only place the original stays). Rejects only with the run's abort.
 */
export async function askGuardrails(
  guardrails: readonly Guardrail[],
  input: GuardrailInput,
  report: GuardrailReport,
  where: { callId?: string; unsaved?: boolean } = {},
): Promise<GuardrailDecision> {
  let text = input.text;
  let redacted: { name: string; replacement: string } | undefined;
  for (const guardrail of guardrails) {
    const asked: GuardrailInput = text === input.text || text === undefined ? input : { ...input, text };
    const verdict = await verdictOf(guardrail, asked, report);
    record(report, input, guardrail.name, verdict, {
      ...where,
      // What this guardrail saw: an earlier redaction never reaches the record.
      original: where.unsaved === true && verdict.action === "block" ? text : undefined,
    });
    switch (verdict.action) {
      case "allow":
        break;
      case "redact":
        text = verdict.replacement;
        redacted = { name: guardrail.name, replacement: verdict.replacement };
        break;
      case "block":
        return { action: "block", name: guardrail.name, message: verdict.message };
      case "retry":
        return {
          action: "retry",
          name: guardrail.name,
          feedback: verdict.feedback,
          maxRetries: guardrail.maxRetries ?? defaultMaxRetries,
        };
    }
  }
  return redacted === undefined ? { action: "allow", text } : { action: "allow", text, redacted };
}

// A guardrail's verdict; what it throws (the run's abort aside) or a malformed answer is its failure.
async function verdictOf(
  guardrail: Guardrail,
  input: GuardrailInput,
  report: GuardrailReport,
): Promise<GuardrailVerdict> {
  let answer: unknown;
  try {
    answer = await report.race(Promise.resolve().then(() => guardrail.check(input)));
  } catch (error) {
    if (report.signal.aborted) throw error;
    return failed(guardrail, describeError(error));
  }
  const problem = verdictProblem(answer);
  return problem === undefined ? (answer as GuardrailVerdict) : failed(guardrail, problem);
}

function failed(guardrail: Guardrail, error: string): GuardrailVerdict {
  // Fail closed: a guardrail that could not answer blocks, unless it says otherwise.
  return guardrail.failOpen === true
    ? { action: "allow" }
    : { action: "block", message: `the guardrail failed: ${error}` };
}

const textFields = new Map([
  ["block", "message"],
  ["redact", "replacement"],
  ["retry", "feedback"],
]);

function verdictProblem(answer: unknown): string | undefined {
  if (typeof answer !== "object" || answer === null) return "it answered no verdict";
  const verdict = answer as Record<string, unknown>;
  const action = String(verdict.action);
  if (action === "allow") return undefined;
  const field = textFields.get(action);
  if (field === undefined) return `it answered an unknown action ${JSON.stringify(action)}`;
  return typeof verdict[field] === "string" ? undefined : `its ${action} verdict has no string "${field}"`;
}

function record(
  report: GuardrailReport,
  input: GuardrailInput,
  name: string,
  verdict: GuardrailVerdict,
  { callId, original }: { callId?: string; original?: string | undefined },
): void {
  const message =
    verdict.action === "block" ? verdict.message : verdict.action === "retry" ? verdict.feedback : undefined;
  const event: GuardrailEvent = { type: "guardrail", name, kind: input.kind, action: verdict.action };
  if (message !== undefined) event.message = message;
  report.emit(event);
  const entry: GuardrailRecord = { name, kind: input.kind, action: verdict.action };
  if (message !== undefined) entry.message = message;
  if (report.agent !== undefined) entry.agent = report.agent;
  if (callId !== undefined) entry.callId = callId;
  if (original !== undefined) entry.original = original;
  notifySessionChange(input.session, { type: "guardrail", verdict: entry });
}
