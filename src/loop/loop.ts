import { createAbortRace } from "./abort.ts";
import { createCompactor, type CompactSessionOptions } from "./compaction.ts";
import type { CompactionFallback } from "./compaction-strategy.ts";
import { AgentError, MaxIterationsError, describeError, errorType, isContextOverflowError, isMaxIterationsError } from "../errors.ts";
import type { AgentEvent } from "./events.ts";
import { runStream, type RunStream } from "./event-iterator.ts";
import { createToolExecutor, type PendingApproval } from "../tools/execute-tool-calls.ts";
import { hasNativeStructuredOutput, modelOwnFields, type InvokeModel, type ModelContext } from "../model/invoke-model.ts";
import { modelTurn, type ModelTurn } from "./model-turn.ts";
import { formatLogLine, resolveLogger } from "../logger.ts";
import { createRunEvents } from "./run-events.ts";
import { holdToContract, outputContract, outputCorrection, outputInstruction, StructuredOutputError } from "./structured-output.ts";
import { extendSession, extendSessionBatch, isToolCall, notifySessionChange, type Message, type ModelMessage, type Session, type UserMessage } from "../session.ts";
import { abortedResult, describeAction, lastTurn, notExecuted, pick } from "./turn.ts";
import { toolSchemas, type ToolDefinition, type ToolSchema } from "../tools/tool.ts";
import { checkLoopOptions, defaultMaxIterations, type AgentLoopOptions } from "./loop-options.ts";

export type { AgentLoopOptions } from "./loop-options.ts";

/**
 * Runs the agent until the model answers without tool calls: call the
 * model, add its messages, run its tool calls, add their results in call order, repeat. Mutates
 * and returns `session`. It is `agentStream(...).result`: the one loop, awaited without iterating.
 */
export async function agentLoop(
  invokeModel: InvokeModel,
  tools: readonly ToolDefinition[],
  session: Session,
  options: AgentLoopOptions = {},
): Promise<Session> {
  return agentStream(invokeModel, tools, session, options).result;
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
  const controller = new AbortController();
  const signal = options.signal === undefined ? controller.signal : AbortSignal.any([options.signal, controller.signal]);
  const queues: Queues = { steering: [], followUps: [] };
  const stream = runStream<AgentEvent, Session>(
    async (emit, listening) => {
      // Two runs on one session would answer the same calls twice.
      if (running.has(session)) throw new AgentError("a run is already in progress on this session");
      checkLoopOptions(options, tools);
      running.add(session);
      try {
        await runLoop(invokeModel, tools, session, options, signal, emit, listening, queues);
      } finally {
        running.delete(session);
      }
      return session;
    },
    () => controller.abort(),
    options.onEvent,
  );
  return Object.assign(stream, {
    steer: (message: string | UserMessage) => void queues.steering.push(userMessage(message)),
    followUp: (message: string | UserMessage) => void queues.followUps.push(userMessage(message)),
  });
}

const running = new WeakSet<Session>();
const aborted = Symbol("aborted");

function userMessage(message: string | UserMessage): UserMessage {
  return typeof message === "string" ? { role: "user", content: message } : message;
}

/** The events of a run, `result` (the session once the run ends), and ways to talk to it while it runs. */
export type AgentStream = RunStream<AgentEvent, Session> & {
  /**
   * Adds a user message at the next safe point: once the current turn's tool results are in,
   * before the next model call (or, if the model just answered, as a new question it must answer).
   */
  steer: (message: string | UserMessage) => void;
  /** Queues a user message for after the run's task is done: the run goes on with it instead of ending. */
  followUp: (message: string | UserMessage) => void;
};

type Queues = { steering: UserMessage[]; followUps: UserMessage[] };

