import {
  AgentError,
  InvalidModelResponseError,
  describeError,
  errorType,
  isContextOverflowError,
  isRetryable,
  isTimeoutError,
} from "../errors.ts";
import { checkNumber } from "../numeric-options.ts";
import type { ModelMessage, TurnEndFields } from "../session.ts";
import type { ToolSchema } from "../shared/tool-schema.ts";
import type { InvokeModel, ModelContext, StructuredOutputModel } from "./invoke-model.ts";
import { hasNativeStructuredOutput } from "./invoke-model.ts";
import { isModelStream, type ModelStreamEvent } from "./model-stream-event.ts";
import { turnEndFields } from "./model-own-fields.ts";

export type FallbackOptions = {
  /**
   * How long a model that failed is skipped, in ms (default 30 s); longer when the provider asked
   * for a longer wait (`retryAfterMs`). When every model is cooling down, they are tried anyway, in order.
   */
  cooldownMs?: number;
  /** Whether a failure moves the call to the next model (default: a retryable error or a `ContextOverflowError`). */
  shouldFallBack?: (error: unknown) => boolean;
};

/**
 * One `invokeModel` over several: each call goes to the first model that is not cooling down, and
 * a failure that `shouldFallBack` accepts moves it to the next, with a `fallback` event saying
 * which failed, why, and which answers. A model's answer is passed on whole or not at all: a failure
 * before its stream began moves on at once; one after it began is thrown (the loop's retry then
 * discards that attempt whole, as it always does, and the next call skips the failed model), so the
 * session never holds half a turn or two answers for one call. Models of different providers mix
 * freely (the session is portable). The call is native structured output only if every model is.
 */
export function withFallback(models: InvokeModel[], options: FallbackOptions = {}): InvokeModel {
  if (!Array.isArray(models) || models.length === 0 || models.some((model) => typeof model !== "function"))
    throw new AgentError("withFallback needs a non-empty array of invokeModel functions");
  checkNumber("withFallback cooldownMs", options.cooldownMs, { min: 0, infinity: true });
  if (options.shouldFallBack !== undefined && typeof options.shouldFallBack !== "function")
    throw new AgentError("withFallback shouldFallBack must be a function of the error");
  const state: FallbackState = {
    models: [...models],
    cooldownMs: options.cooldownMs ?? 30_000,
    shouldFallBack: options.shouldFallBack ?? defaultShouldFallBack,
    coolUntil: models.map(() => 0),
    notice: undefined,
  };
  const invoke: StructuredOutputModel = (tools, session, context) => fallbackAnswer(state, tools, session, context);
  if (models.every(hasNativeStructuredOutput)) invoke.structuredOutput = "native";
  return invoke;
}

function defaultShouldFallBack(error: unknown): boolean {
  return isRetryable(error) || isContextOverflowError(error);
}

type FallbackState = {
  models: InvokeModel[];
  cooldownMs: number;
  shouldFallBack: (error: unknown) => boolean;
  /** By model: the time (`Date.now()`) before which it is skipped. */
  coolUntil: number[];
  /** A model failed after its stream began: the next call says so first. */
  notice: { from: number; error: unknown } | undefined;
};

async function* fallbackAnswer(
  state: FallbackState,
  tools: ToolSchema[],
  session: Parameters<InvokeModel>[1],
  context: ModelContext,
): AsyncGenerator<ModelStreamEvent> {
  const order = callOrder(state);
  const notice = state.notice;
  state.notice = undefined;
  if (notice !== undefined && order[0] !== notice.from) yield fallbackEvent(notice.from, order[0]!, notice.error);
  for (let position = 0; ; position++) {
    const index = order[position]!;
    let started = false;
    // The loop's time limit for the attempt (`timeouts.modelCallMs`, `firstChunkMs`) aborts its
    // signal with a TimeoutError: a failure of this model, whether or not the model honours the
    // signal. The loop retries, and that call skips this model and announces the fallback.
    const onTimeout = (): void => {
      const reason: unknown = context.signal.reason;
      if (!isAttemptTimeout(reason) || !state.shouldFallBack(reason)) return;
      coolDown(state, index, reason);
      if (order.length > 1) state.notice = { from: index, error: reason };
    };
    context.signal.addEventListener("abort", onTimeout, { once: true });
    try {
      const answer = state.models[index]!(tools, session, context);
      if (isModelStream(answer)) {
        for await (const event of answer) {
          started = true;
          yield event;
        }
      } else yield* answerEvents(await answer);
      return;
    } catch (error) {
      if (context.signal.aborted || !state.shouldFallBack(error)) throw error;
      coolDown(state, index, error);
      const next = order[position + 1];
      if (started) state.notice = { from: index, error };
      // The next model's call is a call like any other: none starts once the run's budget is used up.
      if (started || next === undefined || context.budget?.exhausted() !== undefined) throw error;
      yield fallbackEvent(index, next, error);
    } finally {
      context.signal.removeEventListener("abort", onTimeout);
    }
  }
}

function isAttemptTimeout(reason: unknown): boolean {
  return isTimeoutError(reason) && (reason.limit === "modelCallMs" || reason.limit === "firstChunkMs");
}

// The models not cooling down, in the order given; then the rest, the one free soonest first.
function callOrder(state: FallbackState): number[] {
  const now = Date.now();
  const ready: number[] = [];
  const cooling: number[] = [];
  state.coolUntil.forEach((until, index) => (until <= now ? ready : cooling).push(index));
  cooling.sort((a, b) => state.coolUntil[a]! - state.coolUntil[b]!);
  return [...ready, ...cooling];
}

function coolDown(state: FallbackState, index: number, error: unknown): void {
  const asked: unknown =
    typeof error === "object" && error !== null && "retryAfterMs" in error ? error.retryAfterMs : undefined;
  const wait = Math.max(state.cooldownMs, typeof asked === "number" && asked > 0 ? asked : 0);
  state.coolUntil[index] = Date.now() + wait;
}

function fallbackEvent(from: number, to: number, error: unknown): ModelStreamEvent {
  const type = errorType(error);
  return {
    type: "fallback",
    from,
    to,
    error: describeError(error),
    ...(type === undefined ? {} : { errorType: type }),
  };
}

// A model that answered with messages: the events a streaming one would have sent.
function* answerEvents(messages: ModelMessage[]): Generator<ModelStreamEvent> {
  if (!Array.isArray(messages))
    throw new InvalidModelResponseError(`invokeModel must return an array of messages, got ${typeof messages}`);
  const last = messages[messages.length - 1];
  const stop: TurnEndFields = last === undefined ? {} : turnEndFields(last);
  for (const message of messages) yield { type: "message", message };
  yield { type: "response-end", ...stop };
}
