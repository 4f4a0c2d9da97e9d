import type { RunContext } from "./run-context.ts";
import type { ModelContext } from "../model/invoke-model.ts";
import type { BudgetLedger } from "../model/budget.ts";
import type { Session } from "../session.ts";
import type { ToolSchema } from "../tools/tool.ts";
import type { AgentHooks } from "./hooks.ts";
import { mergeSettings } from "../model/model-settings.ts";
import { sessionIdOf } from "../session.ts";
import { requestPrefixChange } from "./sent-prefix.ts";

/** What `invokeModel` is given for one call: the model's view of the run (see `modelView`). */
export type ModelView = { tools: ToolSchema[]; session: Session; context: ModelContext };

/** What the `beforeModelCall` hook answered for one call (`undefined`: it kept the defaults, or there is none). */
export type ModelCallChanges = Awaited<ReturnType<NonNullable<AgentHooks["beforeModelCall"]>>>;

/**
/**
 * The model's view of the run for one call, built fresh for every call (the first attempt, and
 * the retry after a context overflow once `makeRoom` shortened the session) from the session and
 * what the hook answered for that call: a new context (with the hook's settings, or none), the
 * tools, and the messages (the output instruction first, then the session's messages or the ones
 * the hook put in their place). The one place that builds it: two builds must never disagree.
 */
export function modelView(run: RunContext, iteration: number, changes: ModelCallChanges): ModelView {
  const { session } = run;
  const context: ModelContext =
    run.agentName === undefined
      ? { signal: run.signal, iteration }
      : { signal: run.signal, iteration, agentName: run.agentName };
  if (run.limited) withBudget(context, run.ledger);
  const { output } = run;
  if (output !== undefined) context.output = output.context;
  if (run.settings !== undefined || changes?.settings !== undefined)
    context.settings = mergeSettings(run.settings, changes?.settings);
  const sessionId = sessionIdOf(session);
  if (sessionId !== undefined) context.sessionId = sessionId;
  const tools = changes?.tools ?? run.offer.offered(session);
  const messages = changes?.messages ?? session.messages;
  const view: ModelView =
    output?.instruction !== undefined
      ? { tools, session: { messages: [output.instruction, ...messages] }, context }
      : { tools, session: messages === session.messages ? session : { messages }, context };
  // Only the `cache` event reports it: nothing to compare in a run nobody can hear.
  const { prefix } = run;
  if (prefix !== undefined) {
    prefix.change = requestPrefixChange(session, view.session.messages, {
      viaHook: changes?.messages !== undefined,
      offset: output?.instruction === undefined ? 0 : 1,
      fallback: prefix.changedBy,
    });
    prefix.changedBy = undefined;
  }
  return view;
}

/**
 * Gives `context` the run's budget, not enumerable: a context stays what it was to code that copies
 * or clones it (`structuredClone` refuses functions), and the loop carries it over by name.
 */
export function withBudget(context: ModelContext, budget: BudgetLedger | undefined): ModelContext {
  if (budget !== undefined) Object.defineProperty(context, "budget", { value: budget, enumerable: false });
  return context;
}