async function runLoop(
  invokeModel: InvokeModel,
  tools: readonly ToolDefinition[],
  session: Session,
  options: AgentLoopOptions,
  signal: AbortSignal,
  emit: (event: AgentEvent) => void,
  listening: () => boolean,
  queues: Queues,
): Promise<void> {
  const { name: agentName, maxIterations = defaultMaxIterations } = options;
  const events = createRunEvents(emit, listening);
  // The text the current model call has streamed so far: an abort mid-stream keeps it (as the
  // aborted message's content), so the session holds what the user saw.
  let streamedText = "";
  emit = (event) => {
    if (event.type === "text-delta") streamedText += event.delta;
    else if (event.type === "retry") streamedText = "";
    events.emit(event);
  };
  const log = resolveLogger(options.logger);
  const announce = (stored: Message): void => {
    if (log !== undefined) log(formatLogLine(stored, agentName));
    events.message(stored);
  };
  const add = (message: Message): void => {
    extendSession(session, message);
    announce(session.messages[session.messages.length - 1]!);
  };
  // A model turn enters whole before anyone hears of it: a store writes it in one piece.
  const addTurn = (messages: readonly Message[]): Message[] => {
    const stored = extendSessionBatch(session, messages);
    for (const message of stored) announce(message);
    return stored;
  };
  const schemas = toolSchemas(tools);
  const abortRace = createAbortRace(signal);
  const execute = createToolExecutor(tools, options.toolHandlers ?? {}, {
    ...pick(options, ["parallel", "maxParallelTools", "toolTimeout"]),
    ...(agentName === undefined ? {} : { agentName }),
    ...(options.hooks === undefined ? {} : { hooks: options.hooks }),
    session,
    onResult: add,
    onEvent: emit,
  });
  const strategies = typeof options.compaction === "function" ? [options.compaction] : Array.isArray(options.compaction) ? options.compaction : undefined;
  const compact = options.compaction === false || strategies !== undefined ? undefined : createCompactor(options.compaction as CompactSessionOptions | undefined);
  const applyStrategies = async (reason: "before-call" | "overflow"): Promise<void> => {
    const before = session.messages.length;
    const report = (fallback: CompactionFallback): void => emit({ type: "compaction-fallback", ...fallback });
    for (const strategy of strategies ?? []) await strategy(session, { reason, signal, report });
    if (session.messages.length < before) emit({ type: "compaction", count: before - session.messages.length });
  };
  const contract = options.output === undefined ? undefined : outputContract(options.output);
  // An adapter with native structured output conveys the schema itself: no instruction then.
  const instruction: Message | undefined =
    contract === undefined || hasNativeStructuredOutput(invokeModel) ? undefined : { role: "system", content: outputInstruction(contract.jsonSchema) };
  let outputAttempts = options.outputAttempts ?? 2;
  const finishAborted = (content = ""): void => {
    add({ role: "assistant", content, stopReason: "aborted" });
    emit({ type: "run-end", outcome: "aborted" });
  };
  const modelHook = async <T>(hook: "beforeModelCall" | "afterModelCall", call: () => T | Promise<T>): Promise<T | typeof aborted> => {
    try {
      return await abortRace.race(Promise.resolve(call()));
    } catch (error) {
      if (signal.aborted) return aborted;
      emit({ type: "hook-error", hook, error: describeError(error) });
      throw error;
    }
  };
  // What the model is shown for one call, built in one place (for the first attempt and for the
  // retry after a context overflow, once the strategies made room): the output instruction, then
  // the session's messages or the ones the `beforeModelCall` hook put in their place.
  const prepareCall = async (context: ModelContext): Promise<{ session: Session; tools: ToolSchema[] } | typeof aborted> => {
    let messages = session.messages;
    let tools = schemas;
    const hook = options.hooks?.beforeModelCall;
    if (hook !== undefined) {
      const prepared = await modelHook("beforeModelCall", () => hook({ session, tools: schemas, iteration: context.iteration }));
      if (prepared === aborted) return aborted;
      if (prepared?.messages !== undefined) messages = prepared.messages;
      if (prepared?.tools !== undefined) tools = prepared.tools;
      if (prepared?.settings !== undefined) context.settings = prepared.settings;
    }
    if (instruction !== undefined) return { session: { messages: [instruction, ...messages] }, tools };
    return { session: messages === session.messages ? session : { messages }, tools };
  };
  emit(agentName === undefined ? { type: "run-start" } : { type: "run-start", agentName });
  let iteration = 0;
  // A session whose last turn has unanswered tool calls (a crash, a resume) continues with them.
  let turn = lastTurn(session.messages);
  // Stops the tools a turn started early, if the run fails before that turn's tools are done.
  let abandon: (() => void) | undefined;
  try {
    for (;;) {
      if (turn.toolCalls.length > 0) {
        const stopReason = turn.last?.stopReason;
        if (stopReason !== undefined && stopReason !== "tool_use") {
          // Calls that started early have run: keep what they returned. The others never run.
          for (const call of turn.toolCalls) {
            const early = turn.started === undefined ? undefined : await turn.started.get(call.id);
            add(early?.type === "tool_result" ? early : notExecuted(call, stopReason));
          }
          turn.release?.();
          emit({ type: "turn-end", iteration, stopReason });
          emit({ type: "run-end", outcome: "stopped" });
          return;
        }
        const outcomes = await execute.run(turn.toolCalls, signal, abortRace, turn.started);
        abandon = undefined;
        turn.release?.();
        const firstWaiting = outcomes.findIndex((outcome) => outcome.type === "approval-pending");
        if (firstWaiting !== -1 && !signal.aborted) {
          // The session is the paused state: the waiting calls say so (with a paused subagent's own
          // session, if that is why); results of later calls are held on their calls, in call order.
          const pending: PendingApproval[] = [];
          for (const [index, outcome] of outcomes.entries()) {
            if (index < firstWaiting) continue;
            const call = turn.toolCalls[index]!;
            if (outcome.type === "approval-pending") {
              pending.push(outcome);
              call.approval = outcome.nested === undefined ? { status: "pending" } : { status: "pending", nested: outcome.nested };
            } else {
              call.heldResult = outcome.isError === true ? { output: outcome.output, isError: true } : { output: outcome.output };
            }
            notifySessionChange(session, { type: "update", index: session.messages.lastIndexOf(call), message: call, reason: "approval" });
          }
          emit({ type: "run-end", outcome: "paused", pending: pending.map(({ call: { id, name, input } }) => ({ id, name, input })) });
          return;
        }
        if (firstWaiting !== -1) {
          // Aborted while calls waited: answer the rest in call order.
          for (const outcome of outcomes.slice(firstWaiting)) add(outcome.type === "approval-pending" ? abortedResult(outcome.call) : outcome);
        }
        events.turnEnd(iteration, turn.last);
      }
      if (signal.aborted) return finishAborted();
      if (queues.steering.length > 0) for (const message of queues.steering.splice(0)) add(message);
      if (iteration >= maxIterations) {
        const limit = options.maxIterations === undefined ? `${maxIterations}, the default` : `${maxIterations}`;
        throw new MaxIterationsError(
          `Agent "${agentName ?? "agent"}" reached maxIterations (${limit}) while the model still wanted to continue. ` +
            `Last action: ${describeAction(turn.toolCalls, session.messages)}.`,
          { maxIterations, session },
        );
      }
      if (compact !== undefined) {
        const count = compact(session);
        if (count > 0) emit({ type: "compaction", count });
      }
      if (strategies !== undefined) await applyStrategies("before-call");
      iteration++;
      streamedText = "";
      events.turnStart(iteration);
      const context: ModelContext = agentName === undefined ? { signal, iteration } : { signal, iteration, agentName };
      if (contract !== undefined) context.output = { jsonSchema: contract.jsonSchema };
      const call = await prepareCall(context);
      if (call === aborted) return finishAborted();
      const turnOptions = {
        invokeModel,
        ...call,
        context,
        abortRace,
        emit,
        retry: options.retry,
        execute: options.eagerTools === false ? undefined : execute,
      };
      let modelResult: ModelTurn | undefined;
      try {
        modelResult = await modelTurn(turnOptions);
      } catch (error) {
        // Too long for the model: let the strategies make room, then try once more.
        if (!isContextOverflowError(error) || strategies === undefined) throw error;
        await applyStrategies("overflow");
        const again = await prepareCall(context);
        if (again === aborted) return finishAborted();
        modelResult = await modelTurn({ ...turnOptions, ...again });
      }
      if (modelResult === undefined) return finishAborted(streamedText);
      abandon = modelResult.discard;
      let { messages } = modelResult;
      if (options.hooks?.afterModelCall !== undefined) {
        const current = messages;
        const replaced = await modelHook("afterModelCall", () => options.hooks!.afterModelCall!({ session, messages: current, iteration }));
        if (replaced === aborted) {
          abandon();
          return finishAborted();
        }
        if (replaced?.messages !== undefined) messages = replaced.messages.map(modelOwnFields);
      }
      // A final answer held to the `output` schema carries its parsed value from the start.
      let outputProblems: string | undefined;
      if (contract !== undefined && !messages.some(isToolCall)) {
        const held = await holdToContract(contract, messages);
        ({ messages, problems: outputProblems } = held);
        if (outputProblems !== undefined && outputAttempts-- <= 0) {
          addTurn(messages);
          throw new StructuredOutputError(`The final answer does not match the output schema: ${outputProblems}`, { text: held.text, problems: outputProblems });
        }
      }
      // The stored copies (with ts): approval marks must land on the session's own objects.
      const stored = addTurn(messages) as ModelMessage[];
      turn = {
        toolCalls: stored.filter(isToolCall),
        last: stored[stored.length - 1],
        started: modelResult.started,
        release: modelResult.release,
      };
      if (outputProblems !== undefined) {
        events.turnEnd(iteration, turn.last);
        add({ role: "user", content: outputCorrection(outputProblems) });
        continue;
      }
      if (turn.toolCalls.length === 0) {
        events.turnEnd(iteration, turn.last);
        // Steering that arrived during the answer is a new question; then the follow-up queue.
        const next = queues.steering.length > 0 ? undefined : queues.followUps.shift();
        if (queues.steering.length === 0 && next === undefined) {
          emit({ type: "run-end", outcome: "done" });
          return;
        }
        if (next !== undefined) add(next);
      }
    }
  } catch (error) {
    // Tools started early for a turn the run will not finish must not go on running.
    abandon?.();
    const type = errorType(error);
    emit({ type: "run-end", outcome: isMaxIterationsError(error) ? "max-iterations" : "error", error: describeError(error), ...(type === undefined ? {} : { errorType: type }) });
    throw error;
  } finally {
    abortRace.dispose();
  }
}

