import type { AgentEvent } from "../loop/events.ts";
import type { AgentHooks } from "../loop/hooks.ts";
import { priceOf, type ModelPrice } from "../model/cost.ts";
import type { InvokeModel } from "../model/invoke-model.ts";
import { summarizeOlderTurns } from "../loop/context-strategies.ts";
import { clearToolResults } from "../loop/clear-tool-results.ts";
import { agentStream, type AgentStream } from "../loop/loop.ts";
import { findOpenTurn } from "../loop/open-turn.ts";
import type { ContentPart } from "../content-parts.ts";
import { isModelMessage, response, send, type Session } from "../session.ts";
import type { Tool } from "../tools/tool.ts";
import type { ApprovalPolicy } from "../tools/approval-policy.ts";
import type { TaskOutput, TaskResult } from "./task-output.ts";

/** Everything a task runs with; one per CLI run, shared by the tasks of an interactive session. */
export type TaskContext = {
  invokeModel: InvokeModel;
  /** The tools, or what gives them as they are when each task starts (MCP servers change theirs). */
  tools: Tool[] | (() => Tool[]);
  /**
   * The session, bound to its file: every message is saved as it enters. A function: the session
   * is stored only when a task needs it; each task calls it and works in the session it resolves to.
   */
  session: Session | (() => Promise<Session>);
  hooks: AgentHooks;
  /** Who approves each tool call: rules, then the human (see `cliPolicy`); every decision is recorded on its call. */
  approvalPolicy?: ApprovalPolicy;
  /** At most this many model calls per task. */
  maxTurns: number;
  /** `--code-mode`: the model also gets `run_code`. */
  codeMode?: boolean;
  /**
   * The model's context window in tokens: past 80% of it (estimated from the last call's usage),
   * older turns are summarized by the model; a context overflow compacts and retries once.
   */
  contextWindow: number;
  output: TaskOutput;
  /**
   * Prices by model id: each task's metrics carry its cost, at the answering model's price, else
   * (the provider named none, or one without a price) at the price of `model`, the one asked for.
   */
  prices?: Record<string, ModelPrice>;
  /** The model the CLI asks for (`--model`, `/model`). */
  model?: string;
  /**
   * What this CLI process spent in USD (summed from each task's metrics) and, with `--max-cost`,
   * the most it may: each task runs with what is left as its budget, and none starts once it is
   * spent. `unpricedSaid`: a call without any known price was reported (once a process).
   */
  spending?: { spentUsd: number; limitUsd?: number; unpricedSaid?: boolean };
  /** Called once each task's run has ended, however it ended. */
  runEnded?: () => void;
  /** Tells the user something outside the task's own lines (a warning). */
  warn?: (text: string) => void;
  /**
   * Routes Ctrl-C to `onInterrupt` while a task runs, and lines the user enters meanwhile to `join`
   * (the run's follow-up; it returns what takes the line back); returns the function that stops it.
   */
  watchInterrupts: (onInterrupt: () => void, join?: (line: string) => () => boolean) => () => void;
  /** Ends the process at once, with this exit code (a second Ctrl-C). */
  exitNow: (code: number) => void;
  /**
   * The user message of a task as typed: its attachments added (`--attach`, `@path`). Throws, with
   * a message for the user, when one cannot be attached; the task then fails before anything is sent.
   */
  userContent?: (task: string) => Promise<string | ContentPart[]>;
};

/**
 * Runs one task in the session: the task as a user message, then the loop until the model
 * answers, everything shown on `output`. The first Ctrl-C aborts the run (it ends with the loop's
 * `aborted` message, the session stays valid and saved); a second one before it has ended exits
 * with 130. Never throws: a failed run is a result with its error.
 */
