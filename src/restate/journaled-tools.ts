import { CancelledError, RetryableError, type ObjectContext } from "@restatedev/restate-sdk";
import { AbortError, describeError, isInstance } from "../errors.ts";
import { ApprovalPause } from "../tools/approval-pause.ts";
import { ProgramStop } from "../tools/code-mode/program-stop.ts";
import type { ContentPart } from "../content-parts.ts";
import type { JsonValue } from "../session.ts";
import { isToolContent, toolContent } from "../tools/tool-content.ts";
import type { ToolContext, ToolDefinition, ToolHandler, ToolHandlers } from "../tools/tool.ts";
import type { ReplayClock } from "./replay-clock.ts";
import { fitText } from "./step-size.ts";
import { checkBudgetCharge, createBudgetLedger } from "../model/budget.ts";
import { clampDelay } from "../numeric-options.ts";
import type { StepScheduler } from "./step-scheduler.ts";
import type { ToolCallRecorder } from "../tools/tool-call-recorder.ts";
import type { DurableTasks } from "./durable-tasks.ts";
import { isCancelTaskTool } from "../tools/task-tools.ts";
import { cancelTask } from "../tools/task-control.ts";
import type { JournaledCharge, StepPart, ToolStep } from "./tool-step.ts";

/**
 * The tools with each handler run as one journaled step (`ctx.run`, named `tool <call id>`): its
 * output, its error, its timeout or its pause is stored in the journal, so a call that finished is
 * never run again on replay, and the loop builds the same result from it. Timeouts (the tool's
 * `timeout`, else `toolTimeout`) are kept inside the step, where they are decided once; the
 * returned definitions carry none, so the loop sets no timer of its own. A handler that throws
 * Restate's `RetryableError` has its step retried by Restate instead of answering the model.
 * A model that records tool calls (a cassette with `tools: "record"`, `recorder`) gets each call
 * inside its step, so a call is recorded (or answered from the recording) once, however often
 * Restate replays the run. A code-mode program's calls reach these handlers too, each one its own
 * step (`tool <code call id>.<n>`), while the code call itself has none: a replay reruns the program
 * and answers the calls it made from the journal; a call its program's end stopped (`ProgramStop`)
 * is journaled as stopped and waits on a replay until the rerun program ends again.
 */
