import type { CompactSessionOptions } from "./compaction.ts";
import type { CompactionStrategy } from "./compaction-strategy.ts";
import { AgentError, describeValue } from "../errors.ts";
import type { AgentEvent } from "./events.ts";
import type { AgentHooks } from "./hooks.ts";
import type { LoggerOption } from "../logger.ts";
import { checkBoolean, checkNumber, type NumberRule } from "../numeric-options.ts";
import { checkRetryOptions, type RetryOptions } from "./retry.ts";
import type { OutputSchema } from "./structured-output.ts";
import {
  checkToolTimeout,
  toolNameProblem,
  toolSchemaProblem,
  type ToolDefinition,
  type ToolHandlers,
} from "../tools/tool.ts";
import { checkCompactOptions } from "./compaction.ts";
import { checkModelSettings, type ModelSettings } from "../model/model-settings.ts";
import type { ModelPrice } from "../model/cost.ts";
import type { BudgetLedger } from "../model/budget.ts";
import { loopGuardLimit, type StopCondition } from "./stop-conditions.ts";
import { largeOutputChars, type LargeOutputOption } from "./large-output.ts";
import { checkGuardrails, type Guardrails } from "../guardrails/guardrail.ts";
import { checkBackground } from "../tools/background.ts";
import { checkBackgroundTasksOptions, type BackgroundTasksOptions } from "./run-tasks-setup.ts";
import { checkApprovalPolicy, type ApprovalPolicy } from "../tools/approval-policy.ts";
import { readCodeMode, type CodeModeOption } from "../tools/code-mode/code-mode-option.ts";

