import { AgentError, TimeoutError, isMaxIterationsError } from "../errors.ts";
import { checkNumber, clampDelay } from "../numeric-options.ts";
import { notForPrograms } from "../tools/code-mode/code-mode-option.ts";
import type { AgentEvent } from "../loop/events.ts";
import { runStream, type RunStream } from "../loop/event-iterator.ts";
import { agentLoop } from "../loop/loop.ts";
import { checkLoopOptions, type AgentLoopOptions } from "../loop/loop-options.ts";
import { markOwnTool } from "../tools/approval-setup.ts";
import type { AgentHooks } from "../loop/hooks.ts";
import { isModelMessage, type Message, type Session } from "../session.ts";
import type { Tool } from "../tools/tool.ts";
import { activeAgent, agentGraph, earlierHandoff, type ActiveAgent, type AgentNode } from "./agent-graph.ts";
import type { AgentDefinition } from "./agent-types.ts";
import { createRunLedger } from "./run-ledger.ts";
import { createTurnLimits } from "./turn-limits.ts";
import { historyName, historyView, type SummaryHandoffOutput } from "./handoff.ts";
import { summarizeMessages } from "../loop/context-strategies.ts";
import { parentSpending } from "../loop/subagent.ts";
import { mergeGuardrails, type Guardrails } from "../guardrails/guardrail.ts";

/** Run options of `runAgent`: today's run options, plus how many handoffs one call may follow. */
export type RunAgentOptions = Omit<AgentLoopOptions, "onEvent" | "agent"> & {
  /** At most this many handoffs in one call (default 10); one more throws `HandoffLimitError`. */
  maxHandoffs?: number;
  /**
   * At most this many model calls in this call, all its agents together (default
   * `defaultMaxIterations`, 100); an agent's own `options.maxIterations` bounds that agent's calls
   * within the call. Reaching either throws `MaxIterationsError` naming the limit reached.
   */
  maxIterations?: number;
  onEvent?: (event: AgentRunEvent) => void;
};

type RunEnd = Extract<AgentEvent, { type: "run-end" }>;

/** The events of `streamAgent`: the loop's, and one `handoff` per handoff taken. */
export type AgentRunEvent =
  AgentEvent | { type: "handoff"; from: string; to: string; history: ReturnType<typeof historyName> };

/** `maxHandoffs` was reached; `session` is valid (every call answered) and can be run again. */
export class HandoffLimitError extends AgentError {
  override name = "HandoffLimitError";
  readonly session: Session;
  constructor(limit: number, session: Session) {
    super(`more than ${String(limit)} handoffs in one run (maxHandoffs)`);
    this.session = session;
  }
}

/**
 * Runs the session's active agent (read from the session: `agent` or the last handoff it took) and
 * follows its handoffs until an agent answers. Mutates and returns `session`.
 */
export async function runAgent(
  agent: AgentDefinition,
  session: Session,
  options: RunAgentOptions = {},
): Promise<Session> {
  return streamAgent(agent, session, options).result;
}

/** `runAgent` as a stream of events: one `run-start`, the agents' events and `handoff`s, one `run-end`. */
export function streamAgent(
  agent: AgentDefinition,
  session: Session,
  options: RunAgentOptions = {},
): RunStream<AgentRunEvent, Session> {
  const controller = new AbortController();
  const signal =
    options.signal === undefined ? controller.signal : AbortSignal.any([options.signal, controller.signal]);
  return runStream<AgentRunEvent, Session>(
    async (emit) => {
      const deadline = callDeadline(options.timeouts, controller);
      try {
        return await followHandoffs(agent, session, { ...options, signal, ...deadline.options }, emit);
      } finally {
        deadline.clear();
      }
    },
    () => controller.abort(),
    options.onEvent,
  );
}

/**
 * `timeouts.runMs` bounds the whole call, as `budget` and `maxIterations` do: one clock from the
 * call's start, shared by every agent of its handoffs (and by their subagents, whose signal is
 * the call's), not a fresh `runMs` per agent. It aborts the call with a `TimeoutError` (each
 * agent's run then ends `timeout`); the agents' runs are given the other time limits only.
 */
