import type { Elicitations } from "./elicitations.ts";
import type { ToolElicit } from "../tools/elicitation.ts";
import { createAbortRace, type AbortRace } from "../shared/abort.ts";
import { readCompaction, type DefaultCompaction } from "./default-compaction.ts";
import type { CompactionStrategy } from "./compaction-strategy.ts";
import type { AgentEvent } from "./events.ts";
import type { AgentHooks } from "./hooks.ts";
import { defaultMaxIterations, type AgentLoopOptions } from "./loop-options.ts";
import { createEagerStarter, type EagerStarter } from "./eager-starter.ts";
import { createRunEvents, unheardRunEvents } from "./run-events.ts";
import type { RetryOptions } from "./retry.ts";
import { outputContract, type RunOutput } from "./structured-output.ts";
import { formatLogLine, resolveLogger } from "../logger.ts";
import { hasNativeStructuredOutput, type InvokeModel } from "../model/invoke-model.ts";
import { outputInstruction } from "../model/output-instruction.ts";
import {
  extendSession,
  extendSessionWith,
  now,
  type BudgetOverrun,
  type Message,
  type ModelMessage,
  type Session,
  type ToolResultMessage,
  type SubagentUsage,
  type UserMessage,
} from "../session.ts";
import { readGuardrails, type RunGuardrails } from "./run-guardrails.ts";
import { createToolExecutor, type ToolExecutor } from "../tools/execute-tool-calls.ts";
import { createApprovalChain } from "../tools/approval-setup.ts";
import { toolCallRecorderOf } from "../tools/tool-call-recorder.ts";
import type { ToolDefinition } from "../tools/tool.ts";
import { defaultLargeOutputChars, largeOutputChars, offload } from "./large-output.ts";
import { createToolOffer, type ToolOffer } from "./tool-offer.ts";
import { createRunTasks, taskResultEntered, type RunTasks } from "./run-tasks-setup.ts";
import { readCodeMode } from "../tools/code-mode/code-mode-option.ts";
import { createCodeMode, type CodeMode } from "../tools/code-mode/run-code.ts";
import type { ModelSettings } from "../model/model-settings.ts";
import type { ModelPrice } from "../model/cost.ts";
import { createBudgetLedger, hasLimit, type BudgetLedger } from "../model/budget.ts";
import type { ToolSpending } from "../tools/executor-setup.ts";
import { addSubagentUsage } from "../tools/subagent-usage.ts";
import type { PrefixTracking } from "./sent-prefix.ts";
import type { LoopGuardState } from "../tools/loop-guard.ts";
import { loopGuardLimit, type StopCondition } from "./stop-conditions.ts";

/** Messages the caller sends a running run: steering (at the next safe point) and follow-ups (after the task). */
export type Queues = { steering: UserMessage[]; followUps: UserMessage[] };

/**
 * Everything the phases of one run share, read from the options once (`createRunContext`). The
 * fields are fixed for the run; what changes as it goes is in `state`.
 */
