import type { GuardrailReport } from "../guardrails/ask-guardrails.ts";
import type { Guardrail, Guardrails } from "../guardrails/guardrail.ts";
import { toolGuardrails, type ToolGuardrails } from "../guardrails/tool-guardrails.ts";
import type { AbortRace } from "../shared/abort.ts";
import type { ToolHooks } from "../tools/tool-hooks.ts";
import type { AgentEvent } from "./events.ts";
import { newInput } from "../guardrails/new-input.ts";
import type { Message, Session, UserMessage } from "../session.ts";

/**
 * A run's guardrails, read from its options once: by kind and mode, with where their answers go,
 * and what they keep between model calls. Made only for a run that has guardrails.
 */
export type RunGuardrails = {
  /** `input` guardrails in `before` mode (the default): asked before the model is called. */
  readonly input: readonly Guardrail[];
  /** `input` guardrails in `parallel` mode: asked while the model is called. */
  readonly parallelInput: readonly Guardrail[];
  readonly output: readonly Guardrail[];
  /** `output` guardrails with `holdBack: "sentence"`: asked as each sentence of an answer streams. */
  readonly sentence: readonly Guardrail[];
  /** How a streamed answer is held back: `answer` when any output guardrail asks for it, else `sentence` if any does. */
  readonly holdBack: "answer" | "sentence" | undefined;
  readonly report: GuardrailReport;
  /** User messages the input guardrails have yet to check: new at the start, then steering and follow-ups. */
  newInput: UserMessage[];
  /** `retry` verdicts in a row, by output guardrail, since an answer last passed. */
  readonly retries: Map<string, number>;
};

/** Adds a user message of the caller's (steering, a follow-up): the input guardrails check it before the next call. */
export function addInput(
  run: {
    readonly add: (message: Message) => void;
    readonly session: Session;
    readonly guardrails: RunGuardrails | undefined;
  },
  message: UserMessage,
): void {
  run.add(message);
  const { session, guardrails } = run;
  if (guardrails !== undefined) guardrails.newInput.push(session.messages[session.messages.length - 1] as UserMessage);
}

/**
 * The run's guardrails (undefined when it has none), its tool hooks with the tool guardrails around
 * them, and the tool guardrails for its background tasks (a rerun's input, an outcome).
 */
export function readGuardrails(
  guardrails: Guardrails | undefined,
  hooks: ToolHooks | undefined,
  run: {
    emit: (event: AgentEvent) => void;
    abortRace: AbortRace;
    signal: AbortSignal;
    agent: string | undefined;
    session: Session;
    /** Whose messages count as acted on (`newInput`): the run's `agent` option. */
    actor: string | undefined;
  },
): {
  guardrails: RunGuardrails | undefined;
  tools: ToolGuardrails | undefined;
  taskOutput: ToolGuardrails | undefined;
} {
  if (guardrails === undefined) return { guardrails: undefined, tools: undefined, taskOutput: undefined };
  const report: GuardrailReport = {
    emit: run.emit,
    race: (promise) => run.abortRace.race(promise),
    signal: run.signal,
    agent: run.agent,
  };
  const input = guardrails.input ?? [];
  const output = guardrails.output ?? [];
  const toolInput = guardrails.toolInput ?? [];
  const toolOutput = guardrails.toolOutput ?? [];
  const sentence = output.filter((guardrail) => guardrail.holdBack === "sentence");
  return {
    guardrails: {
      input: input.filter((guardrail) => guardrail.mode !== "parallel"),
      parallelInput: input.filter((guardrail) => guardrail.mode === "parallel"),
      output,
      sentence,
      holdBack: output.some((guardrail) => guardrail.holdBack === "answer")
        ? "answer"
        : sentence.length > 0
          ? "sentence"
          : undefined,
      report,
      newInput: guardrails.input === undefined ? [] : newInput(run.session.messages, run.actor),
      retries: new Map(),
    },
    tools:
      toolInput.length === 0 && toolOutput.length === 0
        ? undefined
        : toolGuardrails(hooks, { toolInput, toolOutput }, report),
    // Background tasks (a rerun's input, an outcome) are checked apart: their verdicts are keyed by
    // the same call ids as the running note's.
    taskOutput:
      toolInput.length === 0 && toolOutput.length === 0
        ? undefined
        : toolGuardrails(hooks, { toolInput, toolOutput }, report),
  };
}