export async function runTask(context: TaskContext, task: string): Promise<TaskResult> {
  const { output } = context;
  let session: Session;
  let content: string | ContentPart[];
  try {
    content = context.userContent === undefined ? task : await context.userContent(task);
    session = typeof context.session === "function" ? await context.session() : context.session;
  } catch (error) {
    const failed: TaskResult = { outcome: "error", error };
    output.finish(failed);
    return failed;
  }
  const left = budgetLeft(context);
  if (left !== undefined && left <= 0) {
    const refused: TaskResult = {
      outcome: "error",
      error: new Error(
        `--max-cost $${context.spending?.limitUsd}: this run has spent $${context.spending?.spentUsd.toFixed(4)}; start the CLI again (--resume) with a higher --max-cost to go on`,
      ),
    };
    output.finish(refused);
    return refused;
  }
  // A resumed session may end with calls left unanswered (a library run paused for a human's
  // approval, a crash): the run answers them first, asking about those that wait, and the task
  // reaches the model after their results. Sent now, it would leave them without a result for good.
  const open = findOpenTurn(session.messages).toolCalls.length > 0;
  if (!open) send(session, content);
  let takeBack: (() => boolean) | undefined;
  const controller = new AbortController();
  let run: AgentStream | undefined;
  const stopWatching = context.watchInterrupts(
    () => {
      if (controller.signal.aborted) return context.exitNow(130);
      output.interrupting();
      controller.abort();
    },
    // A line typed meanwhile joins this run: the model gets it once it has answered.
    (line) => run?.followUp(line) ?? (() => true),
  );
  let end: Extract<AgentEvent, { type: "run-end" }> | undefined;
  let result: TaskResult;
  const prices = pricesAsAsked(context);
  const unpriced = unpricedCalls(context, prices);
  try {
    const tools = typeof context.tools === "function" ? context.tools() : context.tools;
    run = agentStream(context.invokeModel, tools, session, {
      signal: controller.signal,
      hooks: context.hooks,
      ...(context.approvalPolicy === undefined ? {} : { approvalPolicy: context.approvalPolicy }),
      maxIterations: context.maxTurns,
      ...(context.codeMode === true ? { codeMode: true } : {}),
      ...(prices === undefined ? {} : { prices }),
      ...(left === undefined ? {} : { budget: { usd: left } }),
      // A coding session keeps every detail until the window fills (file contents matter), then
      // summarizes older turns rather than cutting tool results.
      // Old tool output is cleared first (recall_output reads it back); a summary only near the window.
      compaction: [
        clearToolResults(),
        summarizeOlderTurns({ invokeModel: context.invokeModel, contextWindow: context.contextWindow }),
      ],
    });
    if (open) takeBack = run.steer({ role: "user", content });
    for await (const event of run) {
      if (event.type === "run-end") end = event;
      unpriced(event);
      output.event(event);
    }
    result = { outcome: end?.outcome ?? "done" };
    if (result.outcome === "done") result.answer = response(session)?.content ?? "";
  } catch (error) {
    result = { outcome: end?.outcome ?? "error", error };
  } finally {
    stopWatching();
    context.runEnded?.();
    // The run ended before it reached a model call (interrupted at the prompt): the task stays asked.
    if (takeBack?.() === true) send(session, content);
  }
  if (end?.metrics !== undefined) result.metrics = end.metrics;
  if (context.spending !== undefined) context.spending.spentUsd += end?.metrics?.costUsd ?? 0;
  // The loop times the approval of each call apart (the permission prompt, the CLI's checks before it).
  const waitMs = end?.metrics?.waitMs ?? 0;
  if (waitMs >= 1) result.waitMs = waitMs;
  output.finish(result);
  return result;
}

// The prices a task runs with: a call is priced at the model that answered, else at the model asked
// for, as `priceOf`'s key "" (the price of any model not listed, and of a call that named none).
function pricesAsAsked(context: TaskContext): Record<string, ModelPrice> | undefined {
  const { prices, model } = context;
  if (prices === undefined || model === undefined) return prices;
  const asked = priceOf(prices, model);
  return asked === undefined ? prices : { ...prices, "": asked };
}

// With --max-cost, a call whose cost is unknown (no price for the model that answered, nor for
// the one asked for) would count $0: the cap cannot hold, and the user is told so, once.
function unpricedCalls(
  context: TaskContext,
  prices: Record<string, ModelPrice> | undefined,
): (event: AgentEvent) => void {
  const { spending } = context;
  if (spending?.limitUsd === undefined) return () => undefined;
  let model: string | undefined;
  return (event) => {
    if (event.type === "message" && isModelMessage(event.message) && event.message.model !== undefined)
      model = event.message.model;
    if (event.type !== "turn-end" || event.usage === undefined || spending.unpricedSaid === true) return;
    if (prices !== undefined && priceOf(prices, model) !== undefined) return;
    spending.unpricedSaid = true;
    context.warn?.(
      `warning: --max-cost cannot be enforced: no price is known for ${model === undefined ? "the model that answered (the provider named none)" : `model ${model}`}, so its calls count $0`,
    );
  };
}

// What --max-cost leaves for the next task; undefined without a limit.
function budgetLeft(context: TaskContext): number | undefined {
  const limitUsd = context.spending?.limitUsd;
  return limitUsd === undefined ? undefined : limitUsd - context.spending!.spentUsd;
}