export type RunContext = {
  readonly invokeModel: InvokeModel;
  readonly session: Session;
  /** The tools as the model is shown them, call by call, and the ones the run executes. */
  readonly offer: ToolOffer;
  readonly agentName: string | undefined;
  readonly maxIterations: number;
  /** Whether `maxIterations` was given: the limit's error says when it was the default. */
  readonly maxIterationsGiven: boolean;
  readonly signal: AbortSignal;
  /** Races every wait of the run against `signal`; disposed when the run ends. */
  readonly abortRace: AbortRace;
  readonly queues: Queues;
  readonly hooks: AgentHooks | undefined;
  readonly retry: false | RetryOptions | undefined;
  readonly executor: ToolExecutor;
  /** Starts tool calls while the model streams; absent with `eagerTools: false`. */
  readonly eager: EagerStarter | undefined;
  /** The default compaction before each call; absent with strategies or `compaction: false`. */
  readonly compaction: DefaultCompaction | undefined;
  /** Context strategies, before each call and once after an overflow. */
  readonly strategies: readonly CompactionStrategy[] | undefined;
  /** The `output` schema's contract, instruction and corrections left; absent without one. */
  readonly output: RunOutput | undefined;
  /** Emits an event of the run (metrics observe it; `run-end` gets them). */
  readonly emit: (event: AgentEvent) => void;
  /** `turn-start`: model call number `iteration` begins. */
  readonly turnStart: (iteration: number) => void;
  /** `turn-end`: the turn is closed; its last message gives the stop reason and usage. */
  readonly turnEnd: (iteration: number, last: ModelMessage | undefined) => void;
  /** Adds one message to the session and announces it. */
  readonly add: (message: Message) => void;
  /**
   * Adds a model turn whole, then announces its messages; returns the stored messages. The
   * messages are the loop's own copies of what the model (or a hook, a guardrail) answered: they
   * are stored as they are, stamped in place.
   */
  readonly addTurn: (messages: readonly Message[]) => readonly Message[];
  readonly state: RunState;
  /** The run's `settings`, for every call. */
  readonly settings: ModelSettings | undefined;
  readonly stopWhen: StopCondition | undefined;
  /**
   * What the run spends, live: its own model calls and what its tools spend, within the ledger of
   * the call it works for (`parentBudget`), if any; no call starts once it is used up.
   */
  readonly ledger: BudgetLedger;
  /** Whether the ledger, or one it is within, has a limit: only then do model calls carry it (`ModelContext.budget`). */
  readonly limited: boolean;
  readonly prices: Readonly<Record<string, ModelPrice>> | undefined;
  /** Each attempt of a model call: at most this long, and this long to its first event. */
  readonly modelCallMs: number | undefined;
  readonly firstChunkMs: number | undefined;
  /** The input and output guardrails and what they keep between calls (the tool guardrails are in the executor's hooks); absent without any. */
  readonly guardrails: RunGuardrails | undefined;
  /**
   * What a pause may hold of a result: the result as the `toolOutput` guardrails left it (blocked
   * or redacted, with their mark), with what its call spent on models and, for a code call, its
   * program's calls and logs (the run that answers the waiting call has none of them).
   */
  readonly heldResult: (result: ToolResultMessage) => ToolResultMessage;
  /** A blocked input or answer throws `GuardrailTrippedError` instead of ending the run `blocked`. */
  readonly throwOnBlock: boolean;
  /** Model calls compared with the one before for the `cache` event: only in a run that can be heard. */
  readonly prefix: PrefixTracking | undefined;
  /**
   * Whether a model call may wait on something around it (guardrails, context strategies, a model
   * hook, the output schema): without any, a call answered at once takes no async frame.
   */
  readonly waitsAroundCall: boolean;
  /** Background tasks: absent unless a tool runs in the background or this process holds tasks of the session. */
  readonly tasks: RunTasks | undefined;
};

/** What changes as a run goes; the loop guard keeps what it saw here too. */
export type RunState = LoopGuardState & {
  /** Model calls so far in this run. */
  iteration: number;
  /**
   * The text the current model call has streamed so far: an abort mid-stream keeps it (as the
   * aborted message's content), so the session holds what the user saw.
   */
  streamedText: string;
  /** Stops the tools a turn started early, if the run fails before that turn's tools are done. */
  abandon: (() => void) | undefined;
  /** Set by the model call that took the run over its budget; `overrunMarked` once that turn carries it. */
  overrun: BudgetOverrun | undefined;
  overrunMarked: boolean;
};

/** What a run is started with: the arguments of `agentLoop` or `agentStream`. */
export type RunArguments = {
  readonly invokeModel: InvokeModel;
  readonly tools: readonly ToolDefinition[];
  readonly session: Session;
  readonly options: AgentLoopOptions;
};

/** What `createRunContext` reads: the run's arguments, its signal, and where its events and messages go. */
export type RunSetup = RunArguments & {
  readonly signal: AbortSignal;
  /** Receives every event of the run. */
  readonly report: (event: AgentEvent) => void;
  /** Whether someone listens now; absent when nobody ever can (no events are built then). */
  readonly listening: (() => boolean) | undefined;
  readonly queues: Queues;
  /** The questions its tools put to its user (`answerElicitation`); absent: none can be answered. */
  readonly elicitations?: Elicitations;
};