export type AgentLoopOptions = {
  /** Handlers by tool name, for tools given as bare schemas (a `tool()` definition carries its own). */
  toolHandlers?: ToolHandlers;
  /** The agent's name, in log lines, events and tool contexts. */
  name?: string;
  /**
   * At most this many model calls in this run (default `defaultMaxIterations`, 100; `Infinity` for
   * no limit); reaching it while the model still wants to continue throws `MaxIterationsError`.
   */
  maxIterations?: number;
  /** Run the tool calls of one response concurrently (default `true`), or one after another. */
  parallel?: boolean;
  /** At most this many tool handlers at once: an integer >= 1 (default `Infinity`: no limit). */
  maxParallelTools?: number;
  /**
   * Milliseconds before a tool handler is abandoned with an error result (default `Infinity`: no
   * timer). Longer than a timer can hold (about 24.8 days) waits that long.
   */
  toolTimeout?: number;
  /** Aborts the model call and running tools; the run then ends with an `aborted` assistant message (no throw). */
  signal?: AbortSignal;
  /** Called with every event of the run, in order. A throw here aborts the run cleanly and is rethrown. */
  onEvent?: (event: AgentEvent) => void;
  /** One line per message entering the session: `true` for stderr, or a function. Silent by default. */
  logger?: LoggerOption;
  /**
   * Context management before each model call. By default: truncation compaction, and old tool
   * output cleared in batches as `clearToolResults()` does (read back through `recall_output`).
   * Truncation options: truncation with these options alone. Strategies (`clearToolResults`,
   * `summarizeOlderTurns`, `slidingWindow`, your own) also get one chance to make room after a
   * `ContextOverflowError` before the call is retried once. `false` turns it off.
   */
  compaction?: false | CompactSessionOptions | CompactionStrategy | CompactionStrategy[];
  /**
   * A tool output longer than `maxChars` characters (default 40,000) enters the session as its head
   * and tail, at most `maxChars` in all, around a marker saying how much was left out; the whole
   * output is kept (in the store when the session is bound to one, else in memory) and the
   * `recall_output` tool, then offered to the model, reads it back by lines. `false` turns it off.
   */
  largeOutput?: LargeOutputOption;
  /** Repeats of a model call that failed with a retryable error (default: 2, with backoff); `false` turns them off. */
  retry?: false | RetryOptions;
  /**
   * Start each tool call as soon as it is complete in a streamed response, while the model is
   * still streaming the rest (default `true`; a tool with `eager: false` always waits).
   */
  eagerTools?: boolean;
  /** Hooks at fixed points of the loop: before/after each model call and each tool call. */
  hooks?: AgentHooks;
  /**
   * The final answer must be JSON matching this schema (JSON Schema or Standard Schema): it is
   * parsed and validated, stored as `output` on the final assistant message (read it with
   * `structuredOutput`), and an invalid answer is sent back with the problems. The model is shown
   * the schema in a system message, unless `invokeModel` declares native structured output
   * (`StructuredOutputModel`): then the adapter passes it to the provider.
   */
  output?: OutputSchema;
  /** How many invalid final answers are sent back for correction before `StructuredOutputError`: an integer >= 0 (default 2). */
  outputAttempts?: number;
  /** How to call the model on every call of the run (`context.settings`); `beforeModelCall` may return settings merged over these for one call. */
  settings?: ModelSettings;
  /**
   * Time limits in ms. `modelCallMs`: each attempt of a model call; `firstChunkMs`: the wait for an
   * attempt's first streamed event (its whole answer for a model that does not stream); an
   * attempt past either fails with a retryable `TimeoutError` and goes through the retries.
   * `toolMs`: each tool handler (the same as `toolTimeout`). `runMs`: the whole run, which then
   * ends as an abort does, with outcome `timeout`.
   */
  timeouts?: { modelCallMs?: number; firstChunkMs?: number; toolMs?: number; runMs?: number };
  /** Checked after each turn's tool results are in: true ends the run with outcome `stop-condition`. */
  stopWhen?: StopCondition;
  /**
   * Refuses a tool call repeated more than `limit` times in a row (same tool, same input; default
   * `{ limit: 5 }`) with an error result telling the model to change course, and ends the run
   * (outcome `loop-detected`) when the model repeats it once more. `false` turns it off.
   */
  loopGuard?: false | { limit?: number };
  /** Prices by model id (the `model` recorded on each turn): `run-end` metrics then carry `costUsd`, and `budget.usd` uses them. */
  prices?: Record<string, ModelPrice>;
  /**
   * Ends the run with `BudgetExceededError` (work kept in `.session`, every call answered) once it
   * has spent `usd` (needs `prices`) or `tokens` (input + output): checked before each model call,
   * none starts once `spent >= limit` (a call in flight is not cancelled). What the run's tools
   * spend (subagents, `ToolContext.spend`) and its compaction's summarizer count as they happen.
   */
  budget?: { usd?: number; tokens?: number };
  /**
   * The ledger of the call this run works for (a subagent's: `ToolContext.budget`; a summarizer's:
   * `CompactionContext.budget`): each model call of this run is charged to it (and to every ledger
   * above it) as it ends, and no call of this run starts once any of them is used up. `budget` is
   * then a further limit of this run's own; `prices` defaults to the ledger's.
   */
  parentBudget?: BudgetLedger;
  /** Set as `agent` on every message this run adds to the session (`runAgent` names the active agent). */
  agent?: string;
  /**
   * Checks of what goes in and out (see `Guardrail`): `input` on every new user message, `output`
   * on every final answer, `toolInput` on each tool call before it runs, `toolOutput` on each
   * result before it enters the session.
   */
  guardrails?: Guardrails;
  /** A blocked input or answer throws `GuardrailTrippedError` (with `.session`) instead of ending the run `blocked`. */
  throwOnBlock?: boolean;
  /** What the run does while background tasks of its session run (tools with `background`); see `BackgroundTasksOptions`. */
  backgroundTasks?: BackgroundTasksOptions;
  /**
   * Who approves the run's tool calls: rules, then a classifier, then a human (see
   * `ApprovalPolicy`); each decision is recorded on its call (`approval.decidedBy`). Without it,
   * only a tool's `requireApproval` and the `beforeToolCall` hook stop a call.
   */
  approvalPolicy?: ApprovalPolicy;
  /**
   * Code mode: the model also gets `run_code` (`codeModeName`), whose input is a program calling
   * the tools as async functions in a QuickJS isolate (needs the optional peers
   * `quickjs-emscripten-core`, `@jitl/quickjs-wasmfile-release-sync` and `sucrase`). Each of its
   * calls goes through every check a direct call does; only the program's result enters the
   * context. See `CodeModeOption`.
   */
  codeMode?: CodeModeOption;
};

/**
 * The model calls a run makes at most when `maxIterations` is not given. Peers cap steps by
 * default (the AI SDK's agents at 20, OpenAI Agents at 10 turns), sized for chat assistants; a
 * coding agent often needs dozens of tool turns for one task, and a cap that ends real tasks is
 * worse than none. The cap is there to stop a runaway loop (a model repeating a failing call)
 * from spending without bound; 100 calls does that and matches the CLI's `--max-turns`.
 */
export const defaultMaxIterations = 100;

// The rules of the numeric options, made once: every run checks its options.
const countOrInfinity: NumberRule = { min: 0, integer: true, infinity: true };
const positiveCountOrInfinity: NumberRule = { min: 1, integer: true, infinity: true };
const durationOrInfinity: NumberRule = { min: 0, exclusive: true, infinity: true };
const amountOrInfinity: NumberRule = { min: 0, infinity: true };

/**
 * Checks the options and the tools of a run before it starts: each numeric option (and each
 * tool's `timeout`) must be a number it can mean, and tool names must be unique. Throws an
 * `AgentError` naming the problem.
 */
