import type { ElicitationRequest } from "../tools/elicitation.ts";
import type { ModelDeltaEvent } from "../model/model-stream-event.ts";
import type { RunMetrics } from "./run-metrics.ts";
import type { BudgetOverrun, JsonObject, Message, StopReason, Usage, UserMessage } from "../session.ts";
import type { ToolExecutionEvent } from "../tools/tool-events.ts";
import type { GuardrailEvent } from "../guardrails/guardrail.ts";
import type { TaskEvent } from "../tools/task-registry.ts";

/** How a run ended. */
export type RunOutcome =
  /** The model answered without tool calls. */
  | "done"
  /** The model stopped for another reason than tool use (e.g. `max_tokens`); its tool calls got error results. */
  | "stopped"
  /** The signal aborted the run; an `aborted` assistant message closes the session. */
  | "aborted"
  /** `maxIterations` was reached; the loop throws `MaxIterationsError`. */
  | "max-iterations"
  /** `invokeModel` (or a hook) threw; the loop rethrows it. */
  | "error"
  /** Tool calls wait for a human's approval; see `resolveApproval`. Run the loop again to resume. */
  | "paused"
  /** `stopWhen` returned true after a turn's tool results were in. */
  | "stop-condition"
  /** The loop guard refused a repeated call and the model repeated it again (`loop-detected` event). */
  | "loop-detected"
  /** `timeouts.runMs` ran out: the run ended as an abort does; `error` describes the `TimeoutError`. */
  | "timeout"
  /**
   * A guardrail blocked the input or the answer: the blocked message is replaced by its
   * `[blocked by <name>]` marker (every call answered); `error` says which and why.
   */
  | "blocked";

/**
 * Every event of a run, in order. Plain objects, named noun-verb with start/delta/end.
 * `message` is emitted for every message as it enters the session.
 */
export type AgentEvent =
  /** The run began; `agentName` is the `name` option. */
  /**
   * The run begins. `input`: the user messages it starts with that no model has answered yet (those
   * after the session's last model turn, the session's own objects), for listeners in the process
   * such as `otelObserver`; absent when there are none. Non-enumerable: the messages are in the
   * session already, so copies and serialized events (`JSON.stringify`, the HTTP event stream)
   * leave them out and the event keeps its small shape.
   */
  | { type: "run-start"; agentName?: string; input?: UserMessage[] }
  /**
   * The run is over; the last event. `error` is set for `error` and `max-iterations`, `pending`
   * for `paused`. `metrics` (set by the loop) sums up the run.
   */
  | {
      type: "run-end";
      outcome: RunOutcome;
      error?: string;
      /** The error's class name (`error.name`, e.g. `"ProviderError"`), when it was an `Error`. */
      errorType?: string;
      pending?: { id: string; name: string; input: JsonObject }[];
      metrics?: RunMetrics;
      /** With the run's `prices`: what its model calls cost, in USD (also in `metrics.costUsd`). */
      costUsd?: number;
      /**
       * The run went over its `budget` (also in `metrics.budgetExceeded`). A run whose final answer
       * did ends `done` with it: the answer stands, and the session's next run refuses before
       * calling the model unless its budget is larger.
       */
      budgetExceeded?: BudgetOverrun;
      /** The background tasks of the session still running when a run with `backgroundTasks.whenIdle: "end"` ended. */
      runningTasks?: string[];
    }
  /** A model call is about to start. `iteration` counts model calls from 1. */
  | { type: "turn-start"; iteration: number }
  /** The model's turn and its tool results are all in the session. */
  | { type: "turn-end"; iteration: number; stopReason?: StopReason; usage?: Usage }
  | ModelDeltaEvent
  /** A tool call is complete in the model stream (its input is final); with eager tools it starts now. */
  | { type: "tool-call-end"; id: string; name: string; input: JsonObject }
  /**
   * A message entered the session: a copy of it as it entered (what the loop records on the
   * session's message later, such as a waiting call's `approval` or a `heldResult`, is not in it,
   * as it is not in a store's log the event may be replayed from).
   */
  | { type: "message"; message: Message }
  /** A tool call's execution: start, approval request, update, end (see `ToolExecutionEvent`). */
  | ToolExecutionEvent
  /** A background task: started, settled, or found by a run after a restart (see `TaskEvent`). */
  | TaskEvent
  /** A hook threw. A tool hook's failure denies the call (fail closed); a model hook's ends the run. */
  | {
      type: "hook-error";
      hook: "beforeModelCall" | "afterModelCall" | "beforeToolCall" | "afterToolCall";
      id?: string;
      error: string;
    }
  /**
   * A model call failed with a retryable error and will be repeated after `delayMs`. Deltas
   * already shown for the failed attempt are void: nothing of it entered the session.
   */
  | { type: "retry"; iteration: number; attempt: number; delayMs: number; error: string; errorType?: string }
  /** A guardrail answered (every verdict, `allow` included). */
  | GuardrailEvent
  /**
   * Text already streamed (`text-delta`) of an answer that will not stand: a guardrail blocked,
   * redacted or sent it back. `text` is all of it: a display removes it (a redaction's text follows
   * as a new `text-delta`).
   */
  | { type: "text-retract"; text: string }
  /** The model call `iteration` took the run over its `budget` (once a run; the run ends before its next model call). */
  | {
      type: "budget-exceeded";
      iteration: number;
      budget: { usd?: number; tokens?: number };
      spent: { usd?: number; tokens: number };
    }
  /**
   * A tool's MCP server asks the user something mid-call (`connectMcp`'s `elicitation: "events"`):
   * answer with `answerElicitation(id, answer)` on the run's handle. `request` is untrusted text.
   */
  | { type: "elicitation-request"; id: string; server: string; toolCallId: string; request: ElicitationRequest }
  /** The loop guard ended the run: `tool` was called `count` times in a row with the same input (refused calls included). */
  | { type: "loop-detected"; tool: string; count: number }
  /**
   * After each model call: its prompt tokens and how many were read from and written to the
   * provider's cache (`hitRatio` = read / input). `changedAt`: when this request did not begin with
   * the previous request's messages, the index (in the messages the model was sent) of the first
   * that differs, and `changedBy` what changed it.
   */
  | {
      type: "cache";
      iteration: number;
      inputTokens: number;
      cacheReadTokens: number;
      cacheWriteTokens: number;
      hitRatio: number;
      changedAt?: number;
      changedBy?: "compaction" | "steering" | "approval" | "hook" | "guardrail" | "unknown";
    }
  /**
   * Compaction shortened the session: `count` messages replaced by shorter ones (truncated,
   * cleared) or removed (summarized, dropped), by `strategy` (`truncation` for the default, else
   * the strategy's name: `clear-tool-results`, `summary`, `sliding-window`, `custom` for one that
   * names none); `tokensFreed` estimates how much shorter the request is (a token per 4 characters;
   * 0 when a strategy removed messages without a recorded change).
   */
  | { type: "compaction"; count: number; strategy: string; tokensFreed: number }
  /**
   * A compaction strategy could not do its work (a summarizer that failed, called tools, answered
   * nothing or more than it replaces) and fell back: `sliding-window` dropped the older turns
   * without a summary, `none` left the session as it was. The run goes on.
   */
  | { type: "compaction-fallback"; strategy: string; reason: string; fallback: "sliding-window" | "none" };