/** Reads the options of a run, once: the one place that does. */
export function createRunContext(setup: RunSetup): RunContext {
  const { invokeModel, tools, session, options, signal, report, listening, queues, elicitations } = setup;
  const agentName = options.name;
  const state = newRunState();
  const prefix: PrefixTracking | undefined =
    listening === undefined ? undefined : { changedBy: undefined, change: undefined };
  const toolTimeout = options.timeouts?.toolMs ?? options.toolTimeout;
  const { emit, turnStart, turnEnd, message } = runEvents(report, listening, state, prefix, options.prices);
  const abortRace = createAbortRace(signal);
  const guarded = readGuardrails(options.guardrails, options.hooks, {
    emit,
    abortRace,
    signal,
    agent: options.agent ?? agentName,
    session,
    actor: options.agent,
  });
  const hooks = guarded.tools === undefined ? options.hooks : { ...options.hooks, ...guarded.tools.hooks };
  const loopGuard = loopGuardLimit(options.loopGuard);
  const marked = guarded.tools?.marked;
  const { add, addTurn } = sessionWriter(session, message, {
    log: resolveLogger(options.logger),
    agentName,
    agent: options.agent,
  });
  const maxChars = largeOutputChars(options.largeOutput);
  const tasks = createRunTasks(setup, { emit: listening && emit, maxChars, guarded: guarded.taskOutput });
  const ledger = runLedger(options);
  // What the run's background tasks spend counts here too, as they spend it.
  if (tasks !== undefined) tasks.host.ledger = ledger;
  const runTools = codeModeParts(options, tools, { maxChars, marked }, () => executor);
  const results: RunResults = {
    session,
    add,
    maxChars,
    marked,
    tasks,
    programRecord: runTools.programRecord,
    spentByCall: undefined,
  };
  const executor: ToolExecutor = createToolExecutor(runTools.definitions, options.toolHandlers ?? {}, {
    parallel: options.parallel,
    maxParallelTools: options.maxParallelTools,
    toolTimeout,
    agentName,
    hooks,
    loopGuard: loopGuard === undefined ? undefined : { limit: loopGuard, state },
    session,
    // A model that records tool calls (a cassette) sees every handler run.
    recorder: toolCallRecorderOf(invokeModel),
    // Bound to the record: what the executor calls reaches the bound function and the record only.
    onResult: enterResult.bind(results),
    spending: toolSpending(ledger, results),
    tasks: tasks?.host,
    approvals: options.approvalPolicy === undefined ? undefined : createApprovalChain(options.approvalPolicy, now),
    ...heardBy(elicitations, listening, emit),
    ...runTools.executorOptions,
  });
  const management = readCompaction(options.compaction);
  return {
    invokeModel,
    session,
    offer: runTools.offer,
    agentName,
    maxIterations: options.maxIterations ?? defaultMaxIterations,
    maxIterationsGiven: options.maxIterations !== undefined,
    signal,
    abortRace,
    queues,
    hooks: options.hooks,
    retry: options.retry,
    executor,
    eager: options.eagerTools === false ? undefined : createEagerStarter(executor, signal),
    compaction: management.compaction,
    strategies: management.strategies,
    output: runOutput(options, invokeModel),
    emit,
    turnStart,
    turnEnd,
    add,
    addTurn,
    state,
    settings: options.settings,
    stopWhen: options.stopWhen,
    ledger,
    limited: hasLimit(ledger),
    prices: options.prices,
    modelCallMs: options.timeouts?.modelCallMs,
    firstChunkMs: options.timeouts?.firstChunkMs,
    guardrails: guarded.guardrails,
    heldResult: (result) => withRecords(results, marked === undefined ? result : marked(result)),
    throwOnBlock: options.throwOnBlock === true,
    prefix,
    waitsAroundCall: guarded.guardrails !== undefined || management.strategies !== undefined || waitsFor(options),
    tasks,
  };
}

function newRunState(): RunState {
  return {
    iteration: 0,
    streamedText: "",
    abandon: undefined,
    overrun: undefined,
    overrunMarked: false,
    guardLast: undefined,
    guardCount: 0,
    guardRefused: 0,
    loopDetected: undefined,
  };
}

