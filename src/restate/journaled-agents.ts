import { CancelledError, type ObjectContext } from "@restatedev/restate-sdk";
import type { AgentDefinition, Handoff } from "../agents/agent-types.ts";
import { AbortError, describeError, isInstance } from "../errors.ts";
import type { Guardrails } from "../guardrails/guardrail.ts";
import type { InvokeModel } from "../model/invoke-model.ts";
import type { ToolDefinition, ToolHandlers } from "../tools/tool.ts";
import type { StepScheduler } from "./step-scheduler.ts";

import { journaledPolicy } from "./journaled-classifier.ts";

/** How one durable run journals what an agent does (see `journaledAgent`). */
export type AgentJournal = {
  ctx: ObjectContext;
  scheduler: StepScheduler;
  /** The model with each call one journaled step (`journaledModel`). */
  model: (invokeModel: InvokeModel) => InvokeModel;
  /** The tools and handlers with each call one journaled step, `toolTimeout` kept inside the step (`journaledTools`). */
  tools: (
    invokeModel: InvokeModel,
    tools: readonly ToolDefinition[],
    toolHandlers: ToolHandlers,
    toolTimeout: number | undefined,
  ) => { tools: ToolDefinition[]; toolHandlers: ToolHandlers };
  /** The guardrails with each check one journaled step (`journaledGuardrails`). */
  guardrails: (guardrails: Guardrails | undefined) => Guardrails | undefined;
};

/**
 * `root` and every agent it hands off to, with everything that is not deterministic a journaled
 * step, so that `runAgent` over the copy replays a durable run exactly: each agent's model calls,
 * tools and guardrails; each handoff's summarizer (a `summary` history is written by a model step,
 * never asked again on replay); each `onHandoff` (one step `handoff <from> to <to>`: it ran once,
 * what it threw is thrown again). The handoff tools themselves run outside steps: they only read
 * the session (and the summarizer's step), so a replay answers them the same.
 */
export function journaledAgent(root: AgentDefinition, journal: AgentJournal): AgentDefinition {
  const copies = new Map<AgentDefinition, AgentDefinition>();
  const copy = (agent: AgentDefinition): AgentDefinition => {
    const known = copies.get(agent);
    if (known !== undefined) return known;
    // The loop's own timers and retries would not replay the same: Restate keeps both (see `DurableLoopOptions`).
    const { toolTimeout, toolHandlers, guardrails, retry: _retry, eagerTools: _eager, ...options } = agent.options;
    const tools = journal.tools(agent.invokeModel, agent.tools, toolHandlers ?? {}, toolTimeout);
    const journaledGuardrails = journal.guardrails(guardrails);
    const approvalPolicy = journaledPolicy(journal.ctx, options.approvalPolicy, journal.scheduler);
    const handoffs: Handoff[] = [];
    const journaled: AgentDefinition = {
      ...agent,
      invokeModel: journal.model(agent.invokeModel),
      tools: tools.tools,
      guardrails: journal.guardrails(agent.guardrails),
      handoffs,
      options: {
        ...options,
        ...(toolHandlers === undefined ? {} : { toolHandlers: tools.toolHandlers }),
        ...(journaledGuardrails === undefined ? {} : { guardrails: journaledGuardrails }),
        ...(approvalPolicy === undefined ? {} : { approvalPolicy }),
      },
    };
    copies.set(agent, journaled);
    for (const entry of agent.handoffs) handoffs.push(journaledHandoff(entry, copy(entry.agent), journal));
    return journaled;
  };
  return copy(root);
}

/** What an `onHandoff` step stores in the journal: nothing, or what it threw (as text). */
type HandoffStep = { thrown?: string };

function journaledHandoff(entry: Handoff, agent: AgentDefinition, journal: AgentJournal): Handoff {
  const { onHandoff, summarizer } = entry;
  return {
    ...entry,
    agent,
    summarizer: summarizer === undefined ? undefined : journal.model(summarizer),
    onHandoff:
      onHandoff === undefined
        ? undefined
        : async (input) => {
            const step = journal.ctx.run<HandoffStep>(`handoff ${input.from} to ${input.to}`, async () => {
              try {
                await onHandoff(input);
                return {};
              } catch (error) {
                return { thrown: describeError(error) };
              }
            });
            let result: HandoffStep;
            try {
              result = await journal.scheduler.await(step);
            } catch (error) {
              if (isInstance(error, CancelledError)) throw new AbortError();
              throw error;
            }
            if (result.thrown !== undefined) throw new Error(result.thrown);
          },
  };
}
