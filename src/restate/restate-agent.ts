import * as restate from "@restatedev/restate-sdk";
import type {
  ObjectContext,
  ObjectOptions,
  ObjectSharedContext,
  Serde,
  VirtualObjectDefinition,
} from "@restatedev/restate-sdk";
import type { InvokeModel } from "../model/invoke-model.ts";
import type { Session } from "../session.ts";
import type { ToolDefinition } from "../tools/tool.ts";
import {
  decideOnce,
  listPendingApprovals,
  resolveApprovals,
  type ApprovalResolution,
  type ApprovalResolved,
  type PendingApprovalView,
} from "./approvals.ts";
import {
  durableRun,
  statusKey,
  type AgentRunInput,
  type AgentRunResult,
  type AgentStatus,
  type AgentSetup,
  type DurableAgentOptions,
  type DurableLoopOptions,
} from "./durable-run.ts";
import type { AgentDefinition } from "../agents/agent-types.ts";
import { AgentError } from "../errors.ts";
import { checkNumber } from "../numeric-options.ts";
import type { StepRetryOptions } from "./journaled-model.ts";
import { checkMaxStepBytes } from "./step-size.ts";
import { checkLoopOptions } from "../loop/loop-options.ts";
import { checkStepRetry } from "./journaled-model.ts";
import { entriesToJsonl, hasSession, readEntries, sessionFromEntries, writeEntries } from "./session-state.ts";
import { parseLog } from "./session-to-store.ts";
import type { SessionEntry } from "../store/entries.ts";
import { isWaitTaskTool } from "../tools/task-tools.ts";
import { backgroundTasks } from "../tools/task-control.ts";
import type { BackgroundTask } from "../tools/task-types.ts";
import { cancelTaskRequest, type CancelTaskInput } from "./task-handlers.ts";

export type RestateAgentOptions = RestateAgentSetup & (RestateLoopRun | RestateAgentsRun);

/** A run of the loop: one model, its tools and the loop's options. */
export type RestateLoopRun = {
  /** The model. Each call runs as one journaled step (a streamed answer is collected inside it). */
  invokeModel: InvokeModel;
  /**
   * The tools. Each handler runs as one journaled step: a call that finished never runs again,
   * but one a crash interrupted runs again, so give tools with side effects idempotent effects.
   */
  tools?: readonly ToolDefinition[];
  /**
   * The loop's options. Everything the loop does outside the steps runs again on replay and must
   * give the same result: hooks, `validate`, compaction strategies must be deterministic (a
   * strategy calling a model is not). `onEvent` and `logger` hear a replayed run again.
   */
  options?: DurableLoopOptions;
  agent?: undefined;
};

/**
 * A run of agents (`defineAgent`), as `runAgent` runs them: the session's active agent answers
 * and its handoffs are followed. Every agent's model calls, tools and guardrails are journaled
 * steps as the loop's are, and so is each handoff's summarizer (`history: "summary"`) and each
 * `onHandoff` (step `handoff <from> to <to>`): a replay asks none of them again. The active agent
 * is read from the session, so a run resumed on another worker goes on with it.
 */
export type RestateAgentsRun = {
  /** The agent a new session starts with (its `systemPrompt` is the session's system message unless `run` gives `system`). */
  agent: AgentDefinition;
  /** `runAgent`'s run options (`maxHandoffs` included), deterministic outside the steps as the loop's must be. */
  options?: DurableAgentOptions;
  invokeModel?: undefined;
  tools?: undefined;
};

/** What every `restateAgent` takes beside what it runs. */
export type RestateAgentSetup = {
  /** The virtual object's name, the first segment of its ingress paths (default `"agent"`). */
  name?: string;
  /** How Restate retries a model call that failed with a retryable error (default: the server's policy). */
  modelRetry?: StepRetryOptions;
  /**
   * The largest step (a tool's output, a model's answer, an error text, as JSON bytes) to journal:
   * an integer >= 1024 (default 8 MiB). An error text over it is cut to fit.
   * The server refuses an entry over its message size limit (32 MiB by default) and would run the
   * step again forever; a larger tool output becomes an error result, a larger answer fails the run.
   * Keep it well below the server's limit: a replay also needs the whole journal in memory.
   */
  maxStepBytes?: number;
  /** Options of the virtual object (retry policy, timeouts, retention), as `restate.object` takes them. */
  restate?: ObjectOptions;
};

/**
 * The handlers of the agent object, keyed by session id. `run` is exclusive (one run per session
 * at a time; further runs queue); the others are shared and answer while a run is going, from
 * what the run has written to the state (it writes before each model call and when it pauses or
 * ends). Each throws a `TerminalError` with an HTTP status for bad input: 404 for a session id that
 * has no session.
 */
