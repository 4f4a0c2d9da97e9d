import type { AgentEvent } from "./events.ts";
import { roundMs } from "../numeric-options.ts";
import {
  isModelMessage,
  isToolCall,
  isToolResult,
  type Message,
  type ProgramCall,
  type Session,
  type SubagentUsage,
  type Usage,
} from "../session.ts";
import { sessionOutcome, sessionTurns, type SessionOutcome } from "../session-turns.ts";
import type { RunMetrics } from "./run-metrics.ts";

export type { RunMetrics } from "./run-metrics.ts";
import { costOf, priceOf, type ModelPrice } from "../model/cost.ts";
import { approvalSpending } from "../tools/approval-spending.ts";

/**
 * Sums up a run: `finish()` gives the metrics the `run-end` event carries. Fed either by
 * `observe(event)` (every event of a run, in order) or by the direct calls below, which the loop
 * uses so that a run nobody listens to builds no event objects for its metrics. Times are taken
 * as things happen (model time: from `turn-start` to the first message of the turn, retries
 * included; tool time: from there to `turn-end`).
 */
export type MetricsCollector = {
  observe: (event: AgentEvent) => void;
  finish: () => RunMetrics;
  /** A model call is about to start (`turn-start`). */
  turnStart: () => void;
  /** A message entered the session (`message`). */
  message: (message: Message) => void;
  /** A tool call's execution ended (`tool-execution-end`); it counts once its result is in the session. */
  toolExecuted: (id: string, name: string, durationMs: number, waitMs: number) => void;
  /** The model's turn and its tool results are all in (`turn-end`). */
  turnEnd: (iteration: number, usage: Usage | undefined) => void;
};

/**
 * `prices` (as the run's): each turn's cost, and `costByModel`'s, by the model recorded on its
 * last message; the calls per model are counted with or without prices.
 */
export function createMetricsCollector(
  now: () => number = performanceNow,
  options: SessionMetricsOptions = {},
): MetricsCollector {
  const state = newState(now, options.prices);
  return {
    observe: (event) => observe(state, event),
    finish: () => finish(state),
    turnStart: () => turnStart(state),
    message: (message) => messageEntered(state, message),
    toolExecuted: (id, name, durationMs, waitMs) => toolExecuted(state, id, name, durationMs, waitMs),
    turnEnd: (iteration, usage) => turnEnd(state, iteration, usage),
  };
}

const performanceNow = (): number => performance.now();

// What a run keeps while it goes: plain numbers, no object per turn or per call. A 50-turn run
// held by a server among thousands pays for its session, not for its bookkeeping.
type CollectorState = {
  now: () => number;
  started: number;
  modelCalls: number;
  usage: Required<Usage>;
  modelMs: number;
  toolMs: number;
  waitMs: number;
  tools: RunMetrics["tools"];
  /** Per turn, `turnFields` numbers: iteration, modelMs, toolMs, waitMs, toolCalls (rounded). */
  turns: number[];
  /** Usage by turn index, only once some turn had usage. */
  turnUsage: (Usage | undefined)[] | undefined;
  /** 0: no model call open (the tools of a resumed turn have none in this run). */
  turnStart: number;
  modelEnd: number | undefined;
  toolCalls: number;
  turnWait: number;
  /** Calls executed whose result has not entered the session yet: ids, names and durations by index. */
  executedIds: string[];
  executedNames: string[];
  executedMs: number[];
  prices: SessionMetricsOptions["prices"];
  /** The model recorded on the current turn's messages (the last one wins). */
  turnModel: string | undefined;
  /** By turn index, only once some turn recorded a model. */
  turnModels: (string | undefined)[] | undefined;
  /** What tool calls spent on models (subagents), as recorded on their results. */
  subagentUsage: SubagentUsage[];
};

const turnFields = 5;

function newState(now: () => number, prices: SessionMetricsOptions["prices"]): CollectorState {
  return {
    now,
    prices,
    turnModel: undefined,
    turnModels: undefined,
    subagentUsage: [],
    started: now(),
    modelCalls: 0,
    usage: emptyUsage(),
    modelMs: 0,
    toolMs: 0,
    waitMs: 0,
    tools: {},
    turns: [],
    turnUsage: undefined,
    turnStart: 0,
    modelEnd: undefined,
    toolCalls: 0,
    turnWait: 0,
    executedIds: [],
    executedNames: [],
    executedMs: [],
  };
}

