import { answerTools, giveAnswer, nextAfterAnswer } from "./answer-tools.ts";
import { runElicitations } from "./elicitations.ts";
import type { ElicitationAnswer } from "../tools/elicitation.ts";
import { guardGivenAnswer } from "./guarded-turn.ts";
import { callModelStep } from "./call-model.ts";
import { releaseStrategies } from "./clear-tool-results.ts";
import { releaseCompaction } from "./default-compaction.ts";
import type { AgentEvent } from "./events.ts";
import { runStream, type RunStream } from "./event-iterator.ts";
import { checkLoopOptions, type AgentLoopOptions } from "./loop-options.ts";
import { callModelNext, type NextStep, type RunEnd } from "./next-step.ts";
import { findOpenTurn } from "./open-turn.ts";
import { createRunContext, type Queues, type RunArguments, type RunContext } from "./run-context.ts";
import { outputCorrection } from "./structured-output.ts";
import { verbatimAnswer } from "./verbatim-answer.ts";
import { closeRunTasks, resumeRunTasks } from "./run-tasks.ts";
import {
  AgentError,
  GuardrailTrippedError,
  TimeoutError,
  describeError,
  errorType,
  isBudgetExceededError,
  isMaxIterationsError,
  isTimeoutError,
} from "../errors.ts";
import type { InvokeModel } from "../model/invoke-model.ts";
import { clampDelay } from "../numeric-options.ts";
import { isModelMessage, type Message, type ModelMessage, type Session, type UserMessage } from "../session.ts";
import type { ToolDefinition } from "../tools/tool.ts";
import { loadIsolate } from "../tools/code-mode/isolate.ts";

export type { AgentLoopOptions } from "./loop-options.ts";

/**
 * Runs the agent until the model answers without tool calls: call the
 * model, add its messages, run its tool calls, add their results in call order, repeat. Mutates
 * and returns `session`. It is `agentStream(...).result`: the one loop, awaited without iterating.
 * Without `onEvent` nobody can hear the run: it builds no events and keeps no metrics.
 */
export async function agentLoop(
  invokeModel: InvokeModel,
  tools: readonly ToolDefinition[],
  session: Session,
  options: AgentLoopOptions = {},
): Promise<Session> {
  // No handle answers a question: a tool's question is cancelled at once, not left to its timeout.
  return startRun({ invokeModel, tools, session, options }, options.onEvent !== undefined, false).result;
}

/**
 * The loop as an async iterable of events for the whole run, starting at the first `next()`.
 * The session is mutated as the run goes. Stopping the iteration early (`break`) aborts the run
 * and waits until the session is valid again (every tool call answered, an `aborted` message
 * last). An error of the run is thrown from the iteration after its `run-end` event. `result`
 * resolves with the session when the run ends, with or without iterating.
 */
export function agentStream(
  invokeModel: InvokeModel,
  tools: readonly ToolDefinition[],
  session: Session,
  options: AgentLoopOptions = {},
): AgentStream {
  return startRun({ invokeModel, tools, session, options }, true);
}

// `audible`: someone may hear the run's events (a listener, or a consumer of the stream). A run
// nobody can hear (`agentLoop` without `onEvent`) builds no events and keeps no metrics.
// `answerable`: a handle can answer the run's questions (`answerElicitation`).
function startRun(run: RunArguments, audible: boolean, answerable = true): AgentStream {
  const { tools, session, options } = run;
  const controller = new AbortController();
  const signal =
    options.signal === undefined ? controller.signal : AbortSignal.any([options.signal, controller.signal]);
  const queues: Queues = { steering: [], followUps: [] };
  const elicitations = runElicitations();
  const stream = runStream<AgentEvent, Session>(
    async (emit, listening) => {
      // Two runs on one session would answer the same calls twice.
      if (running.has(session)) throw new AgentError("a run is already in progress on this session");
      checkLoopOptions(options, tools);
      // Before the first model call: a missing isolate is an error of the run, not of a call.
      if (options.codeMode !== undefined && options.codeMode !== false) await loadIsolate();
      running.add(session);
      const runMs = options.timeouts?.runMs;
      const started = performance.now();
      const timer =
        runMs === undefined || runMs === Number.POSITIVE_INFINITY
          ? undefined
          : setTimeout(
              () => controller.abort(new TimeoutError("runMs", performance.now() - started, { retryable: false })),
              clampDelay(runMs),
            );
      try {
        await runLoop(
          createRunContext({
            ...run,
            signal,
            report: emit,
            listening: audible ? listening : undefined,
            queues,
            ...(answerable ? { elicitations } : {}),
          }),
        );
      } finally {
        clearTimeout(timer);
        running.delete(session);
      }
      return session;
    },
    () => controller.abort(),
    options.onEvent,
  );
  return Object.assign(stream, {
    steer: (message: string | UserMessage) => enqueue(queues.steering, userMessage(message)),
    followUp: (message: string | UserMessage) => enqueue(queues.followUps, userMessage(message)),
    abort: (reason?: unknown) => controller.abort(reason),
    answerElicitation: (id: string, answer: ElicitationAnswer) => elicitations.answer(id, answer),
    session,
  });
}