export type RestateAgentHandlers = {
  /** Adds the message and runs the loop to its end (through approvals); see `AgentRunInput`. */
  run: (ctx: ObjectContext, input: AgentRunInput) => Promise<AgentRunResult>;
  /** The session (plain JSON, the loop's own format). */
  session: (ctx: ObjectSharedContext) => Promise<Session>;
  /** The session as the JSON Lines log the file store writes (`application/x-ndjson`); `loadSession` reads it back. */
  export: (ctx: ObjectSharedContext) => Promise<string>;
  /** Where the session's run is: running, paused for approval, or how it ended. */
  status: (ctx: ObjectSharedContext) => Promise<AgentStatus>;
  /** The tool calls the paused run waits on (empty when it does not wait). */
  pendingApprovals: (ctx: ObjectSharedContext) => Promise<PendingApprovalView[]>;
  /** Decides waiting calls: `{ id, approved, reason? }` or a list of them; the run resumes once all are decided. */
  resolveApproval: (ctx: ObjectSharedContext, input: ApprovalResolution) => Promise<ApprovalResolved>;
  /**
   * Starts the object's session from a log (`{ jsonl }`: JSON Lines as a store's entries, see the
   * client's `importFrom`): 409 when the object has a session already, 400 for a log that does not
   * load. The session is then `done` until a `run` continues it (a call waiting for approval is
   * asked again by that run). Returns the session.
   */
  import: (ctx: ObjectContext, input: { jsonl: string }) => Promise<Session>;
  /** The session's background tasks (`backgroundTasks(session)`), in start order, as the run has written them. */
  tasks: (ctx: ObjectSharedContext) => Promise<BackgroundTask[]>;
  /**
   * Cancels a background task of the session (`{ id, reason? }`): the run sees it while it waits
   * for its tasks (at once when it waits, else when it next waits), aborts the handler's signal,
   * records the task `cancelled` and gives the model the reason. Returns the task as the session has it (a settled one
   * unchanged); 404 for an id the session has no task of, 409 for a running one no run holds.
   */
  cancelTask: (ctx: ObjectSharedContext, input: CancelTaskInput) => Promise<BackgroundTask>;
  /** Internal (not on the ingress): lets one decision per awakeable through. */
  decide: (ctx: ObjectContext, input: { id: string; approved: boolean; reason?: string }) => Promise<null>;
  /** Internal (not on the ingress): clears a decision gate's state, a day after its decision. */
  forget: (ctx: ObjectContext) => Promise<null>;
};

export type RestateAgent = VirtualObjectDefinition<string, RestateAgentHandlers>;

/**
 * An agent as a Restate virtual object keyed by session id: bind it to an endpoint
 * (`restate.endpoint().bind(agent).listen(9080)`), register the endpoint with the Restate server,
 * and call it through the ingress (or `restateAgentClient`). The loop is the in-process one; each
 * model call and tool call is a journaled step, so after a crash or a redeploy the run continues
 * on any worker where it was.
 */
export function restateAgent(config: RestateAgentOptions): RestateAgent {
  // Checked once, here: a bad option found inside a run would fail it on every replay.
  checkMaxStepBytes(config.maxStepBytes);
  checkRunOptions(config);
  checkStepRetry(config.modelRetry ?? {});
  const name = config.name ?? "agent";
  const setup: AgentSetup = {
    runs:
      config.agent === undefined
        ? { invokeModel: config.invokeModel, tools: config.tools ?? [] }
        : { agent: config.agent },
    options: config.options ?? {},
    modelRetry: config.modelRetry,
    maxStepBytes: config.maxStepBytes ?? 8 * 1024 * 1024,
  };
  const shared = restate.handlers.object.shared;
  const handlers: RestateAgentHandlers = {
    run: restate.handlers.object.exclusive(
      { description: "Add a message and run the agent loop to its end." },
      (ctx: ObjectContext, input: AgentRunInput) => durableRun(ctx, setup, input),
    ),
    session: shared({ description: "The session, as plain JSON." }, async (ctx: ObjectSharedContext) =>
      sessionFromEntries(await existingEntries(ctx), `restate:${ctx.key}`),
    ),
    export: shared(
      { description: "The session as the file store's JSONL log.", output: jsonlSerde },
      async (ctx: ObjectSharedContext) => entriesToJsonl(await existingEntries(ctx)),
    ),
    status: shared({ description: "Where the session's run is." }, async (ctx: ObjectSharedContext) => {
      await requireSession(ctx);
      return (await ctx.get<AgentStatus>(statusKey)) ?? { state: "running" };
    }),
    pendingApprovals: shared({ description: "The tool calls the run waits on." }, async (ctx: ObjectSharedContext) => {
      await requireSession(ctx);
      return listPendingApprovals(ctx);
    }),
    resolveApproval: shared(
      { description: "Approve or deny waiting tool calls." },
      async (ctx: ObjectSharedContext, input: ApprovalResolution) =>
        resolveApprovals(ctx, name, sessionFromEntries(await existingEntries(ctx), `restate:${ctx.key}`), input),
    ),
    tasks: shared({ description: "The session's background tasks." }, async (ctx: ObjectSharedContext) =>
      backgroundTasks(sessionFromEntries(await existingEntries(ctx), `restate:${ctx.key}`)),
    ),
    cancelTask: shared(
      { description: "Cancel a background task of the session." },
      async (ctx: ObjectSharedContext, input: CancelTaskInput) =>
        cancelTaskRequest(ctx, sessionFromEntries(await existingEntries(ctx), `restate:${ctx.key}`), input),
    ),
    import: restate.handlers.object.exclusive(
      { description: "Start the session from a log (JSON Lines), as a store holds it." },
      (ctx: ObjectContext, input: { jsonl: string }) => importSession(ctx, input, setup.maxStepBytes),
    ),
    decide: restate.handlers.object.exclusive(
      { ingressPrivate: true },
      (ctx: ObjectContext, input: { id: string; approved: boolean; reason?: string }) => decideOnce(ctx, input, name),
    ),
    forget: restate.handlers.object.exclusive({ ingressPrivate: true }, (ctx: ObjectContext) => {
      ctx.clearAll();
      return Promise.resolve(null);
    }),
  };
  return restate.object({ name, handlers, ...(config.restate === undefined ? {} : { options: config.restate }) });
}