function runOutput(options: AgentLoopOptions, invokeModel: InvokeModel): RunOutput | undefined {
  if (options.output === undefined) return undefined;
  const contract = outputContract(options.output);
  return {
    contract,
    context: { jsonSchema: contract.jsonSchema },
    // An adapter with native structured output conveys the schema itself: no instruction then.
    instruction: hasNativeStructuredOutput(invokeModel)
      ? undefined
      : { role: "system", content: outputInstruction(contract.jsonSchema) },
    attemptsLeft: options.outputAttempts ?? 2,
  };
}

// A model hook or an output schema is waited for around every model call.
function waitsFor(options: AgentLoopOptions): boolean {
  const { hooks } = options;
  return hooks?.beforeModelCall !== undefined || hooks?.afterModelCall !== undefined || options.output !== undefined;
}

/**
 * What a tool's result goes through on its way into the session (`enterResult`), and what the run
 * adds to its calls' results (`withRecords`): one record, so a result reaches one object of its
 * run, not a closure per step: at many runs in flight each result comes when its run's objects
 * are cold, and each one is another fetch from memory.
 */
type RunResults = {
  readonly session: Session;
  readonly add: (message: Message) => void;
  readonly maxChars: number | undefined;
  readonly marked: ((result: ToolResultMessage) => ToolResultMessage) | undefined;
  readonly tasks: RunTasks | undefined;
  /** Code mode's: a code call's result with its program's calls and logs; absent without code mode. */
  readonly programRecord: ((result: ToolResultMessage) => ToolResultMessage) | undefined;
  /** What calls spent on models, by call id, until their results enter; made when a tool first spends. */
  spentByCall: Map<string, SubagentUsage[]> | undefined;
};

// Each result enters the session as a tool guardrail left it, then shortened if it is too long,
// with what its call spent (and, for a code call, its program's record).
function enterResult(this: RunResults, result: ToolResultMessage): void {
  const { session, marked, maxChars } = this;
  const guarded = marked === undefined ? result : marked(result);
  this.add(withRecords(this, maxChars === undefined ? guarded : offload(session, guarded, maxChars)));
  if (this.tasks !== undefined) taskResultEntered(session, result);
}

// Every event counts in the run's metrics; `run-end` carries them. The loop's own events go
// through `turnStart`/`turnEnd` and the session writer, built only when someone listens. Without
// `listening` nobody ever can: the run keeps no metrics and builds no events.
function runEvents(
  report: (event: AgentEvent) => void,
  listening: (() => boolean) | undefined,
  state: RunState,
  prefix: PrefixTracking | undefined,
  prices: AgentLoopOptions["prices"],
): Pick<RunContext, "emit" | "turnStart" | "turnEnd"> & { message: (stored: Message) => void } {
  const events = listening === undefined ? unheardRunEvents : createRunEvents(report, listening, prices);
  return {
    emit: (event) => {
      if (event.type === "text-delta") state.streamedText += event.delta;
      else if (event.type === "retry" || event.type === "text-retract") state.streamedText = "";
      // What the next request's cache event blames when its prefix changed.
      else if (event.type === "compaction" && prefix !== undefined) prefix.changedBy = "compaction";
      events.emit(event);
    },
    turnStart: (iteration) => {
      state.streamedText = "";
      events.turnStart(iteration);
    },
    turnEnd: events.turnEnd,
    message: events.message,
  };
}

function sessionWriter(
  session: Session,
  message: (stored: Message) => void,
  {
    log,
    agentName,
    agent,
  }: { log: ((line: string) => void) | undefined; agentName: string | undefined; agent: string | undefined },
): Pick<RunContext, "add" | "addTurn"> {
  // Shared functions, not closures of the writer's: a message added reaches the writer's own
  // closure and context only (each more object is another fetch when the run's objects are cold).
  return {
    add: (added) => {
      extendSession(session, stamped(added, agent));
      announce(session.messages[session.messages.length - 1]!, message, log, agentName);
    },
    // A model turn enters whole before anyone hears of it: a store writes it in one piece.
    addTurn: (messages) => {
      const stored = agent === undefined ? messages : messages.map((each) => stamped(each, agent));
      extendSessionWith(session, stored);
      for (const each of stored) announce(each, message, log, agentName);
      return stored;
    },
  };
}

function stamped<M extends Message>(message: M, agent: string | undefined): M {
  return agent === undefined ? message : { ...message, agent };
}

