import { callModelNext, type NextStep } from "./next-step.ts";
import type { OpenTurn } from "./open-turn.ts";
import type { RunContext } from "./run-context.ts";
import { abortedResult, notExecutedResult } from "../tools/tool-errors.ts";
import {
  isModelMessage,
  isToolResult,
  notifySessionChange,
  type AssistantMessage,
  type ModelMessage,
  type Session,
  type StopReason,
  type ToolCallMessage,
} from "../session.ts";
import type { PendingApproval, ToolOutcome } from "../tools/tool-outcome.ts";
import { verbatimAnswer } from "./verbatim-answer.ts";
import type { StopCondition } from "./stop-conditions.ts";
import { guardGivenAnswer } from "./guarded-turn.ts";
import { addInput } from "./run-guardrails.ts";
import { idleStep } from "./run-tasks.ts";

/**
 * The `answer-tools` step: runs the open turn's tool calls and adds their results in call order,
 * then closes the turn (`turn-end`). A turn the model stopped for another reason than tool use is
 * closed without running anything new, and ends the run (`stopped`). Calls waiting for approval
 * pause the run (`paused`), unless it was aborted meanwhile.
 */
export function answerTools(run: RunContext, turn: OpenTurn): NextStep | Promise<NextStep> {
  const stopReason = turn.last?.stopReason;
  if (stopReason !== undefined && stopReason !== "tool_use") return closeStoppedTurn(run, turn, stopReason);
  // Tools that answered at once: the turn goes on without an async frame of its own; else in the
  // one reaction that delivers the results.
  return run.executor.run(turn.toolCalls, run, turn.started, turn, turnAnswered);
}

function turnAnswered(run: RunContext, turn: OpenTurn, outcomes: ToolOutcome[]): NextStep | Promise<NextStep> {
  const next = toolsAnswered(run, turn, outcomes);
  return next === callModelNext ? afterTurn(run, turn) : next;
}

// Every call of the turn is answered: a verbatim answer, the loop guard or the stop condition may
// end the run here. A turn with none of them to wait for goes on without an async frame of its own.
function afterTurn(run: RunContext, turn: OpenTurn): NextStep | Promise<NextStep> {
  const { state } = run;
  // Only a turn that called a tool answering verbatim can have such an answer: no other reads the
  // session. A resumed turn's calls answered before (a verbatim one among them) are not in it.
  const answer = callsVerbatim(turn, run.offer.verbatim)
    ? verbatimAnswer(run.session.messages, run.offer.verbatim)
    : undefined;
  if (answer !== undefined)
    return guardGivenAnswer(run, answer).then((checked) => ("role" in checked ? giveAnswer(run, checked) : checked));
  const looping = state.loopDetected;
  if (looping !== undefined) {
    run.emit({ type: "loop-detected", tool: looping.name, count: state.guardCount });
    return { type: "end", end: { outcome: "loop-detected" } };
  }
  if (run.stopWhen !== undefined && !run.signal.aborted) return checkStopCondition(run, run.stopWhen);
  return callModelNext;
}

function callsVerbatim(turn: OpenTurn, verbatim: ReadonlySet<string>): boolean {
  if (verbatim.size === 0) return false;
  if (turn.resumed === true) return true;
  for (const call of turn.toolCalls) if (verbatim.has(call.name)) return true;
  return false;
}

async function checkStopCondition(run: RunContext, stopWhen: StopCondition): Promise<NextStep> {
  const stop = await stopWhen({
    session: run.session,
    iteration: run.state.iteration,
    turn: lastModelTurn(run.session),
  });
  return stop ? { type: "end", end: { outcome: "stop-condition" } } : callModelNext;
}

/**
 * Adds a tool's result as the run's answer (no model call writes it), then goes on as after any
 * answer: the run ends unless steering or a follow-up is queued.
 */
export function giveAnswer(run: RunContext, answer: AssistantMessage): NextStep | Promise<NextStep> {
  run.add(answer);
  return nextAfterAnswer(run);
}

/** After the model's (or a tool's verbatim) answer: the run ends unless steering arrived or a follow-up is queued. */
export function nextAfterAnswer(run: RunContext): NextStep | Promise<NextStep> {
  const { queues } = run;
  if (queues.steering.length > 0) return callModelNext;
  const next = queues.followUps.shift();
  if (next === undefined) return run.tasks === undefined ? done : idleStep(run, run.tasks);
  addInput(run, next);
  return callModelNext;
}