const running = new WeakSet<Session>();

// Queues `message`; what it returns takes it back while the run has not taken it.
function enqueue(queue: UserMessage[], message: UserMessage): () => boolean {
  queue.push(message);
  return () => {
    const index = queue.indexOf(message);
    if (index !== -1) queue.splice(index, 1);
    return index !== -1;
  };
}

function userMessage(message: string | UserMessage): UserMessage {
  return typeof message === "string" ? { role: "user", content: message } : message;
}

/** The events of a run, `result` (the session once the run ends), and ways to talk to it while it runs. */
export type AgentStream = RunStream<AgentEvent, Session> & {
  /**
   * Adds a user message at the next safe point: once the current turn's tool results are in,
   * before the next model call (or, if the model just answered, as a new question it must answer).
   * Returns a function that takes the message back: `true` when it was still queued (it never
   * enters), `false` when the run had already added it or when it was already taken back.
   */
  steer: (message: string | UserMessage) => () => boolean;
  /**
   * Queues a user message for after the run's task is done: the run goes on with it instead of
   * ending. Returns a function that takes it back, as `steer`'s does; one the run never reached
   * (it ended first: an error, a limit, an abort) stays queued, and taking it back says `true`.
   */
  followUp: (message: string | UserMessage) => () => boolean;
  /**
   * Aborts the run as its `signal` option would: running tools stop, every call is answered, an
   * `aborted` message closes the session and `run-end` (outcome `aborted`) is the last event. The
   * stream goes on to that end for whoever reads it; `result` resolves with the session. Does
   * nothing once the run has ended.
   */
  abort: (reason?: unknown) => void;
  /**
   * Answers the `elicitation-request` event `id` (a question a tool's MCP server put to the user):
   * `{ action: "accept", content? }`, `{ action: "decline" }` or `{ action: "cancel" }`. Returns
   * `false` when no question with that id waits (already answered, cancelled by an abort or its
   * timeout, or unknown). Throws `AgentError` for an answer of another shape.
   */
  answerElicitation: (id: string, answer: ElicitationAnswer) => boolean;
  /**
   * The session the run works on (the one given to `agentStream`), changing as the run goes: what
   * a consumer of the events needs to know beyond them (a call's approval decision, the store it
   * is bound to).
   */
  readonly session: Session;
};

// One run, from `run-start` to `run-end`: the steps, then the one `run-end`; an error of a step
// is rethrown after it.
async function runLoop(run: RunContext): Promise<void> {
  run.emit(runStartEvent(run));
  let end: RunEnd;
  try {
    if (run.tasks !== undefined) resumeRunTasks(run, run.tasks);
    end = await runSteps(run, await firstStep(run));
    // The run's time limit is an abort with a reason of its own.
    if (end.outcome === "aborted" && isTimeoutError(run.signal.reason))
      end = { outcome: "timeout", error: run.signal.reason };
  } catch (error) {
    // Tools started early for a turn the run will not finish must not go on running.
    run.state.abandon?.();
    end = { outcome: "error", error };
  }
  if (run.tasks !== undefined) closeRunTasks(run, run.tasks);
  try {
    run.emit(withCost(runEndEvent(end), run));
  } finally {
    run.abortRace.dispose();
    releaseCompaction(run.compaction, run.session);
    releaseStrategies(run.strategies);
  }
  if (end.outcome === "error") throw end.error;
  if (end.outcome === "blocked" && run.throwOnBlock)
    throw new GuardrailTrippedError(blockedText(end), {
      guardrail: end.guardrail,
      kind: end.kind,
      session: run.session,
    });
}

function blockedText(end: RunEnd & { outcome: "blocked" }): string {
  return `${end.kind === "input" ? "the input" : "the answer"} was blocked by ${end.guardrail}: ${end.message}`;
}

