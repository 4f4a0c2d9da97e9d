import { CancelledError, TerminalError, type ObjectContext } from "@restatedev/restate-sdk";
import { describeError, isInstance } from "../errors.ts";
import { createBudgetLedger } from "../model/budget.ts";
import type { InvokeModel } from "../model/invoke-model.ts";
import { agentLoop, type AgentLoopOptions } from "../loop/loop.ts";
import type { AgentDefinition } from "../agents/agent-types.ts";
import { runAgent, type AgentRunEvent, type RunAgentOptions } from "../agents/run-agent.ts";
import { journaledAgent, type AgentJournal } from "./journaled-agents.ts";
import type { RunOutcome } from "../loop/events.ts";
import { extendSession, response, type JsonValue, type Session } from "../session.ts";
import type { ToolDefinition, ToolHandlers } from "../tools/tool.ts";
import { waitForDecisions } from "./approvals.ts";
import { journaledModel, type StepRetryOptions } from "./journaled-model.ts";
import { journaledTools } from "./journaled-tools.ts";
import { journaledGuardrails } from "./journaled-guardrails.ts";
import type { Guardrails } from "../guardrails/guardrail.ts";
import { toolCallRecorderOf } from "../tools/tool-call-recorder.ts";
import { journaledPolicy } from "./journaled-classifier.ts";
import type { ApprovalPolicy } from "../tools/approval-policy.ts";
import { createReplayClock, type ReplayClock } from "./replay-clock.ts";
import { readEntries, recordSession, sessionFromEntries, type SessionRecorder } from "./session-state.ts";
import { createStepScheduler, type StepScheduler } from "./step-scheduler.ts";
import { durableTasks, type DurableTasks } from "./durable-tasks.ts";

/**
 * The input of `run`. `message`: the user's message to add before the loop runs; without it the
 * loop resumes the session as it is (after a failed run, say). `system`: the system prompt of a
 * new session; on an existing one it must be the prompt the session has.
 */
export type AgentRunInput = { message?: string; system?: string };

/**
 * What `run` answers once the loop has ended: `done` (the model answered without tools),
 * `stopped` (the model stopped for another reason), `aborted` (the invocation was cancelled) or
 * `blocked` (a guardrail blocked the input, or the answer: then `response` is its marker),
 * with the last assistant text (`response`) and, for a run with an `output` schema, its value.
 */
export type AgentRunResult = {
  outcome: "done" | "stopped" | "aborted" | "blocked";
  response?: string;
  output?: JsonValue;
  /** A run of agents (`restateAgent({ agent })`): the agent that gave `response`. */
  agent?: string;
};

/** The run's state as the `status` handler reports it. `error`: why the last run failed. */
export type AgentStatus = {
  state: "running" | "paused" | "done" | "stopped" | "aborted" | "blocked" | "failed";
  error?: string;
};

/** The loop options a durable run takes: the others belong to Restate (abort, retries) or to streaming. */
export type DurableLoopOptions = Omit<AgentLoopOptions, "signal" | "retry" | "eagerTools">;

/**
 * The run options a durable run of agents takes (`restateAgent({ agent })`): `runAgent`'s
 * (`maxHandoffs` included), less those that belong to Restate or to streaming.
 */
export type DurableAgentOptions = Omit<RunAgentOptions, "signal" | "retry" | "eagerTools">;

/** What the object was built with (see `RestateAgentOptions`). */
export type AgentSetup = {
  /** What a run runs: the loop with one model and its tools, or an agent that follows its handoffs. */
  runs: { invokeModel: InvokeModel; tools: readonly ToolDefinition[] } | { agent: AgentDefinition };
  options: DurableLoopOptions | DurableAgentOptions;
  modelRetry: StepRetryOptions | undefined;
  maxStepBytes: number;
};

export const statusKey = "status";

/**
 * The exclusive `run` handler: loads the session from the object's state, adds the message, and
 * runs the one loop (`agentLoop`) to its end, with every model call and tool call a journaled step.
 * A pause for approval waits on awakeables inside the same invocation (suspended, it costs
 * nothing), then the loop runs again with the decisions. A Restate cancellation aborts the loop
 * (the session ends with the `aborted` message, every call answered). A failure of the loop is a
 * `TerminalError` (status `failed`); the session keeps what was done, and a later `run` goes on.
 */