export function checkLoopOptions(options: AgentLoopOptions, tools: readonly ToolDefinition[]): void {
  checkNumber("maxIterations", options.maxIterations, countOrInfinity);
  // settings and guardrails are checked as objects by their own checks below.
  for (const name of ["timeouts", "budget", "hooks"] as const) checkObject(name, options[name]);
  if (options.loopGuard !== undefined && options.loopGuard !== false) checkObject("loopGuard", options.loopGuard);
  // Written on every message the run adds (a log refuses any other kind at load).
  if (options.agent !== undefined && typeof options.agent !== "string")
    throw new AgentError(`agent must be a string; got ${describeValue(options.agent)}`);
  checkPrices(options.prices);
  checkNumber("maxParallelTools", options.maxParallelTools, positiveCountOrInfinity);
  checkNumber("toolTimeout", options.toolTimeout, durationOrInfinity);
  const { timeouts } = options;
  if (timeouts !== undefined)
    for (const name of ["modelCallMs", "firstChunkMs", "toolMs", "runMs"] as const)
      checkNumber(`timeouts.${name}`, timeouts[name], durationOrInfinity);
  const toolMs = options.timeouts?.toolMs;
  if (toolMs !== undefined && options.toolTimeout !== undefined && toolMs !== options.toolTimeout)
    throw new AgentError(
      `toolTimeout (${options.toolTimeout}) and timeouts.toolMs (${toolMs}) are the same limit: give one, or the same value`,
    );
  checkNumber("budget.usd", options.budget?.usd, amountOrInfinity);
  checkNumber("budget.tokens", options.budget?.tokens, amountOrInfinity);
  const { parentBudget } = options;
  if (
    parentBudget !== undefined &&
    (typeof parentBudget !== "object" ||
      parentBudget === null ||
      typeof parentBudget.charge !== "function" ||
      typeof parentBudget.exhausted !== "function")
  )
    throw new AgentError(
      `parentBudget must be a BudgetLedger (ToolContext.budget); got ${describeValue(parentBudget)}`,
    );
  if (options.budget?.usd !== undefined && options.prices === undefined && parentBudget?.prices === undefined)
    throw new AgentError("budget.usd needs prices: give the prices option (see simple-agent-loop/prices)");
  if (options.settings !== undefined) checkModelSettings(options.settings);
  if (options.approvalPolicy !== undefined) checkApprovalPolicy(options.approvalPolicy);
  if (options.stopWhen !== undefined && typeof options.stopWhen !== "function")
    throw new AgentError("stopWhen must be a function");
  loopGuardLimit(options.loopGuard);
  checkNumber("outputAttempts", options.outputAttempts, countOrInfinity);
  if (options.retry !== undefined && options.retry !== false) checkRetryOptions(options.retry);
  largeOutputChars(options.largeOutput);
  checkGuardrails(options.guardrails);
  checkBoolean("throwOnBlock", options.throwOnBlock);
  checkBackgroundTasksOptions(options.backgroundTasks);
  readCodeMode(options.codeMode, tools);
  const compaction = options.compaction;
  if (
    compaction !== undefined &&
    compaction !== false &&
    typeof compaction !== "function" &&
    !Array.isArray(compaction)
  )
    checkCompactOptions(compaction);
  // The model names a tool; two of one name would leave one silently unreachable.
  const names = new Set<string>();
  for (const definition of tools) {
    const { name } = definition;
    const problem = toolNameProblem(name, definition.description) ?? toolSchemaProblem(definition);
    if (problem !== undefined) throw new AgentError(problem);
    if (names.has(name))
      throw new AgentError(
        `two tools are named "${name}": tool names must be unique (prefix one, as connectMcp's prefix option does)`,
      );
    names.add(name);
    if ("timeout" in definition) checkToolTimeout(name, definition.timeout);
    checkBackground(name, definition.background);
  }
}

// An option that takes an object of settings: a string or an array there is a mistake, not "none".
function checkObject(name: string, value: unknown): void {
  if (value === undefined) return;
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new AgentError(`${name} must be an object; got ${describeValue(value)}`);
}

// Prices by model name: each rate a number of dollars per million tokens.
function checkPrices(prices: unknown): void {
  if (prices === undefined) return;
  checkObject("prices", prices);
  for (const [model, price] of Object.entries(prices as Record<string, unknown>)) {
    checkObject(`prices["${model}"]`, price);
    const rates = price as Partial<Record<string, unknown>>;
    for (const rate of ["inputPerMTok", "outputPerMTok"])
      if (rates[rate] === undefined) throw new AgentError(`prices["${model}"].${rate} is required`);
    for (const rate of ["inputPerMTok", "outputPerMTok", "cacheReadPerMTok", "cacheWritePerMTok"])
      checkNumber(`prices["${model}"].${rate}`, rates[rate], { min: 0 });
  }
}
