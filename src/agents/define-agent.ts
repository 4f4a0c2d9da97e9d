import type { AgentLoopOptions } from "../loop/loop-options.ts";
import type { InvokeModel } from "../model/invoke-model.ts";
import { AgentError } from "../errors.ts";
import { toolNameProblem, toolSchemaProblem, type ToolDefinition } from "../tools/tool.ts";
import { checkGuardrails, type Guardrails } from "../guardrails/guardrail.ts";
import type { AgentDefinition, Handoff } from "./agent-types.ts";
import { handoff } from "./handoff.ts";

export type { AgentDefinition } from "./agent-types.ts";

/** What `defineAgent` takes: an agent's name, prompt, model and tools, and the agents it may hand off to. */
export type AgentSpec = {
  name: string;
  description?: string;
  systemPrompt: string;
  invokeModel: InvokeModel;
  tools?: readonly ToolDefinition[];
  /** Agents this one may hand the conversation to: an agent (default handoff) or `handoff(agent, {...})`. */
  handoffs?: readonly (AgentDefinition | Handoff)[];
  /**
   * This agent's guardrails (see `Guardrail`), applied after the run-level ones of `runAgent`: its
   * `input` ones check every new user message it receives, a handoff's included; its `output` ones
   * every final answer it gives; its tool ones its own tool calls.
   */
  guardrails?: Guardrails;
  /**
   * Run options of this agent's turns (compaction, hooks, retries…), as `agentLoop` takes them;
   * `runAgent`'s own options win over them. `maxIterations` bounds this agent's model calls within
   * one `runAgent` call (every time the conversation comes to it), under the call's own limit.
   */
  options?: AgentLoopOptions;
};

/** Defines an agent. Its name names its handoff tool (`transfer_to_<name>`), so it must be a tool-name-safe word. */
export function defineAgent(spec: AgentSpec): AgentDefinition {
  // The name becomes part of a tool name, which providers restrict to these characters.
  if (typeof spec.name !== "string" || !/^[A-Za-z0-9_-]{1,50}$/.test(spec.name))
    throw new TypeError(`agent name ${JSON.stringify(spec.name)}: use 1-50 letters, digits, _ or -`);
  checkSpec(spec);
  return {
    kind: "agent",
    name: spec.name,
    description: spec.description,
    systemPrompt: spec.systemPrompt,
    invokeModel: spec.invokeModel,
    tools: spec.tools ?? [],
    handoffs: (spec.handoffs ?? []).map((entry) => (entry.kind === "agent" ? handoff(entry) : entry)),
    guardrails: checkedGuardrails(spec.guardrails, spec.name),
    options: spec.options ?? {},
  };
}

function checkedGuardrails(guardrails: Guardrails | undefined, name: string): Guardrails | undefined {
  checkGuardrails(guardrails, `agent "${name}": guardrails`);
  return guardrails;
}

// The rest of what the agent is made of, checked here rather than at its first turn.
function checkSpec(spec: AgentSpec): void {
  const agent = `agent "${spec.name}"`;
  const given = spec as Partial<Record<keyof AgentSpec, unknown>>;
  if (typeof given.systemPrompt !== "string") throw new TypeError(`${agent}: systemPrompt must be a string`);
  if (given.description !== undefined && typeof given.description !== "string")
    throw new TypeError(`${agent}: description must be a string`);
  if (typeof given.invokeModel !== "function") throw new TypeError(`${agent}: invokeModel must be a function`);
  if (given.tools !== undefined && !Array.isArray(given.tools)) throw new TypeError(`${agent}: tools must be an array`);
  for (const definition of spec.tools ?? []) {
    const problem = toolNameProblem(definition.name, definition.description) ?? toolSchemaProblem(definition);
    if (problem !== undefined) throw new AgentError(`${agent}: ${problem}`);
  }
  if (given.handoffs !== undefined) {
    if (!Array.isArray(given.handoffs)) throw new TypeError(`${agent}: handoffs must be an array`);
    for (const entry of given.handoffs as unknown[]) {
      const kind = (entry as { kind?: unknown } | null)?.kind;
      if (kind !== "agent" && kind !== "handoff")
        throw new TypeError(`${agent}: each of handoffs must be an agent (defineAgent) or a handoff(agent, ...)`);
    }
  }
  if (given.options !== undefined && (typeof given.options !== "object" || given.options === null))
    throw new TypeError(`${agent}: options must be an object of run options`);
}