function observe(state: CollectorState, event: AgentEvent): void {
  switch (event.type) {
    case "turn-start":
      return turnStart(state);
    case "message":
      return messageEntered(state, event.message);
    case "tool-execution-end":
      return toolExecuted(state, event.id, event.name, event.durationMs, event.waitMs);
    case "turn-end":
      return turnEnd(state, event.iteration, event.usage);
    case "task-settled":
      // A background task's spending: its result entered (running) before it was spent.
      if (event.subagentUsage !== undefined) for (const entry of event.subagentUsage) state.subagentUsage.push(entry);
      return;
    default:
      return;
  }
}

function turnStart(state: CollectorState): void {
  state.turnStart = state.now();
  state.modelEnd = undefined;
  state.toolCalls = 0;
  state.turnWait = 0;
  state.turnModel = undefined;
  state.modelCalls++;
}

function messageEntered(state: CollectorState, message: Message): void {
  if (state.turnStart !== 0 && isModelMessage(message)) {
    if (state.modelEnd === undefined) state.modelEnd = state.now();
    if (typeof message.model === "string") state.turnModel = message.model;
  }
  if (!("type" in message) || message.type !== "tool_result") return;
  // One by one: a spread of a long array would overflow the stack.
  if (message.subagentUsage !== undefined) for (const entry of message.subagentUsage) state.subagentUsage.push(entry);
  // A call counts once its result is in the session: calls of a discarded (retried) attempt ran
  // but never answered anything.
  countExecuted(state, message.id, message.isError === true);
  // A code call's program calls count with it (one answered from a rerun's record did not run again).
  if (message.programCalls !== undefined)
    for (const call of message.programCalls)
      if (!countExecuted(state, call.id, call.isError === true)) countRecorded(state.tools, call);
}

// Counts an executed call whose result is in; false when it did not execute in this run.
function countExecuted(state: CollectorState, id: string, isError: boolean): boolean {
  const index = state.executedIds.indexOf(id);
  if (index === -1) return false;
  const stats = toolStats(state.tools, state.executedNames[index]!);
  stats.calls++;
  stats.totalMs += state.executedMs[index]!;
  if (isError) stats.errors++;
  state.toolCalls++;
  removeExecuted(state, index);
  return true;
}

function countRecorded(tools: RunMetrics["tools"], call: ProgramCall): void {
  const stats = toolStats(tools, call.name);
  stats.calls++;
  if (call.isError === true) stats.errors++;
}

function toolExecuted(state: CollectorState, id: string, name: string, durationMs: number, waitMs: number): void {
  state.executedIds.push(id);
  state.executedNames.push(name);
  state.executedMs.push(durationMs);
  state.turnWait += waitMs;
}

// Order does not matter: swap the last entry into the hole.
function removeExecuted(state: CollectorState, index: number): void {
  const last = state.executedIds.length - 1;
  state.executedIds[index] = state.executedIds[last]!;
  state.executedNames[index] = state.executedNames[last]!;
  state.executedMs[index] = state.executedMs[last]!;
  state.executedIds.pop();
  state.executedNames.pop();
  state.executedMs.pop();
}

function turnEnd(state: CollectorState, iteration: number, usage: Usage | undefined): void {
  if (state.turnStart === 0) return; // the tools of a resumed turn: no model call in this run
  const end = state.now();
  const modelMs = (state.modelEnd ?? end) - state.turnStart;
  const toolPhase = state.modelEnd === undefined ? 0 : end - state.modelEnd;
  // Waits of parallel calls can overlap: the turn never waited longer than its tool phase.
  const waitMs = Math.min(state.turnWait, toolPhase);
  const toolMs = toolPhase - waitMs;
  state.modelMs += modelMs;
  state.toolMs += toolMs;
  state.waitMs += waitMs;
  if (usage !== undefined) {
    addUsage(state.usage, usage);
    (state.turnUsage ??= [])[state.turns.length / turnFields] = usage;
  }
  if (state.turnModel !== undefined) (state.turnModels ??= [])[state.turns.length / turnFields] = state.turnModel;
  state.turns.push(iteration, roundMs(modelMs), roundMs(toolMs), roundMs(waitMs), state.toolCalls);
  state.turnStart = 0;
}