function checkRunOptions(config: RestateAgentOptions): void {
  refuseTaskWaits(config);
  if (config.agent === undefined) return checkLoopOptions(config.options ?? {}, config.tools ?? []);
  const { maxHandoffs, ...options } = config.options ?? {};
  checkNumber("maxHandoffs", maxHandoffs, { min: 0, integer: true });
  checkLoopOptions(options, config.agent.tools);
}

// A task runs inside the run's invocation (its steps are the run's journal): it cannot outlive the
// run (`whenIdle: "end"`), and it settles only at a safe point, which a `wait_task` call inside its
// own step would never reach. A durable run refuses both up front.
function refuseTaskWaits(config: RestateAgentOptions): void {
  const refuseEnd = (where: string, options: { backgroundTasks?: { whenIdle?: string } } | undefined): void => {
    if (options?.backgroundTasks?.whenIdle !== "end") return;
    throw new AgentError(
      `restateAgent: ${where}backgroundTasks.whenIdle is "end": under Restate a task runs inside its run's invocation, which waits for it; leave whenIdle out there (or "wait")`,
    );
  };
  const refuseWait = (tools: readonly ToolDefinition[]): void => {
    if (!tools.some(isWaitTaskTool)) return;
    throw new AgentError(
      'restateAgent: tool "wait_task" (taskTools()) does not run under Restate: a task settles at the run\'s safe points, which a call waiting inside its step never reaches; offer check_task and cancel_task there',
    );
  };
  refuseEnd("options.", config.options);
  if (config.agent === undefined) return refuseWait(config.tools ?? []);
  for (const agent of allAgents(config.agent)) {
    refuseEnd(`agent "${agent.name}" has options.`, agent.options);
    refuseWait(agent.tools);
  }
}

// The agent and every agent its handoffs reach.
function allAgents(root: AgentDefinition): AgentDefinition[] {
  const seen = new Set<AgentDefinition>();
  const pending = [root];
  for (let agent = pending.pop(); agent !== undefined; agent = pending.pop()) {
    if (seen.has(agent)) continue;
    seen.add(agent);
    pending.push(...agent.handoffs.map((handoff) => handoff.agent));
  }
  return [...seen];
}

async function importSession(ctx: ObjectContext, input: { jsonl: string }, maxStepBytes: number): Promise<Session> {
  if (await hasSession(ctx))
    throw new restate.TerminalError(`session "${ctx.key}" exists already: import only starts a new one`, {
      errorCode: 409,
    });
  if (typeof input?.jsonl !== "string")
    throw new restate.TerminalError('import takes { "jsonl": "<log>" }', { errorCode: 400 });
  let entries: SessionEntry[];
  let session: Session;
  try {
    entries = parseLog(input.jsonl, `restate:${ctx.key}`);
    session = sessionFromEntries(entries, `restate:${ctx.key}`);
  } catch (error) {
    throw new restate.TerminalError(error instanceof Error ? error.message : String(error), { errorCode: 400 });
  }
  writeEntries(ctx, entries, maxStepBytes);
  ctx.set(statusKey, { state: "done" } satisfies AgentStatus);
  return session;
}

async function existingEntries(
  ctx: ObjectSharedContext,
): Promise<NonNullable<Awaited<ReturnType<typeof readEntries>>>> {
  const entries = await readEntries(ctx);
  if (entries === undefined) throw new restate.TerminalError(`no session "${ctx.key}"`, { errorCode: 404 });
  return entries;
}

// Status and approvals need no messages: a session's entries can be many megabytes.
async function requireSession(ctx: ObjectSharedContext): Promise<void> {
  if (!(await hasSession(ctx))) throw new restate.TerminalError(`no session "${ctx.key}"`, { errorCode: 404 });
}

const jsonlSerde: Serde<string> = {
  contentType: "application/x-ndjson",
  serialize: (text) => new TextEncoder().encode(text),
  deserialize: (bytes) => new TextDecoder().decode(bytes),
};
