import { checkChoice, checkNumber } from "../numeric-options.ts";
import { pendingApprovals } from "../tools/approval.ts";
import { ApprovalPause } from "../tools/approval-pause.ts";
import {
  parentSpending,
  promptInputSchema,
  promptOf,
  subagentAnswer,
  subagentTool as loopSubagentTool,
  type SubagentToolOptions,
} from "../loop/subagent.ts";
import { forkSession, initSession, type JsonObject } from "../session.ts";
import type { Tool } from "../tools/tool.ts";
import { checkBackground, type BackgroundOption } from "../tools/background.ts";
import type { AgentDefinition } from "./agent-types.ts";
import { runAgent } from "./run-agent.ts";

/** How `subagentTool(agent, options)` offers an agent as a tool. */
export type AgentToolOptions = {
  /** The tool's name (default: the agent's name). */
  name?: string;
  /** The tool's description (default: the agent's description). */
  description?: string;
  /**
   * `"verbatim"`: the sub-agent's final answer becomes the run's answer. Once every call of the
   * response is answered, the parent's run ends with an assistant message holding that text,
   * without another model call that would paraphrase it. `"result"` (default): the parent's model
   * reads the answer as the call's result and goes on.
   */
  answer?: "verbatim" | "result";
  /** The input the parent's model gives (default: `{ prompt: string }`). */
  inputSchema?: JsonObject;
  /** The first user message of each run, from the input (default: `input.prompt`). */
  prompt?: (input: Record<string, unknown>) => string;
  /** At most this many handoffs in one call of the sub-agent (default 10, as `runAgent`'s). */
  maxHandoffs?: number;
  /** Calls run as background tasks: answered at once, the agent's answer delivered later (see `BackgroundOption`). */
  background?: BackgroundOption;
};

/**
 * An agent as a tool. `subagentTool(options)`: a model, prompt and tools given inline (see
 * `SubagentToolOptions`). `subagentTool(agent, options?)`: an agent made by `defineAgent`, run by
 * `runAgent` in a fresh session per call (following its own handoffs); with `answer: "verbatim"`
 * its final answer is the parent run's answer. Either way the final text comes back with the
 * images and files the sub-agent's tools returned as content parts, the inner run's events reach
 * the parent as `tool-execution-update`s, and a pause for approval inside pauses the parent's call.
 */
export function subagentTool(options: SubagentToolOptions): Tool<Record<string, unknown>>;
export function subagentTool(agent: AgentDefinition, options?: AgentToolOptions): Tool<Record<string, unknown>>;
export function subagentTool(
  first: SubagentToolOptions | AgentDefinition,
  options: AgentToolOptions = {},
): Tool<Record<string, unknown>> {
  if (!isAgent(first)) return loopSubagentTool(first);
  const agent = first;
  const prompt = options.prompt ?? promptOf;
  checkChoice("subagentTool answer", options.answer, ["verbatim", "result"]);
  checkNumber("subagentTool maxHandoffs", options.maxHandoffs, { min: 0, integer: true });
  checkBackground(options.name ?? agent.name, options.background);
  const definition: Tool<Record<string, unknown>> = {
    name: options.name ?? agent.name,
    description: options.description ?? agent.description ?? `Ask the ${agent.name} agent.`,
    input_schema: options.inputSchema ?? promptInputSchema,
    handler: async (input, context) => {
      // A copy of a paused session: the parent's stored record changes only through its own updates.
      const session =
        context.resume === undefined ? initSession(agent.systemPrompt, prompt(input)) : forkSession(context.resume);
      // The agent's own policy, else the parent's.
      const approvalPolicy = agent.options.approvalPolicy ?? context.approvalPolicy;
      await runAgent(agent, session, {
        ...parentSpending(context, agent.options),
        ...(approvalPolicy === undefined ? {} : { approvalPolicy }),
        signal: context.signal,
        ...(options.maxHandoffs === undefined ? {} : { maxHandoffs: options.maxHandoffs }),
        onEvent: (event) => context.update(event),
      });
      if (pendingApprovals(session).length > 0) throw new ApprovalPause(session);
      return subagentAnswer(session);
    },
  };
  if (options.answer === "verbatim") definition.answer = "verbatim";
  if (options.background !== undefined) definition.background = options.background;
  return definition;
}

function isAgent(value: SubagentToolOptions | AgentDefinition): value is AgentDefinition {
  return "kind" in value && value.kind === "agent";
}