/** Takes one step after the other until the run ends. */
async function runSteps(run: RunContext, first: NextStep): Promise<RunEnd> {
  let step = first;
  for (;;) {
    switch (step.type) {
      case "answer-tools":
        // Even tools that answer at once take a turn of the microtask queue, once a turn:
        // concurrent runs take turns and a consumer's `break` reaches the run between model calls.
        step = await answerTools(run, step);
        break;
      case "call-model": {
        // A model call leads to tools or to an answer, each awaited: no turn of its own here.
        const next = callModelStep(run);
        step = next instanceof Promise ? await next : next;
        break;
      }
      case "correct-output":
        step = correctOutput(run, step.last, step.problems);
        break;
      case "answered":
        step = await answered(run, step.last);
        break;
      case "end":
        return step.end;
    }
  }
}

// A session whose last turn has unanswered tool calls (a crash, a resume) continues with them;
// one whose last turn's results hold a verbatim answer not yet given ends with it.
function firstStep(run: RunContext): NextStep | Promise<NextStep> {
  const turn = findOpenTurn(run.session.messages);
  if (turn.toolCalls.length > 0) return { type: "answer-tools", ...turn };
  const answer = verbatimAnswer(run.session.messages, run.offer.verbatim);
  if (answer === undefined) return callModelNext;
  // The output guardrails check a given answer as any other.
  return guardGivenAnswer(run, answer).then((checked) => ("role" in checked ? giveAnswer(run, checked) : checked));
}

/** The `correct-output` step: closes the turn and sends the problems back as a user message. */
function correctOutput(run: RunContext, last: ModelMessage | undefined, problems: string): NextStep {
  run.turnEnd(run.state.iteration, last);
  run.add({ role: "user", content: outputCorrection(problems) });
  return callModelNext;
}

/**
 * The `answered` step: closes the turn; the run ends unless steering arrived during the answer
 * (a new question) or a follow-up is queued.
 */
function answered(run: RunContext, last: ModelMessage | undefined): NextStep | Promise<NextStep> {
  run.turnEnd(run.state.iteration, last);
  return nextAfterAnswer(run);
}

function runStartEvent(run: RunContext): AgentEvent {
  const event: AgentEvent = { type: "run-start" };
  if (run.agentName !== undefined) event.agentName = run.agentName;
  const input = unansweredInput(run.session.messages);
  if (input.length > 0) Object.defineProperty(event, "input", { value: input, enumerable: false });
  return event;
}

// The user messages after the last model turn, in order.
function unansweredInput(messages: readonly Message[]): UserMessage[] {
  const input: UserMessage[] = [];
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index]!;
    if (isModelMessage(message)) break;
    if ("role" in message && message.role === "user") input.unshift(message);
  }
  return input;
}

function runEndEvent(end: RunEnd): AgentEvent {
  if (end.outcome === "paused")
    return {
      type: "run-end",
      outcome: "paused",
      pending: end.pending.map(({ call: { id, name, input } }) => ({ id, name, input })),
    };
  if (end.outcome === "timeout")
    return { type: "run-end", outcome: "timeout", error: describeError(end.error), errorType: "TimeoutError" };
  if (end.outcome === "blocked") return { type: "run-end", outcome: "blocked", error: blockedText(end) };
  if (end.outcome !== "error")
    return "runningTasks" in end && end.runningTasks !== undefined
      ? { type: "run-end", outcome: end.outcome, runningTasks: end.runningTasks }
      : { type: "run-end", outcome: end.outcome };
  const type = errorType(end.error);
  const outcome = isMaxIterationsError(end.error) || isBudgetExceededError(end.error) ? "max-iterations" : "error";
  return {
    type: "run-end",
    outcome,
    error: describeError(end.error),
    ...(type === undefined ? {} : { errorType: type }),
  };
}

// With prices, `run-end` says what the run cost (the same sum `budget.usd` is checked against) and,
// when it went over its budget, by how much.
function withCost(event: AgentEvent, run: RunContext): AgentEvent {
  if (event.type !== "run-end") return event;
  const { overrun } = run.state;
  if (run.prices === undefined && overrun === undefined) return event;
  return {
    ...event,
    ...(run.prices === undefined ? {} : { costUsd: run.ledger.spent.usd }),
    ...(overrun === undefined ? {} : { budgetExceeded: overrun }),
  };
}