export async function durableRun(ctx: ObjectContext, setup: AgentSetup, input: unknown): Promise<AgentRunResult> {
  const { message, system } = parseRunInput(input);
  const entries = await readEntries(ctx);
  const label = `restate:${ctx.key}`;
  const session: Session = entries === undefined ? { messages: [] } : sessionFromEntries(entries, label);
  if (entries === undefined && message === undefined) {
    if (system !== undefined)
      throw new TerminalError(`run: a new session needs a message as well as its system prompt`, { errorCode: 400 });
    throw new TerminalError(`no session "${ctx.key}" to resume: give a message`, { errorCode: 404 });
  }
  if (entries !== undefined && system !== undefined) {
    const first = session.messages[0];
    if (first === undefined || !("role" in first) || first.role !== "system" || first.content !== system) {
      throw new TerminalError(
        `session "${ctx.key}" exists: system is accepted only for a new session (or equal to its own)`,
        { errorCode: 400 },
      );
    }
  }
  const clock = createReplayClock(await ctx.date.now());
  const recorder = recordSession(ctx, session, clock, entries?.length ?? 0, setup.maxStepBytes);
  const controller = new AbortController();
  const scheduler = createStepScheduler(async () => {
    clock.advance(await ctx.date.now());
    controller.abort();
  });
  const setStatus = (status: AgentStatus): void => ctx.set(statusKey, status);
  const tasks = durableTasks(ctx, session, { scheduler, clock });
  try {
    // A new session of agents starts with its first agent's prompt (each agent's model is sent its own).
    const firstSystem = system ?? ("agent" in setup.runs ? setup.runs.agent.systemPrompt : undefined);
    if (entries === undefined && firstSystem !== undefined)
      extendSession(session, { role: "system", content: firstSystem });
    if (message !== undefined) extendSession(session, { role: "user", content: message });
    setStatus({ state: "running" });
    recorder.flush();
    const { toolTimeout, toolHandlers, onEvent, budget, ...loopOptions } = setup.options;
    // One budget for the invocation, its runs before and after each pause included: every run is
    // within it. A replay rebuilds it from the journal (each model step's usage, each tool step's
    // charges) as the runs charge it again.
    const ledger = createBudgetLedger({ limit: budget, prices: loopOptions.prices });
    // A loop run never emits a handoff: one listener type serves both kinds of run.
    const listener = onEvent as ((event: AgentRunEvent) => void) | undefined;
    const journal = runJournal(ctx, setup, { scheduler, clock, recorder, toolTimeout, tasks });
    const run = durableLoop(setup.runs, journal, session, toolHandlers);
    let outcome: RunOutcome | undefined;
    for (;;) {
      try {
        await run({
          ...loopOptions,
          // A replay answers each guardrail from the journal: none is asked twice.
          ...guardrailsOption(journal.guardrails(loopOptions.guardrails)),
          // A replay answers each classifier verdict from the journal: no call is judged twice.
          ...policyOption(journaledPolicy(ctx, loopOptions.approvalPolicy, scheduler)),
          signal: controller.signal,
          parentBudget: ledger,
          // Restate retries a failed model step; the loop's own backoff would not replay the same.
          retry: false,
          onEvent: (event) => {
            if (event.type === "run-end") outcome = event.outcome;
            listener?.(event);
          },
        });
      } catch (error) {
        // What ended before the failure is recorded, for the next run to deliver.
        if (!isInstance(error, CancelledError)) await tasks.settleEnded().catch(() => undefined);
        tasks.writeIndex();
        recorder.flush();
        setStatus({ state: "failed", error: describeError(error) });
        throw isInstance(error, TerminalError) ? error : new TerminalError(describeError(error), { errorCode: 500 });
      }
      tasks.writeIndex();
      recorder.flush();
      if (outcome !== "paused") break;
      setStatus({ state: "paused" });
      if (!(await waitPaused(ctx, session, { clock, scheduler, tasks, recorder }))) controller.abort();
      setStatus({ state: "running" });
    }
    const state = outcome === "aborted" || outcome === "stopped" || outcome === "blocked" ? outcome : "done";
    setStatus({ state });
    const last = response(session);
    const result: AgentRunResult = { outcome: state };
    // A blocked input has no answer of this run; a blocked answer's is its marker.
    if (
      last !== undefined &&
      last.stopReason !== "aborted" &&
      (state !== "blocked" || session.messages.at(-1) === last)
    )
      result.response = last.content;
    if (last?.output !== undefined) result.output = last.output;
    if ("agent" in setup.runs && last?.agent !== undefined) result.agent = last.agent;
    return result;
  } finally {
    recorder.stop();
    tasks.close();
  }
}

