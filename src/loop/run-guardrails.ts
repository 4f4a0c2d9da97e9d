import type { GuardrailReport } from "../guardrails/ask-guardrails.ts";
import type { Guardrail, Guardrails } from "../guardrails/guardrail.ts";
import { toolGuardrails, type ToolGuardrails } from "../guardrails/tool-guardrails.ts";
import type { AbortRace } from "../shared/abort.ts";
import type { ToolHooks } from "../tools/tool-hooks.ts";
import type { AgentEvent } from "./events.ts";

/** A run's guardrails, read from its options once: by kind and mode, with where their answers go. */
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
};

/**
 * The run's guardrails (undefined when it has none), its tool hooks with the tool guardrails around
 * them, and the `toolOutput` guardrails for its background tasks' outcomes.
 */
export function readGuardrails(
  guardrails: Guardrails | undefined,
  hooks: ToolHooks | undefined,
  run: { emit: (event: AgentEvent) => void; abortRace: AbortRace; signal: AbortSignal; agent: string | undefined },
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
    },
    tools:
      toolInput.length === 0 && toolOutput.length === 0
        ? undefined
        : toolGuardrails(hooks, { toolInput, toolOutput }, report),
    // Background tasks' outcomes are checked apart (their verdicts keyed by the same call ids).
    taskOutput: toolOutput.length === 0 ? undefined : toolGuardrails(hooks, { toolInput: [], toolOutput }, report),
  };
}