function finish(state: CollectorState): RunMetrics {
  const metrics: RunMetrics = {
    modelCalls: state.modelCalls,
    usage: { ...state.usage },
    durationMs: state.now() - state.started,
    modelMs: state.modelMs,
    toolMs: state.toolMs,
    waitMs: state.waitMs,
    tools: {},
    turns: [],
  };
  for (const name of Object.keys(state.tools)) Object.assign(toolStats(metrics.tools, name), state.tools[name]);
  const { turns } = state;
  for (let index = 0; index < turns.length; index += turnFields) {
    const usage = state.turnUsage?.[index / turnFields];
    const model = state.turnModels?.[index / turnFields];
    const costUsd = turnCost(state.prices, model, usage);
    metrics.turns.push({
      iteration: turns[index]!,
      modelMs: turns[index + 1]!,
      toolMs: turns[index + 2]!,
      waitMs: turns[index + 3]!,
      toolCalls: turns[index + 4]!,
      ...(usage === undefined ? {} : { usage }),
      ...(model === undefined ? {} : { model }),
      ...(costUsd === undefined ? {} : { costUsd }),
    });
    addCost(metrics, state.prices, model, costUsd);
  }
  addSubagentUsage(metrics, state.prices, state.subagentUsage);
  return rounded(metrics);
}

/** A saved session's metrics, with how it rests: `outcome`, by the one rule the stores, the viewer and the run registry use (`sessionOutcome`). */
export type SessionMetrics = RunMetrics & { outcome: SessionOutcome };

/**
 * The same metrics from a saved session: model turns, token usage and tool counts are exact; times
 * come from the messages' `ts` (millisecond resolution, results timed when they entered the session).
 */
export function sessionMetrics(session: Session, options: SessionMetricsOptions = {}): SessionMetrics {
  const metrics = emptyMetrics();
  const names = new Map<string, { name: string; at: number | undefined }>();
  const time = (message: Message | undefined): number | undefined =>
    message?.ts === undefined ? undefined : Date.parse(message.ts);
  const { messages } = session;
  const subagentUsage: SubagentUsage[] = [];
  for (const turn of sessionTurns(messages)) {
    if (turn.type !== "model") continue;
    const message = messages[turn.start]!;
    // A tool's result given as the answer: no model call made it.
    if ("answerFrom" in message && message.answerFrom !== undefined) continue;
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
      // One by one: a spread of a long array would overflow the stack.
      if (result.subagentUsage !== undefined) for (const entry of result.subagentUsage) subagentUsage.push(entry);
      const resultAt = time(result);
      const waited = typeof result.waitMs === "number" && result.waitMs > 0 ? result.waitMs : 0;
      waitMs += waited;
      if (result.programCalls !== undefined)
        for (const entry of result.programCalls) countRecorded(metrics.tools, entry);
      if (call !== undefined) {
        const stats = toolStats(metrics.tools, call.name);
        stats.calls++;
        if (result.isError === true) stats.errors++;
        if (call.at !== undefined && resultAt !== undefined) stats.totalMs += Math.max(0, resultAt - call.at - waited);
      }
      turnEnd = resultAt ?? turnEnd;
    }
    const usage = "usage" in last ? last.usage : undefined;
    // The latest run's overrun, as its run-end reported it.
    if ("budgetExceeded" in last && last.budgetExceeded !== undefined) metrics.budgetExceeded = last.budgetExceeded;
    const modelMs = before !== undefined && modelEnd !== undefined ? Math.max(0, modelEnd - before) : 0;
    const toolPhase = modelEnd !== undefined && turnEnd !== undefined ? Math.max(0, turnEnd - modelEnd) : 0;
    const turnWait = Math.min(waitMs, toolPhase);
    const toolMs = toolPhase - turnWait;
    metrics.modelCalls++;
    metrics.modelMs += modelMs;
    metrics.toolMs += toolMs;
    metrics.waitMs += turnWait;
    if (usage !== undefined) addUsage(metrics.usage, usage);
    const model = turnModel(messages, turn.start, turn.results);
    const costUsd = turnCost(options.prices, model, usage);
    metrics.turns.push({
      iteration: metrics.modelCalls,
      modelMs,
      toolMs,
      waitMs: turnWait,
      toolCalls,
      ...(usage === undefined ? {} : { usage }),
      ...(model === undefined ? {} : { model }),
      ...(costUsd === undefined ? {} : { costUsd }),
    });
    addCost(metrics, options.prices, model, costUsd);
  }
  unrunSpending(messages, subagentUsage);
  addSubagentUsage(metrics, options.prices, subagentUsage);
  const first = time(messages[0]);
  const lastAt = time(messages[messages.length - 1]);
  metrics.durationMs = first !== undefined && lastAt !== undefined ? lastAt - first : 0;
  return { ...rounded(metrics), outcome: sessionOutcome(messages) };
}

