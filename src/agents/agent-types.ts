import type { Guardrails } from "../guardrails/guardrail.ts";
import type { AgentLoopOptions } from "../loop/loop-options.ts";
import type { InvokeModel } from "../model/invoke-model.ts";
import type { Message, Session } from "../session.ts";
import type { ToolDefinition } from "../tools/tool.ts";

/** An agent: plain data plus functions, run by `runAgent`/`streamAgent`. */
export type AgentDefinition = {
  readonly kind: "agent";
  readonly name: string;
  readonly description: string | undefined;
  readonly systemPrompt: string;
  readonly invokeModel: InvokeModel;
  readonly tools: readonly ToolDefinition[];
  readonly handoffs: readonly Handoff[];
  /** This agent's guardrails: its input ones check the input it receives (a handoff's too), its output ones its answers. */
  readonly guardrails: Guardrails | undefined;
  readonly options: AgentLoopOptions;
};

/**
 * What the target of a handoff sees of the conversation before it: `full` (default), `no-tools`
 * (text only: tool calls, results and thinking dropped, for a provider that rejects another's
 * items), `{ lastTurns: n }` (from the n-th last user message on), `summary` (a summary written
 * once, at the handoff, by the summarizer `summarizeOlderTurns` uses; kept in the handoff's result),
 * or a function over the messages.
 */
export type HandoffHistory =
  "full" | "no-tools" | "summary" | { lastTurns: number } | ((messages: Message[]) => Message[]);

/** A handoff from the agent that lists it to `agent`, as the model sees it: one tool. */
export type Handoff = {
  readonly kind: "handoff";
  readonly agent: AgentDefinition;
  readonly toolName: string;
  readonly description: string;
  readonly history: HandoffHistory;
  readonly onHandoff: ((input: { session: Session; from: string; to: string }) => void | Promise<void>) | undefined;
  readonly returnTo: boolean;
  /** Writes the summary of a `summary` handoff (default: the calling agent's model). */
  readonly summarizer: InvokeModel | undefined;
};