export function journaledTools(
  ctx: ObjectContext,
  tools: readonly ToolDefinition[],
  toolHandlers: ToolHandlers,
  steps: {
    toolTimeout: number | undefined;
    scheduler: StepScheduler;
    clock: ReplayClock;
    maxStepBytes: number;
    recorder: ToolCallRecorder | undefined;
    /** The invocation's background tasks: an attempt of a task's handler journals its start too. */
    tasks?: DurableTasks;
  },
): { tools: ToolDefinition[]; toolHandlers: ToolHandlers } {
  const { toolTimeout, scheduler, clock, maxStepBytes, recorder, tasks } = steps;
  const wrap = (name: string, handler: ToolHandler, timeout: number | undefined): ToolHandler =>
    journaledHandler(ctx, name, recorded(name, handler, recorder), timeout, {
      scheduler,
      clock,
      maxStepBytes,
      tasks,
    });
  const wrappedTools = tools.map((definition): ToolDefinition => {
    if (!("handler" in definition)) return definition;
    const { timeout, ...rest } = definition;
    const handler = wrap(definition.name, definition.handler, timeout ?? toolTimeout);
    return { ...rest, handler: isCancelTaskTool(definition) ? cancelAfterStep(handler) : handler };
  });
  const wrappedHandlers: ToolHandlers = {};
  // Defined, not assigned: a handler named `__proto__` must stay an entry, not become the prototype.
  for (const [name, handler] of Object.entries(toolHandlers)) {
    Object.defineProperty(wrappedHandlers, name, {
      value: wrap(name, handler, toolTimeout),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return { tools: wrappedTools, toolHandlers: wrappedHandlers };
}

// cancel_task asks the run's journal for the cancel inside its step, which a replay answers from
// the journal without running it: a worker stopped before the next safe point journaled the
// cancel would leave the task to its onRestart. So the cancel is asked again after the step, on
// the first run (where it changes nothing) and on every replay alike.
function cancelAfterStep(handler: ToolHandler): ToolHandler {
  return async (input, context) => {
    const output: unknown = await handler(input, context);
    const { id, reason } = (input ?? {}) as { id?: unknown; reason?: unknown };
    if (typeof id === "string") cancelTask(context.session, id, typeof reason === "string" ? reason : undefined);
    return output;
  };
}

// The handler as the recorder runs it: recording calls it and keeps its output, replaying answers
// from the recording without calling it.
function recorded(name: string, handler: ToolHandler, recorder: ToolCallRecorder | undefined): ToolHandler {
  if (recorder === undefined) return handler;
  return (input, context) =>
    recorder(
      { id: context.id, name, input, ...(context.agentName === undefined ? {} : { agent: context.agentName }) },
      async () => handler(input, context),
    );
}

// The call's context with a ledger that notes each charge on its way to the call's own: the
// charges count live as before, and the step journals them.
function chargeRecorder(context: ToolContext): { context: ToolContext; charges: () => JournaledCharge[] | undefined } {
  const { budget } = context;
  if (budget === undefined) return { context, charges: () => undefined };
  // One entry per model, summed, so the step stays small however many calls the tool made.
  const charges: JournaledCharge[] = [];
  const recorder = createBudgetLedger({
    within: budget,
    onCharge: ({ usage, model, calls = 1 }, usd) => {
      const known = charges.find((entry) => entry.model === model);
      if (known === undefined) {
        charges.push({ usage: { ...usage }, calls, usd, ...(model === undefined ? {} : { model }) });
        return;
      }
      known.calls = (known.calls ?? 1) + calls;
      known.usd += usd;
      for (const key of [
        "inputTokens",
        "outputTokens",
        "cacheReadTokens",
        "cacheWriteTokens",
        "reasoningTokens",
      ] as const)
        if (usage[key] !== undefined || known.usage[key] !== undefined)
          known.usage[key] = (known.usage[key] ?? 0) + (usage[key] ?? 0);
    },
  });
  const recorded: ToolContext = {
    ...context,
    budget: recorder,
    spend: (spent) => recorder.charge(checkBudgetCharge(spent, "ToolContext.spend")),
  };
  if (context.budgetLeft !== undefined) recorded.budgetLeft = recorder.left;
  return { context: recorded, charges: () => (charges.length === 0 ? undefined : charges) };
}

function journaledHandler(
  ctx: ObjectContext,
  name: string,
  handler: ToolHandler,
  timeout: number | undefined,
  steps: { scheduler: StepScheduler; clock: ReplayClock; maxStepBytes: number; tasks: DurableTasks | undefined },
): ToolHandler {
  const { scheduler, clock, maxStepBytes } = steps;
  return async (input: unknown, context: ToolContext) => {
    // What the handler charged the run's budget (a subagent's model calls) is journaled with its
    // result: a replay, which does not run the handler, charges it again, so the ledger after a
    // replay is the one before it.
    let ranHere = false;
    const run = async (): Promise<ToolStep> => {
      ranHere = true;
      const charged = chargeRecorder(context);
      const ran = await runHandler(handler, input, charged.context, timeout);
      const spent = charged.charges();
      return fitStep(
        chunked(spent === undefined ? ran : { ...ran, spent }, pendingKey(ctx, context.id), maxStepBytes),
        maxStepBytes,
      );
    };
    let result: ToolStep;
    let content: ContentPart[] | undefined;
    try {
      result =
        context.task !== undefined && steps.tasks !== undefined
          ? await taskAttempt(ctx, scheduler, steps.tasks, context.task, run)
          : await scheduler.await(ctx.run<ToolStep>(`tool ${context.id}`, run));
      if ("content" in result && result.content !== undefined)
        content = await joinedParts(ctx, scheduler, context.id, result.content);
    } catch (error) {
      // The run was cancelled: the loop answers this call as aborted.
      if (isInstance(error, CancelledError)) throw new AbortError();
      throw error;
    }
    clock.toolEnded(context.id, result.at);
    if (!ranHere && result.spent !== undefined && context.budget !== undefined)
      for (const { usd, ...charge } of result.spent) context.budget.charge(charge, usd);
    if (content !== undefined) return toolContent(content);
    if ("output" in result) return result.output;
    if ("error" in result) throw new Error(result.error);
    if ("timeout" in result) throw new Error(`tool "${name}" timed out after ${result.timeout} ms`);
    if ("pause" in result) throw new ApprovalPause(result.pause);
    // Its program ended while it waited (its time limit, say): on a replay the call waits again,
    // until the rerun program ends as it did, instead of answering at once and letting it go on.
    if ("stopped" in result) await untilAborted(context.signal);
    throw new AbortError();
  };
}

/**
 * An attempt of a background task's handler. Its start is a journaled step; the handler then runs
 * outside any step (a step in flight would hold every later step of the run, model calls included,
 * until it ended), and its outcome is journaled by the safe point that settles it
 * (`DurableTasks.outcome`). A replay that finds the start journaled does not run the handler: the
 * journal has its outcome, this process still runs it (an earlier attempt of the invocation that
 * Restate ended), or the worker running it stopped.
 */
async function taskAttempt(
  ctx: ObjectContext,
  scheduler: StepScheduler,
  tasks: DurableTasks,
  task: { id: string; attempt: number },
  run: () => Promise<ToolStep>,
): Promise<ToolStep> {
  let startedHere = false;
  const start = ctx.run(`task ${task.id} start ${task.attempt}`, () => {
    startedHere = true;
    return null;
  });
  const started = scheduler.await(start).then(
    () => (startedHere ? { running: run() } : undefined),
    () => undefined,
  );
  return tasks.outcome(task, started);
}

// Inside the step: the handler with its own signal, raced against its timeout and the run's abort
// (a handler that ignores its signal cannot hold the step).
async function runHandler(
  handler: ToolHandler,
  input: unknown,
  context: ToolContext,
  timeout: number | undefined,
): Promise<ToolStep> {
  const controller = new AbortController();
  const stop = (reason: unknown): void => controller.abort(reason);
  const onRunAbort = (): void => stop(context.signal.reason);
  context.signal.addEventListener("abort", onRunAbort, { once: true });
  if (context.signal.aborted) stop(context.signal.reason);
  const timedOut = new Error(`timed out after ${timeout} ms`);
  timedOut.name = "TimeoutError";
  // `Infinity`: no timer; a longer wait than a timer holds is clamped (it would fire at once).
  const timer =
    timeout === undefined || timeout === Number.POSITIVE_INFINITY
      ? undefined
      : setTimeout(() => stop(timedOut), clampDelay(timeout));
  const stopped = new Promise<never>((_resolve, reject) => {
    controller.signal.addEventListener("abort", () => reject(controller.signal.reason), { once: true });
  });
  stopped.catch(() => undefined);
  try {
    const output: unknown = await Promise.race([
      Promise.resolve(handler(input, { ...context, signal: controller.signal })),
      stopped,
    ]);
    // Rich content loses its brand in JSON: the parts are journaled as they are.
    if (isToolContent(output)) return { output: "", content: output.content, at: Date.now() };
    return { output: toJson(output), at: Date.now() };
  } catch (error) {
    if (isInstance(error, RetryableError)) throw error;
    const at = Date.now();
    if (controller.signal.reason === timedOut) return { timeout: timeout!, at };
    if (context.signal.aborted)
      return isInstance(context.signal.reason, ProgramStop) ? { stopped: true, at } : { aborted: true, at };
    if (isInstance(error, ApprovalPause)) return { pause: error.session, at };
    return { error: describeError(error), at };
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    context.signal.removeEventListener("abort", onRunAbort);
  }
}

// The server refuses a journal entry over its message size limit, and the invocation then runs the
// step again, forever (a tool with side effects too): every kind of step must fit, error texts
// included. An answer too large becomes an error result; an error text too large is cut.
function fitStep(step: ToolStep, maxStepBytes: number): ToolStep {
  const bytes = Buffer.byteLength(JSON.stringify(step));
  if (bytes <= maxStepBytes) return step;
  // What the call spent is kept whatever else is cut: one entry per model, a few hundred bytes.
  const spent = step.spent === undefined ? {} : { spent: step.spent };
  if ("error" in step)
    return {
      error: fitText(step.error, maxStepBytes - (bytes - Buffer.byteLength(JSON.stringify(step.error)))),
      at: step.at,
      ...spent,
    };
  const what = "output" in step ? "output" : "pause" in step ? "paused session" : "result";
  return fitStep(
    {
      error: `the tool's ${what} is too large to journal (${bytes} bytes, over maxStepBytes ${maxStepBytes})`,
      at: step.at,
      ...spent,
    },
    maxStepBytes,
  );
}

// The loop stores outputs as JSON; the journal must hold exactly that.
function toJson(output: unknown): JsonValue {
  if (output === undefined) return "";
  const text = JSON.stringify(output);
  return text === undefined ? "" : (JSON.parse(text) as JsonValue);
}

// The base64 of parts that did not fit their tool's step, by object key and call id (ids are the
// model's: two sessions' runs may both have a call_1), from the step until the steps of its chunks
// have journaled it. Lost if the worker stops in between (see `joinedParts`).
const pendingData = new Map<string, string[]>();

function pendingKey(ctx: ObjectContext, id: string): string {
  return `${ctx.key}\u0000${id}`;
}

// A result whose parts' base64 makes the step too large: each part with data (largest first, until
// the rest fits) gets `chunks` in place of its data, the data kept for the chunk steps.
function chunked(step: ToolStep, id: string, maxStepBytes: number): ToolStep {
  if (!("content" in step) || step.content === undefined) return step;
  if (Buffer.byteLength(JSON.stringify(step)) <= maxStepBytes) return step;
  const chunkSize = chunkChars(maxStepBytes);
  const datas: string[] = [];
  const content = step.content.map((part): StepPart => {
    if (!("data" in part) || typeof part.data !== "string") return part;
    const { data, ...rest } = part as ContentPart & { data: string };
    datas.push(data);
    return { chunks: Math.max(1, Math.ceil(data.length / chunkSize)), part: rest };
  });
  pendingData.set(id, datas);
  return { ...step, content };
}

// Room for base64 in a chunk step: its JSON is the string in quotes (base64 needs no escapes).
function chunkChars(maxStepBytes: number): number {
  return Math.max(1, maxStepBytes - 64);
}

/**
 * The parts of a journaled tool step with the data of chunked parts read back from their chunk
 * steps (`tool <id> part <n> chunk <i>`, replayed from the journal once written). A worker that
 * stopped after the tool's step and before its chunks' has lost the data the tool returned (the tool
 * is not run again): the part then becomes a text saying so.
 */
async function joinedParts(
  ctx: ObjectContext,
  scheduler: StepScheduler,
  id: string,
  parts: readonly StepPart[],
): Promise<ContentPart[]> {
  if (!parts.some((part) => "chunks" in part)) return parts as ContentPart[];
  const kept = pendingData.get(pendingKey(ctx, id));
  pendingData.delete(pendingKey(ctx, id));
  const joined: ContentPart[] = [];
  let dataIndex = 0;
  for (const part of parts) {
    if (!("chunks" in part)) {
      joined.push(part);
      continue;
    }
    const data = kept?.[dataIndex];
    const size = data === undefined ? 0 : Math.ceil(data.length / part.chunks);
    const pieces: (string | null)[] = [];
    for (let index = 0; index < part.chunks; index++) {
      const piece = data === undefined ? null : data.slice(index * size, (index + 1) * size);
      pieces.push(await scheduler.await(ctx.run(`tool ${id} part ${dataIndex} chunk ${index}`, () => piece)));
    }
    dataIndex++;
    if (pieces.some((piece) => piece === null)) {
      joined.push({
        type: "text",
        text: `[a ${part.part.type} of this result was lost: the worker stopped before it was journaled; call the tool again to see it]`,
      });
    } else {
      joined.push({ ...part.part, data: pieces.join("") } as ContentPart);
    }
  }
  return joined;
}

function untilAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
}