const done: NextStep = { type: "end", end: { outcome: "done" } };

// The messages of the session's last model turn (its tool results after it left out).
function lastModelTurn(session: Session): ModelMessage[] {
  const { messages } = session;
  let end = messages.length;
  while (end > 0 && isToolResult(messages[end - 1]!)) end--;
  let start = end;
  while (start > 0 && isModelMessage(messages[start - 1]!)) start--;
  return messages.slice(start, end) as ModelMessage[];
}

// Every call of the turn has its outcome: add the results, or pause for the ones waiting.
function toolsAnswered(run: RunContext, turn: OpenTurn, outcomes: ToolOutcome[]): NextStep {
  run.state.abandon = undefined;
  turn.release?.();
  const firstWaiting = outcomes.findIndex(isPending);
  if (firstWaiting !== -1) {
    if (!run.signal.aborted) return pause(run, turn, outcomes, firstWaiting);
    // Aborted while calls waited: answer the rest in call order.
    for (let index = firstWaiting; index < outcomes.length; index++) {
      const outcome = outcomes[index]!;
      run.add(outcome.type === "approval-pending" ? abortedResult(outcome.call) : outcome);
    }
  }
  run.turnEnd(run.state.iteration, turn.last);
  return callModelNext;
}

function isPending(outcome: ToolOutcome): boolean {
  return outcome.type === "approval-pending";
}

// Calls that started early have run: keep what they returned. The others never run.
async function closeStoppedTurn(run: RunContext, turn: OpenTurn, stopReason: StopReason): Promise<NextStep> {
  for (const call of turn.toolCalls) {
    const early = turn.started === undefined ? undefined : await turn.started.get(call.id);
    run.add(early?.type === "tool_result" ? early : notExecutedResult(call, stopReason));
  }
  turn.release?.();
  run.turnEnd(run.state.iteration, turn.last);
  return { type: "end", end: { outcome: "stopped" } };
}

// The session is the paused state: the waiting calls say so (with a paused subagent's own
// session, if that is why); results of later calls are held on their calls, in call order.
function pause(run: RunContext, turn: OpenTurn, outcomes: readonly ToolOutcome[], firstWaiting: number): NextStep {
  const { session } = run;
  const pending: PendingApproval[] = [];
  for (let index = firstWaiting; index < outcomes.length; index++) {
    const outcome = outcomes[index]!;
    const call = turn.toolCalls[index]!;
    if (outcome.type === "approval-pending") {
      pending.push(outcome);
      // A call that still waits keeps what it waited with (a paused subagent's or program's
      // record with the decisions made in it so far, the links consulted) unless it brings new ones.
      const before = call.approval?.status === "pending" ? call.approval : undefined;
      call.approval = { status: "pending" };
      const nested = outcome.nested ?? before?.nested;
      const consulted = outcome.consulted ?? before?.consulted;
      if (nested !== undefined) call.approval.nested = nested;
      if (consulted !== undefined) call.approval.consulted = consulted;
    } else {
      // What is held is what may enter: the output guardrails' verdict is taken now, so the raw
      // output they blocked or redacted is never held (in memory, in a store's log, in Restate's
      // state), and the mark travels with it to whatever process resumes, as do its records.
      const result = run.heldResult(outcome);
      const held: NonNullable<ToolCallMessage["heldResult"]> = { output: result.output };
      if (result.content !== undefined) held.content = result.content;
      if (result.isError === true) held.isError = true;
      if (result.guardrail !== undefined) held.guardrail = result.guardrail;
      if (result.subagentUsage !== undefined) held.subagentUsage = result.subagentUsage;
      if (result.programCalls !== undefined) held.programCalls = result.programCalls;
      if (result.logs !== undefined) held.logs = result.logs;
      if (outcome.task !== undefined) held.task = outcome.task;
      call.heldResult = held;
    }
    notifySessionChange(session, {
      type: "update",
      index: session.messages.lastIndexOf(call),
      message: call,
      reason: "approval",
    });
  }
  return { type: "end", end: { outcome: "paused", pending } };
}