// What classifiers spent on calls with no result yet (waiting for a human, or decided and not run):
// only their approval records it; once a later run answers the call, its result carries it.
function unrunSpending(messages: readonly Message[], into: SubagentUsage[]): void {
  let answered: Set<string> | undefined;
  for (const message of messages) {
    if (!isToolCall(message) || message.approval === undefined) continue;
    answered ??= new Set(messages.filter(isToolResult).map((result) => result.id));
    if (answered.has(message.id)) continue;
    for (const { usage, model } of approvalSpending(message))
      into.push({ ...(model === undefined ? {} : { model }), calls: 1, usage });
  }
}

/** What `sessionMetrics` may price: USD per million tokens by model id (see `ModelPrice`, `priceOf`). */
export type SessionMetricsOptions = { prices?: Readonly<Record<string, ModelPrice>> };

// The model that answered a turn: recorded on its last model message (or any of them, for an older log).
function turnModel(messages: readonly Message[], start: number, end: number): string | undefined {
  for (let index = end - 1; index >= start; index--) {
    const model = (messages[index] as { model?: unknown }).model;
    if (typeof model === "string") return model;
  }
  return undefined;
}

function turnCost(
  prices: SessionMetricsOptions["prices"],
  model: string | undefined,
  usage: Usage | undefined,
): number | undefined {
  if (prices === undefined || usage === undefined) return undefined;
  const price = priceOf(prices, model);
  return price === undefined ? undefined : costOf(usage, price);
}

// With prices the total grows; by model the calls count whether or not they are priced.
function addCost(
  metrics: RunMetrics,
  prices: SessionMetricsOptions["prices"],
  model: string | undefined,
  costUsd: number | undefined,
  calls = 1,
): void {
  if (prices !== undefined) metrics.costUsd = (metrics.costUsd ?? 0) + (costUsd ?? 0);
  if (model === undefined) return;
  metrics.costByModel ??= {};
  if (!Object.hasOwn(metrics.costByModel, model)) {
    Object.defineProperty(metrics.costByModel, model, {
      value: { costUsd: 0, calls: 0 },
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  const entry = metrics.costByModel[model]!;
  entry.calls += calls;
  entry.costUsd += costUsd ?? 0;
}

// Subagents' calls: summed apart from the run's own, priced into the total and by model.
function addSubagentUsage(
  metrics: RunMetrics,
  prices: SessionMetricsOptions["prices"],
  entries: readonly SubagentUsage[],
): void {
  if (entries.length === 0) return;
  const subagents: NonNullable<RunMetrics["subagents"]> = { modelCalls: 0, usage: emptyUsage() };
  for (const entry of entries) {
    subagents.modelCalls += entry.calls;
    addUsage(subagents.usage, entry.usage);
    const costUsd = turnCost(prices, entry.model, entry.usage);
    if (prices !== undefined) subagents.costUsd = (subagents.costUsd ?? 0) + (costUsd ?? 0);
    addCost(metrics, prices, entry.model, costUsd, entry.calls);
  }
  metrics.subagents = subagents;
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