function callDeadline(
  timeouts: RunAgentOptions["timeouts"],
  controller: AbortController,
): { options: Pick<RunAgentOptions, "timeouts">; clear: () => void } {
  const runMs = timeouts?.runMs;
  if (runMs === undefined) return { options: {}, clear: () => undefined };
  checkNumber("timeouts.runMs", runMs, { min: 0, exclusive: true, infinity: true });
  const started = performance.now();
  const timer =
    runMs === Number.POSITIVE_INFINITY
      ? undefined
      : setTimeout(
          () => controller.abort(new TimeoutError("runMs", performance.now() - started, { retryable: false })),
          clampDelay(runMs),
        );
  return {
    options: { timeouts: { ...timeouts, runMs: Number.POSITIVE_INFINITY } },
    clear: () => clearTimeout(timer),
  };
}

async function followHandoffs(
  root: AgentDefinition,
  session: Session,
  options: RunAgentOptions,
  emit: (event: AgentRunEvent) => void,
): Promise<Session> {
  const maxHandoffs = options.maxHandoffs ?? 10;
  if (!(Number.isInteger(maxHandoffs) && maxHandoffs >= 0))
    throw new AgentError(`maxHandoffs: expected an integer >= 0, got ${String(maxHandoffs)}`);
  // The call's budget is not any agent's run option: it is checked here, where it enters.
  checkLoopOptions(
    {
      ...pickDefined(options, ["budget", "parentBudget"]),
      ...pickDefined({ prices: options.prices ?? root.options.prices }, ["prices"]),
    },
    [],
  );
  const graph = agentGraph(root);
  let active = activeAgent(graph, root, session);
  emit({ type: "run-start", agentName: active.node.agent.name });
  // One budget and one run-end for the whole call, whichever agents ran in it.
  const ledger = createRunLedger(options);
  const limits = createTurnLimits(options.maxIterations);
  // The call's one run-end, for an error of the call's own (not one an agent's run ended with).
  const closed = (error: Error, outcome: RunEnd["outcome"]): Error => {
    emit(ledger.close({ type: "run-end", outcome, error: error.message, errorType: error.name }));
    return error;
  };
  let taken = 0;
  for (;;) {
    let end: RunEnd = { type: "run-end", outcome: "done" };
    const name = active.node.agent.name;
    const {
      maxHandoffs: _limit,
      onEvent: _listener,
      budget: _budget,
      parentBudget: _parentBudget,
      ...runOptions
    } = options;
    const overdrawn = ledger.overdrawn(session);
    if (overdrawn !== undefined) throw closed(overdrawn, "max-iterations");
    try {
      await agentLoop(
        active.node.agent.invokeModel,
        [...active.node.agent.tools, ...handoffTools(active.node)],
        session,
        {
          ...active.node.agent.options,
          ...runOptions,
          parentBudget: ledger.budget,
          maxIterations: limits.next(active.node.agent),
          name,
          agent: name,
          // Run-level guardrails apply to every agent, before the agent's own.
          ...guardrailsOf(options.guardrails, active.node.agent, taken > 0),
          hooks: agentHooks(active, { ...active.node.agent.options.hooks, ...options.hooks }),
          // A handoff ends this agent's loop once every call of its response is answered.
          stopWhen: async (state) =>
            activeAgent(graph, root, state.session).node !== active.node || (await options.stopWhen?.(state)) === true,
          onEvent: (event) => {
            if (event.type === "turn-start") limits.counted(name);
            if (event.type === "run-end") {
              end = event;
              ledger.add(event);
            } else if (event.type !== "run-start") emit(event);
          },
        },
      );
    } catch (error) {
      const reached = isMaxIterationsError(error) ? limits.reached(error, active.node.agent) : error;
      emit(ledger.close(reached === error ? end : { ...end, error: (reached as Error).message }));
      throw reached;
    }
    const next = activeAgent(graph, root, session);
    // The call's time ran out (or it was aborted): no handoff is followed after that.
    if (next.node === active.node || options.signal?.aborted === true) {
      emit(ledger.close(end));
      return session;
    }
    taken++;
    if (taken > maxHandoffs) throw closed(new HandoffLimitError(maxHandoffs, session), "error");
    const handoff = next.since!.handoff;
    emit({ type: "handoff", from: name, to: next.node.agent.name, history: historyName(handoff.history) });
    try {
      await handoff.onHandoff?.({ session, from: name, to: next.node.agent.name });
    } catch (error) {
      emit(ledger.close({ type: "run-end", outcome: "error", error: String(error) }));
      throw error;
    }
    active = next;
  }
}

