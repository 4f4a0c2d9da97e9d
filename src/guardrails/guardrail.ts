import { AgentError } from "../errors.ts";
import { checkBoolean, checkChoice, checkNumber } from "../numeric-options.ts";
import type { GuardrailVerdict, Session, ToolCallMessage, ToolResultMessage } from "../session.ts";

export type { GuardrailVerdict } from "../session.ts";

/** What a guardrail checks: a user's input, an agent's final answer, a tool call's input, a tool's result. */
export type GuardrailKind = "input" | "output" | "toolInput" | "toolOutput";

/**
 * What a guardrail is asked about. `text`: the input's or the answer's text (as redacted by the
 * guardrails before it), a tool call's input as JSON, a tool result's output as text.
 */
export type GuardrailInput = {
  kind: GuardrailKind;
  text?: string;
  toolCall?: ToolCallMessage;
  result?: ToolResultMessage;
  session: Session;
  agent?: string;
};

/**
 * A check of what goes into and out of a run. `check` answers with a verdict; a `check` that throws
 * (or answers something else) blocks, unless `failOpen: true` lets the text through.
 *
 * - `mode` (input guardrails): `"before"` (default) checks before the model is called;
 *   `"parallel"` checks while the model is called: no tool starts until it settles, and a block
 *   aborts the model call.
 * - `holdBack` (output guardrails, when streaming): `"answer"` shows nothing of an answer before
 *   the output guardrails passed it; `"sentence"` shows it a sentence at a time, each once this
 *   guardrail passed the answer up to it. Without hold-back text streams as it comes, and a block
 *   emits `text-retract` for what was shown.
 * - `maxRetries`: how many `retry` verdicts in a row this guardrail may give before the answer is
 *   blocked (an integer >= 0, default 2).
 */
export type Guardrail = {
  name: string;
  check: (input: GuardrailInput) => GuardrailVerdict | Promise<GuardrailVerdict>;
  mode?: "before" | "parallel";
  failOpen?: boolean;
  holdBack?: "answer" | "sentence";
  maxRetries?: number;
};

/** The guardrails of an agent or a run, by what they check; run-level ones apply to every agent. */
export type Guardrails = {
  input?: readonly Guardrail[];
  output?: readonly Guardrail[];
  toolInput?: readonly Guardrail[];
  toolOutput?: readonly Guardrail[];
};

/** Every guardrail's answer, as an event: `message` is a block's message or a retry's feedback. */
export type GuardrailEvent = {
  type: "guardrail";
  name: string;
  kind: GuardrailKind;
  action: GuardrailVerdict["action"];
  message?: string;
};

export const guardrailKinds: readonly GuardrailKind[] = ["input", "output", "toolInput", "toolOutput"];

/** How many `retry` verdicts a guardrail may give in a row when it does not say. */
export const defaultMaxRetries = 2;

/** Checks a `guardrails` option where it enters; throws an `AgentError` naming the problem. */
export function checkGuardrails(guardrails: Guardrails | undefined, option = "guardrails"): void {
  if (guardrails === undefined) return;
  if (typeof guardrails !== "object" || guardrails === null || Array.isArray(guardrails))
    throw new AgentError(`${option} must be an object { input?, output?, toolInput?, toolOutput? }`);
  for (const key of Object.keys(guardrails))
    if (!guardrailKinds.includes(key as GuardrailKind))
      throw new AgentError(`${option}.${key}: unknown kind (use input, output, toolInput or toolOutput)`);
  for (const kind of guardrailKinds) {
    const list = guardrails[kind];
    if (list === undefined) continue;
    if (!Array.isArray(list)) throw new AgentError(`${option}.${kind} must be an array of guardrails`);
    list.forEach((guardrail: Guardrail, index) => checkGuardrail(guardrail, `${option}.${kind}[${index}]`));
  }
}

function checkGuardrail(guardrail: Guardrail, where: string): void {
  if (typeof guardrail !== "object" || guardrail === null) throw new AgentError(`${where} must be a guardrail object`);
  if (typeof guardrail.name !== "string" || guardrail.name === "")
    throw new AgentError(`${where}.name must be a non-empty string`);
  if (typeof guardrail.check !== "function") throw new AgentError(`${where}.check must be a function`);
  checkChoice(`${where}.mode`, guardrail.mode, ["before", "parallel"]);
  checkChoice(`${where}.holdBack`, guardrail.holdBack, ["answer", "sentence"]);
  checkBoolean(`${where}.failOpen`, guardrail.failOpen);
  checkNumber(`${where}.maxRetries`, guardrail.maxRetries, { min: 0, integer: true });
}

/** The guardrails of several sets, kind by kind, in order (run-level ones first, then the agent's). */
export function mergeGuardrails(...sets: readonly (Guardrails | undefined)[]): Guardrails | undefined {
  const merged: Guardrails = {};
  let any = false;
  for (const kind of guardrailKinds) {
    const list = sets.flatMap((set) => set?.[kind] ?? []);
    if (list.length === 0) continue;
    merged[kind] = list;
    any = true;
  }
  return any ? merged : undefined;
}
