// @ts-check
/**
 * `/assets/turn-stats.js`: what a turn of the timeline cost and how it ended, and how its calls
 * were decided: denied, waiting, or how long they waited for a human. No DOM here.
 */
import { timeOf } from "./dom.js";
import { isCount, isObject } from "./entry-check.js";
import { callCost } from "./model-cost.js";

/** @typedef {import("./timeline.js").JsonObject} JsonObject */
/** @typedef {import("./timeline.js").Turn} Turn */
/** @typedef {import("./timeline.js").TurnStats} TurnStats */

/**
 * What a turn cost and how it ended: tokens summed over its model calls (a model call: a run of
 * model messages), tool calls and their errors, calls waiting for approval, time from its first
 * message to its last, less the time calls waited for approval. Removed (compacted) history
 * counts: it happened.
 * @param {Turn} turn
 * @returns {TurnStats}
 */
export function turnStats(turn) {
  /** @type {TurnStats} */
  const stats = {
    start: undefined,
    end: undefined,
    durationMs: undefined,
    waitMs: 0,
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    modelCalls: 0,
    toolCalls: 0,
    errors: 0,
    denied: 0,
    pending: 0,
    aborted: false,
    stopReason: undefined,
    removed: false,
    costUsd: undefined,
  };
  let inModelCall = false;
  for (const item of turn.items) {
    if (item.kind !== "message") {
      inModelCall = false;
      continue;
    }
    const message = item.message;
    const result = item.result && item.result.message;
    for (const at of [timeOf(message.ts), result && timeOf(result.ts)]) {
      if (at === undefined) continue;
      if (stats.start === undefined || at < stats.start) stats.start = at;
      if (stats.end === undefined || at > stats.end) stats.end = at;
    }
    const model = isModelMessage(message);
    if (model && !inModelCall) stats.modelCalls++;
    inModelCall = model;
    if (message.role === "user" && item.removedBy) stats.removed = true;
    const usage = message.usage;
    if (isObject(usage)) {
      stats.inputTokens += isCount(usage.inputTokens) ? usage.inputTokens : 0;
      stats.outputTokens += isCount(usage.outputTokens) ? usage.outputTokens : 0;
      stats.cacheReadTokens += isCount(usage.cacheReadTokens) ? usage.cacheReadTokens : 0;
      const cost = callCost(message.model, usage);
      if (cost !== undefined) stats.costUsd = (stats.costUsd ?? 0) + cost;
    }
    if (typeof message.stopReason === "string") {
      stats.stopReason = message.stopReason;
      if (message.stopReason === "aborted") stats.aborted = true;
    }
    if (message.type === "tool_call") {
      stats.toolCalls++;
      stats.waitMs += waitOf(result);
      if (denialOf(message, result)) stats.denied++;
      else if (result && result.isError === true) stats.errors++;
      const approval = message.approval;
      if (!result && isObject(approval) && approval.status === "pending") stats.pending++;
    }
  }
  if (stats.start !== undefined && stats.end !== undefined)
    stats.durationMs = Math.max(0, stats.end - stats.start - stats.waitMs);
  return stats;
}

/**
 * Model output: assistant text, thinking, a tool call. Not the loop's mark of an abort.
 * @param {JsonObject} message
 */
export function isModelMessage(message) {
  return (
    (message.role === "assistant" && !isAbortMark(message)) ||
    message.type === "thinking" ||
    message.type === "tool_call"
  );
}

/**
 * The loop's own mark of an abort: an assistant message with stop reason `aborted` and nothing from
 * a model in it (no text, no usage, no output). Drawn as the abort it is, not as a model call.
 * @param {JsonObject} message
 */
export function isAbortMark(message) {
  return (
    message.role === "assistant" &&
    message.stopReason === "aborted" &&
    (message.content === undefined || message.content === "") &&
    message.usage === undefined &&
    message.output === undefined
  );
}

/**
 * How long a tool result says its call waited for a human's decision (ms), or 0.
 * @param {JsonObject | undefined} result
 */
export function waitOf(result) {
  return result !== undefined && isCount(result.waitMs) ? result.waitMs : 0;
}

/**
 * Whether a call was denied, and why: by `resolveApproval` (its approval says so), or by the
 * CLI's prompt (an error result saying "the user denied this call", with the user's reason).
 * @param {JsonObject} call
 * @param {JsonObject | undefined} result
 * @returns {{ reason: string } | undefined}
 */
export function denialOf(call, result) {
  const approval = call.approval;
  if (isObject(approval) && approval.status === "denied")
    return { reason: typeof approval.reason === "string" ? approval.reason : "" };
  if (result === undefined || result.isError !== true || typeof result.output !== "string") return undefined;
  // The loop gives a hook's denial as "Denied: " and the hook's words.
  const said = /^(?:Denied: )?the user denied this call(?:: |\s*)/.exec(result.output);
  if (said === null) return undefined;
  const reason = result.output.slice(said[0].length).trim();
  return { reason: reason === "(no reason given)" ? "" : reason };
}