function announce(
  stored: Message,
  message: (stored: Message) => void,
  log: ((line: string) => void) | undefined,
  agentName: string | undefined,
): void {
  if (log !== undefined) log(formatLogLine(stored, agentName));
  message(stored);
}

// The run's budget: its own limit, within the one it was given (a parent's call, a `runAgent` call).
function runLedger(options: AgentLoopOptions): BudgetLedger {
  return createBudgetLedger({
    limit: options.budget,
    prices: options.prices ?? options.parentBudget?.prices,
    within: options.parentBudget,
  });
}

// What tools spend on models (subagents, or a tool's own calls) counts in the run's ledger at
// once, and enters the session on the call's result (by model), where the metrics read it.
function toolSpending(ledger: BudgetLedger, results: RunResults): ToolSpending {
  return {
    ledger,
    record: (id, charge) => {
      const spentByCall = (results.spentByCall ??= new Map<string, SubagentUsage[]>());
      const entries = spentByCall.get(id) ?? [];
      spentByCall.set(id, entries);
      addSubagentUsage(entries, charge);
    },
  };
}

// A result with what its call spent on models and, for a code call, its program's record.
function withRecords(results: RunResults, result: ToolResultMessage): ToolResultMessage {
  const { spentByCall, programRecord } = results;
  const recorded = programRecord === undefined ? result : programRecord(result);
  // Most runs' tools spend nothing on models: nothing to look up.
  if (spentByCall === undefined || spentByCall.size === 0) return recorded;
  const spent = spentByCall.get(recorded.id);
  if (spent === undefined) return recorded;
  spentByCall.delete(recorded.id);
  return { ...recorded, subagentUsage: spent };
}

/** What code mode changes in a run: the tools offered and executed, and the code calls' results. */
type CodeModeParts = {
  readonly offer: ToolOffer;
  readonly definitions: readonly ToolDefinition[];
  /** Code mode's record of a code call's program, for its result; absent without code mode. */
  readonly programRecord: ((result: ToolResultMessage) => ToolResultMessage) | undefined;
  /** The offer, and the exclusive tools' names with code mode. */
  readonly executorOptions: { offer: ToolOffer; programOnly?: ReadonlySet<string>; codeTool?: ToolDefinition };
};

// The run's tool offer, with code mode's tool when it is on; its program calls run on the executor made after it.
function codeModeParts(
  options: AgentLoopOptions,
  tools: readonly ToolDefinition[],
  {
    maxChars,
    marked,
  }: { maxChars: number | undefined; marked: ((result: ToolResultMessage) => ToolResultMessage) | undefined },
  executor: () => ToolExecutor,
): CodeModeParts {
  const settings = readCodeMode(options.codeMode, tools);
  if (settings === undefined) {
    const offer = createToolOffer(tools, maxChars ?? defaultLargeOutputChars);
    return {
      offer,
      definitions: offer.definitions,
      programRecord: undefined,
      executorOptions: { offer },
    };
  }
  // A program gets a call's result as the tool guardrails left it, as the model would.
  const codeMode: CodeMode = createCodeMode(
    settings,
    (call, scope, turn, caller) => {
      const outcome = executor().startProgramCall(call, scope, turn, caller);
      if (marked === undefined) return outcome;
      return outcome.then((settled) => (settled.type === "tool_result" ? marked(settled) : settled));
    },
    (session, id) => offer.loadedBefore(session, id),
  );
  const offer = createToolOffer(tools, maxChars ?? defaultLargeOutputChars, codeMode);
  return {
    offer,
    definitions: offer.definitions,
    programRecord: codeMode.withRecord,
    executorOptions:
      codeMode.programOnly === undefined
        ? { offer, codeTool: codeMode.tool }
        : { offer, programOnly: codeMode.programOnly, codeTool: codeMode.tool },
  };
}

// Tool events are built, and a tool may ask the user something, only in a run that can be heard.
function heardBy(
  elicitations: Elicitations | undefined,
  listening: (() => boolean) | undefined,
  emit: (event: AgentEvent) => void,
): { onEvent?: (event: AgentEvent) => void; elicit?: ToolElicit } {
  if (listening === undefined) return {};
  if (elicitations === undefined) return { onEvent: emit };
  elicitations.emit = emit;
  return { onEvent: emit, elicit: elicitations.ask };
}