// The approval wait; a task that ends meanwhile is settled and written to the state as it ends.
function waitPaused(
  ctx: ObjectContext,
  session: Session,
  run: { clock: ReplayClock; scheduler: StepScheduler; tasks: DurableTasks; recorder: SessionRecorder },
): Promise<boolean> {
  const { tasks, recorder } = run;
  const written = (): void => {
    tasks.writeIndex();
    recorder.flush();
  };
  return waitForDecisions(ctx, session, run.clock, run.scheduler, { whileWaiting: tasks.whileWaiting, written });
}

// How this invocation journals models, tools and guardrails; the models of every agent share the step count.
function runJournal(
  ctx: ObjectContext,
  setup: AgentSetup,
  run: {
    scheduler: StepScheduler;
    clock: ReplayClock;
    recorder: SessionRecorder;
    toolTimeout: number | undefined;
    tasks: DurableTasks;
  },
): AgentJournal {
  const { scheduler, clock, recorder, toolTimeout, tasks } = run;
  const steps = { count: 0 };
  return {
    ctx,
    scheduler,
    model: (invokeModel) =>
      journaledModel(
        ctx,
        invokeModel,
        scheduler,
        clock,
        recorder.flush,
        recorder.flushAfterNextAppend,
        setup.modelRetry ?? {},
        setup.maxStepBytes,
        steps,
      ),
    // The run's `toolTimeout` wins over an agent's own, as in `runAgent`.
    tools: (invokeModel, tools, handlers, timeout) =>
      journaledTools(ctx, tools, handlers, {
        toolTimeout: toolTimeout ?? timeout,
        scheduler,
        clock,
        maxStepBytes: setup.maxStepBytes,
        recorder: toolCallRecorderOf(invokeModel),
        tasks,
      }),
    guardrails: (guardrails) => journaledGuardrails(ctx, guardrails, scheduler),
  };
}

type RunOnce = (options: Omit<RunAgentOptions, "toolHandlers" | "toolTimeout">) => Promise<unknown>;

// One run of the loop, or of the agents (following handoffs), with the tools' steps journaled.
function durableLoop(
  runs: AgentSetup["runs"],
  journal: AgentJournal,
  session: Session,
  toolHandlers: ToolHandlers | undefined,
): RunOnce {
  // Run-level handlers are every agent's; without them each agent keeps its own.
  const handlers = (invokeModel: InvokeModel): { toolHandlers?: ToolHandlers } =>
    toolHandlers === undefined
      ? {}
      : { toolHandlers: journal.tools(invokeModel, [], toolHandlers, undefined).toolHandlers };
  if ("agent" in runs) {
    const root = journaledAgent(runs.agent, journal);
    return (options) => runAgent(root, session, { ...options, ...handlers(runs.agent.invokeModel) });
  }
  const invokeModel = journal.model(runs.invokeModel);
  const tools = journal.tools(runs.invokeModel, runs.tools, toolHandlers ?? {}, undefined);
  return ({ onEvent, maxHandoffs: _none, ...options }) =>
    agentLoop(invokeModel, tools.tools, session, {
      ...options,
      toolHandlers: tools.toolHandlers,
      ...(onEvent === undefined ? {} : { onEvent }),
    });
}

function policyOption(policy: ApprovalPolicy | undefined): { approvalPolicy?: ApprovalPolicy } {
  return policy === undefined ? {} : { approvalPolicy: policy };
}

function guardrailsOption(guardrails: Guardrails | undefined): { guardrails?: Guardrails } {
  return guardrails === undefined ? {} : { guardrails };
}

function parseRunInput(input: unknown): AgentRunInput {
  if (input === undefined || input === null) return {};
  if (typeof input !== "object" || Array.isArray(input))
    throw badInput("the input must be an object { message?, system? }");
  const { message, system } = input as Record<string, unknown>;
  if (message !== undefined && (typeof message !== "string" || message === ""))
    throw badInput("message must be a non-empty string");
  if (system !== undefined && typeof system !== "string") throw badInput("system must be a string");
  const parsed: AgentRunInput = {};
  if (message !== undefined) parsed.message = message;
  if (system !== undefined) parsed.system = system;
  return parsed;
}

function badInput(problem: string): TerminalError {
  return new TerminalError(`run: ${problem}`, { errorCode: 400 });
}
