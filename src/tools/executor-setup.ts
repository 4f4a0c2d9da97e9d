import type { AbortRace } from "../shared/abort.ts";
import type { ToolEvent } from "./tool-events.ts";
import type { ToolHooks } from "./tool-hooks.ts";
import type { BudgetCharge, BudgetLedger } from "../model/budget.ts";
import type { Session, ToolCallMessage } from "../session.ts";
import type { ToolDefinition, ToolHandler, ToolHandlers } from "./tool.ts";
import type { ToolCallRecorder } from "./tool-call-recorder.ts";
import type { LoopGuard } from "./loop-guard.ts";
import type { TaskHost } from "./task-types.ts";
import type { ApprovalChain } from "./approval-setup.ts";
import type { ToolElicit } from "./elicitation.ts";

/**
 * What every phase of a tool call reads, built once per executor (`createExecutorSetup`) so a
 * call pays for no lookups or defaults of its own.
 */
export type ExecutorSetup = {
  /** The tool definitions by name. */
  readonly definitions: ReadonlyMap<string, ToolDefinition>;
  /** Handlers for bare schemas, read only through `findHandler`. */
  readonly toolHandlers: ToolHandlers;
  /** Given to hooks and handlers: the run's session, or an empty one outside a run. */
  readonly session: Session;
  readonly agentName: string | undefined;
  /** Milliseconds before a handler is abandoned, unless its tool sets its own `timeout`. */
  readonly toolTimeout: number | undefined;
  readonly hooks: ToolHooks | undefined;
  readonly onEvent: ((event: ToolEvent) => void) | undefined;
  /** Which tools the model is shown now, and whether a deferred one may be called; absent outside a run. */
  readonly offer: ExecutorOffer | undefined;
  /** Set when the model records tool calls (a cassette): every handler runs through it. */
  readonly recorder: ToolCallRecorder | undefined;
  /** How the run counts what its tools spend on models; absent outside a run. */
  readonly spending: ToolSpending | undefined;
  /** Refuses a call repeated too often in a row, before its gate; absent when `loopGuard: false`. */
  readonly loopGuard: LoopGuard | undefined;
  /** Who hears of the background tasks calls start (the run's events, its `onTaskSettled`); absent outside a run with background tools. */
  readonly tasks: TaskHost | undefined;
  /** The run's `approvalPolicy`, compiled; absent without one. */
  readonly approvals: ApprovalChain | undefined;
  /** How a call asks the run's user (`ToolContext.elicit`); absent when no one can answer. */
  readonly elicit: ToolElicit | undefined;
  /** Tools only a code-mode program may call (`codeMode.exclusive`): a direct call is an unknown tool. */
  readonly programOnly: ReadonlySet<string> | undefined;
  /** The run's `run_code` tool with code mode: not recorded itself, its program's calls each are (so a replay reruns the program). */
  readonly codeTool: ToolDefinition | undefined;
};

/** How a run counts model calls made for its tool calls (subagents') against its budget. */
export type ToolSpending = {
  /** The run's ledger: each call's own ledger is within it (`ToolContext.budget`). */
  readonly ledger: BudgetLedger;
  /** Records what was charged for the call `id`, for its result (`subagentUsage`). */
  readonly record: (id: string, charge: BudgetCharge) => void;
};

/** What a run tells its executor about the tools it shows the model (see the loop's `ToolOffer`). */
export type ExecutorOffer = {
  /** Whether tool `name` may be called in the call `id`: a deferred tool only once loaded. */
  readonly callable: (session: Session, name: string, id: string) => boolean;
  /** The names of the tools the model is shown now. */
  readonly names: (session: Session) => readonly string[];
};

/** Where calls run: the signal that aborts them and the race every wait of theirs goes through. */
export type CallScope = { readonly signal: AbortSignal; readonly abortRace: AbortRace };

/** One call on its way through its phases, with everything they read. */
export type ToolCallRun = CallScope & {
  readonly call: ToolCallMessage;
  readonly setup: ExecutorSetup;
  /** The calls of the model turn up to and including this one, in call order (`ToolContext.turn`). */
  readonly turn: readonly ToolCallMessage[];
  /** Set when the call runs as a background task (`ToolContext.task`): its handler runs, never a new task. */
  readonly task?: { readonly id: string; readonly attempt: number };
  /** Set for a call a code-mode program started: the id of its code call (see `ToolExecutionEvent`). */
  readonly caller?: string;
};

/** The options `createExecutorSetup` reads. */
export type ExecutorSetupOptions = {
  toolTimeout?: number | undefined;
  session?: Session;
  agentName?: string | undefined;
  onEvent?: (event: ToolEvent) => void;
  hooks?: ToolHooks | undefined;
  offer?: ExecutorOffer;
  recorder?: ToolCallRecorder | undefined;
  spending?: ToolSpending;
  loopGuard?: LoopGuard | undefined;
  tasks?: TaskHost | undefined;
  approvals?: ApprovalChain | undefined;
  elicit?: ToolElicit;
  programOnly?: ReadonlySet<string>;
  codeTool?: ToolDefinition;
};

export function createExecutorSetup(
  tools: readonly ToolDefinition[],
  toolHandlers: ToolHandlers,
  options: ExecutorSetupOptions,
): ExecutorSetup {
  return {
    definitions: new Map(tools.map((definition) => [definition.name, definition])),
    toolHandlers,
    session: options.session ?? { messages: [] },
    agentName: options.agentName,
    toolTimeout: options.toolTimeout,
    hooks: options.hooks,
    onEvent: options.onEvent,
    offer: options.offer,
    recorder: options.recorder,
    spending: options.spending,
    loopGuard: options.loopGuard,
    tasks: options.tasks,
    approvals: options.approvals,
    elicit: options.elicit,
    programOnly: options.programOnly,
    codeTool: options.codeTool,
  };
}

/**
 * The handler of a named tool: its definition's own, else one from `toolHandlers` (only its own
 * keys, so a model naming `constructor` or `__proto__` gets an unknown tool).
 */
export function findHandler(
  setup: ExecutorSetup,
  definition: ToolDefinition | undefined,
  name: string,
): ToolHandler | undefined {
  const handler =
    definition !== undefined && "handler" in definition
      ? definition.handler
      : Object.hasOwn(setup.toolHandlers, name)
        ? setup.toolHandlers[name]
        : undefined;
  const recorder = setup.recorder;
  if (handler === undefined || recorder === undefined || definition === setup.codeTool) return handler;
  return (input, context) => {
    const call = { id: context.id, name, input, ...(setup.agentName === undefined ? {} : { agent: setup.agentName }) };
    return recorder(call, async () => await handler(input, context));
  };
}

/** Every tool name the model may call now, for the unknown-tool error: never one it was not shown. */
export function knownToolNames(setup: ExecutorSetup): string[] {
  const { offer, definitions } = setup;
  const shown = offer === undefined ? definitions.keys() : offer.names(setup.session);
  const bare = Object.keys(setup.toolHandlers).filter((name) => !definitions.has(name));
  return [...new Set([...shown, ...bare])];
}