// A handoff's target checks the input it receives with its own input guardrails: the run-level
// ones already checked it, in this call's first agent.
function guardrailsOf(
  runLevel: Guardrails | undefined,
  agent: AgentDefinition,
  afterHandoff: boolean,
): { guardrails?: Guardrails } {
  const shared = afterHandoff && runLevel?.input !== undefined ? { ...runLevel, input: [] } : runLevel;
  const guardrails = mergeGuardrails(shared, agent.options.guardrails, agent.guardrails);
  return guardrails === undefined ? {} : { guardrails };
}

// One tool per handoff: its result records the handoff in the session. It never starts before the
// response is complete, so it sees every call of its response and can refuse a second handoff.
function handoffTools(node: AgentNode): Tool[] {
  // A handoff changes who answers: a program may never call one.
  return [...node.handoffs.values()]
    .map((entry) =>
      markOwnTool<Tool>({
        name: entry.toolName,
        description: entry.description,
        input_schema: { type: "object", properties: {} },
        eager: false,
        handler: async (_input, context) => {
          const earlier = earlierHandoff(context.session.messages, context.id, node);
          if (earlier !== undefined)
            throw new Error(
              `not transferred: ${earlier} was called first in this response, and one handoff is taken per response`,
            );
          const message = `Transferred to ${entry.agent.name}.`;
          if (entry.history !== "summary") return message;
          // Written once, here: the result keeps it for every later call and for a resumed session.
          const before = messagesBeforeResponse(context.session.messages, context.id).filter(
            (item) => !("role" in item && item.role === "system"),
          );
          // The summarizer's call is the run's: it counts against the budget and in the metrics (on
          // this result's `subagentUsage`), and its events reach listeners as this call's updates.
          const written = await summarizeMessages(entry.summarizer ?? node.agent.invokeModel, before, {
            ...parentSpending(context, {}),
            signal: context.signal,
            onEvent: (event) => context.update(event),
          });
          const output: SummaryHandoffOutput = { message, ...written };
          return output;
        },
      }),
    )
    .map((handoff) => notForPrograms(handoff));
}

// The messages before the model response that holds call `id`.
function messagesBeforeResponse(messages: readonly Message[], id: string): Message[] {
  let start = messages.findIndex((message) => "type" in message && message.type === "tool_call" && message.id === id);
  while (start > 0 && isModelMessage(messages[start - 1]!)) start--;
  return messages.slice(0, Math.max(start, 0));
}

// The active agent's model sees its own system prompt, and of what came before its handoff what the
// handoff's history mode keeps.
function agentHooks(active: ActiveAgent, hooks: AgentHooks): AgentHooks {
  const { agent } = active.node;
  return {
    ...hooks,
    beforeModelCall: async (input) => {
      const override = await hooks.beforeModelCall?.(input);
      const messages = override?.messages ?? input.session.messages;
      return { ...override, messages: agentView(messages, agent.systemPrompt, active) };
    },
  };
}

function agentView(messages: Message[], systemPrompt: string, active: ActiveAgent): Message[] {
  const rest =
    messages[0] !== undefined && "role" in messages[0] && messages[0].role === "system" ? messages.slice(1) : messages;
  const system: Message = { role: "system", content: systemPrompt };
  if (active.since === undefined) return [system, ...rest];
  const { resultId, handoff } = active.since;
  const split = rest.findIndex(
    (message) => "type" in message && message.type === "tool_result" && message.id === resultId,
  );
  if (split === -1) return [system, ...rest];
  // The handoff's own call and result stay when history keeps tools; `no-tools` drops them with the rest.
  return [system, ...historyView(rest.slice(0, split + 1), handoff.history), ...rest.slice(split + 1)];
}

function pickDefined<T extends object, K extends keyof T>(source: T, keys: readonly K[]): Partial<Pick<T, K>> {
  const picked: Partial<Pick<T, K>> = {};
  for (const key of keys) if (source[key] !== undefined) picked[key] = source[key];
  return picked;
}
