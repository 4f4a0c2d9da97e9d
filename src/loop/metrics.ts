import type { AgentEvent } from "./events.ts";
import { roundMs } from "../numeric-options.ts";
import { isModelMessage, isToolCall, isToolResult, type Message, type Session, type Usage } from "../session.ts";
import { sessionTurns } from "../session-turns.ts";
import type { RunMetrics } from "./run-metrics.ts";

export type { RunMetrics } from "./run-metrics.ts";


/**
 * Watches a run's events and sums them up; `finish()` gives the metrics the `run-end` event
 * carries. Times come from the events as they happen (model time: from `turn-start` to the first
 * message of the turn, retries included; tool time: from there to `turn-end`).
 */
export function createMetricsCollector(now: () => number = () => performance.now()): {
  observe: (event: AgentEvent) => void;
  finish: () => RunMetrics;
} {
  const started = now();
  const metrics = emptyMetrics();
  let turnStart = 0;
  let modelEnd: number | undefined;
  let toolCalls = 0;
  let turnWait = 0;
  const executions = new Map<string, { name: string; durationMs: number }>();
  return {
    observe(event) {
      switch (event.type) {
        case "turn-start":
          turnStart = now();
          modelEnd = undefined;
          toolCalls = 0;
          turnWait = 0;
          metrics.modelCalls++;
          break;
        case "message": {
          const message = event.message;
          if (modelEnd === undefined && turnStart !== 0 && isModelMessage(message)) modelEnd = now();
          // A call counts once its result is in the session: calls of a discarded (retried)
          // attempt ran but never answered anything.
          const result = "type" in message && message.type === "tool_result" ? message : undefined;
          const executed = result === undefined ? undefined : executions.get(result.id);
          if (result === undefined || executed === undefined) break;
          executions.delete(result.id);
          toolCalls++;
          const stats = toolStats(metrics.tools, executed.name);
          stats.calls++;
          stats.totalMs += executed.durationMs;
          if (result.isError === true) stats.errors++;
          break;
        }
        case "tool-execution-end":
          executions.set(event.id, { name: event.name, durationMs: event.durationMs });
          turnWait += event.waitMs;
          break;
        case "turn-end": {
          if (turnStart === 0) break; // the tools of a resumed turn: no model call in this run
          const end = now();
          const modelMs = (modelEnd ?? end) - turnStart;
          const toolPhase = modelEnd === undefined ? 0 : end - modelEnd;
          // Waits of parallel calls can overlap: the turn never waited longer than its tool phase.
          const waitMs = Math.min(turnWait, toolPhase);
          const toolMs = toolPhase - waitMs;
          metrics.modelMs += modelMs;
          metrics.toolMs += toolMs;
          metrics.waitMs += waitMs;
          if (event.usage !== undefined) addUsage(metrics.usage, event.usage);
          metrics.turns.push({ iteration: event.iteration, modelMs: roundMs(modelMs), toolMs: roundMs(toolMs), waitMs: roundMs(waitMs), toolCalls, ...(event.usage === undefined ? {} : { usage: event.usage }) });
          turnStart = 0;
          break;
        }
        default:
          break;
      }
    },
    finish() {
      metrics.durationMs = now() - started;
      return rounded(metrics);
    },
  };
}

/**
 * The same metrics from a saved session: model turns, token usage and tool counts are exact; times
 * come from the messages' `ts` (millisecond resolution, results timed when they entered the session).
 */
export function sessionMetrics(session: Session): RunMetrics {
  const metrics = emptyMetrics();
  const names = new Map<string, { name: string; at: number | undefined }>();
  const time = (message: Message | undefined): number | undefined => (message?.ts === undefined ? undefined : Date.parse(message.ts));
  const { messages } = session;
  for (const turn of sessionTurns(messages)) {
    if (turn.type !== "model") continue;
    const message = messages[turn.start]!;
    const before = time(messages[turn.start - 1]);
    const last = messages[turn.results - 1]!;
    let toolCalls = 0;
    let waitMs = 0;
    for (let index = turn.start; index < turn.results; index++) {
      const call = messages[index]!;
      if (isToolCall(call)) {
        toolCalls++;
        names.set(call.id, { name: call.name, at: time(call) });
      }
    }
    const modelEnd = time(message);
    let turnEnd = time(last);
    for (let index = turn.results; index < turn.end; index++) {
      const result = messages[index]!;
      if (!isToolResult(result)) continue;
      const call = names.get(result.id);
      const resultAt = time(result);
      const waited = typeof result.waitMs === "number" && result.waitMs > 0 ? result.waitMs : 0;
      waitMs += waited;
      if (call !== undefined) {
        const stats = toolStats(metrics.tools, call.name);
        stats.calls++;
        if (result.isError === true) stats.errors++;
        if (call.at !== undefined && resultAt !== undefined) stats.totalMs += Math.max(0, resultAt - call.at - waited);
      }
      turnEnd = resultAt ?? turnEnd;
    }
    const usage = "usage" in last ? last.usage : undefined;
    const modelMs = before !== undefined && modelEnd !== undefined ? Math.max(0, modelEnd - before) : 0;
    const toolPhase = modelEnd !== undefined && turnEnd !== undefined ? Math.max(0, turnEnd - modelEnd) : 0;
    const turnWait = Math.min(waitMs, toolPhase);
    const toolMs = toolPhase - turnWait;
    metrics.modelCalls++;
    metrics.modelMs += modelMs;
    metrics.toolMs += toolMs;
    metrics.waitMs += turnWait;
    if (usage !== undefined) addUsage(metrics.usage, usage);
    metrics.turns.push({ iteration: metrics.modelCalls, modelMs, toolMs, waitMs: turnWait, toolCalls, ...(usage === undefined ? {} : { usage }) });
  }
  const first = time(messages[0]);
  const lastAt = time(messages[messages.length - 1]);
  metrics.durationMs = first !== undefined && lastAt !== undefined ? lastAt - first : 0;
  return rounded(metrics);
}

function emptyMetrics(): RunMetrics {
  return { modelCalls: 0, usage: emptyUsage(), durationMs: 0, modelMs: 0, toolMs: 0, waitMs: 0, tools: {}, turns: [] };
}

// An own property whatever the name: `tools[name] ??= …` with `__proto__` would hand back
// Object.prototype, and the counts would be written onto every object of the process.
function toolStats(tools: RunMetrics["tools"], name: string): RunMetrics["tools"][string] {
  if (Object.hasOwn(tools, name)) return tools[name]!;
  const stats = { calls: 0, errors: 0, totalMs: 0 };
  Object.defineProperty(tools, name, { value: stats, enumerable: true, writable: true, configurable: true });
  return stats;
}

function rounded(metrics: RunMetrics): RunMetrics {
  metrics.durationMs = roundMs(metrics.durationMs);
  metrics.modelMs = roundMs(metrics.modelMs);
  metrics.toolMs = roundMs(metrics.toolMs);
  metrics.waitMs = roundMs(metrics.waitMs);
  for (const name of Object.keys(metrics.tools)) metrics.tools[name]!.totalMs = roundMs(metrics.tools[name]!.totalMs);
  return metrics;
}


function emptyUsage(): Required<Usage> {
  return { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };
}

function addUsage(total: Required<Usage>, usage: Usage): void {
  total.inputTokens += usage.inputTokens;
  total.outputTokens += usage.outputTokens;
  total.cacheReadTokens += usage.cacheReadTokens ?? 0;
  total.cacheWriteTokens += usage.cacheWriteTokens ?? 0;
  total.reasoningTokens += usage.reasoningTokens ?? 0;
}
