import { RetryableError, type ObjectContext, type RunOptions } from "@restatedev/restate-sdk";
import { createAbortRace } from "../shared/abort.ts";
import {
  AgentError,
  ContextOverflowError,
  InvalidModelResponseError,
  ProviderError,
  describeError,
  errorType,
  isAgentError,
  isInstance,
  isRetryable,
} from "../errors.ts";
import type { InvokeModel, StructuredOutputModel } from "../model/invoke-model.ts";
import { readModelTurn } from "../model/read-model-turn.ts";
import type { ModelMessage } from "../session.ts";
import type { ReplayClock } from "./replay-clock.ts";
import { fitText } from "./step-size.ts";
import { checkNumber } from "../numeric-options.ts";
import type { StepScheduler } from "./step-scheduler.ts";

/** Restate's retry options for a step, as `ctx.run` takes them. */
export type StepRetryOptions = Pick<
  RunOptions<unknown>,
  "maxRetryAttempts" | "maxRetryDuration" | "initialRetryInterval" | "maxRetryInterval" | "retryIntervalFactor"
>;

/**
 * `invokeModel` with each call run as one journaled step (`ctx.run`, named `model <n>`): the answer
 * (a streamed one collected whole inside the step) is stored in the journal, and on replay the
 * step returns it without calling the model. A retryable failure is thrown inside the step, so
 * Restate retries it (honouring `retryAfterMs`), under `retry`; any other failure is journaled as a
 * value and thrown again, the same error, on every replay. `beforeStep` runs before each step
 * starts and `afterStep` once it answered (the run writes its state there). The loop's own retries
 * must be off. `steps` counts the calls for the names; models of one run share it (several agents).
 */
export function journaledModel(
  ctx: ObjectContext,
  invokeModel: InvokeModel,
  scheduler: StepScheduler,
  clock: ReplayClock,
  beforeStep: () => void,
  afterStep: () => void,
  retry: StepRetryOptions,
  maxStepBytes: number,
  steps: { count: number } = { count: 0 },
): InvokeModel {
  const journaled: StructuredOutputModel = async (tools, session, context) => {
    beforeStep();
    const step = ctx.run<ModelStep>(
      `model ${++steps.count}`,
      async () => {
        const race = createAbortRace(context.signal);
        try {
          const messages = await readModelTurn(
            { invokeModel, abortRace: race, emit: ignore },
            { tools, session, context },
          );
          const at = Date.now();
          const ts = new Date(at).toISOString();
          const step = { messages: messages.map((message) => ({ ...message, ts })), at };
          // Over the server's entry size limit the step would be run again forever: fail it instead.
          const bytes = Buffer.byteLength(JSON.stringify(step));
          if (bytes > maxStepBytes)
            return fitErrorStep(
              {
                error: {
                  name: "AgentError",
                  message: `the model's answer is too large to journal (${bytes} bytes, over maxStepBytes ${maxStepBytes})`,
                },
                at,
              },
              maxStepBytes,
            );
          return step;
        } catch (error) {
          // Cancelled: nobody reads this step any more; a value keeps Restate from retrying it.
          if (context.signal.aborted) return { aborted: true, at: Date.now() };
          if (isRetryable(error)) throw retryableError(error);
          return fitErrorStep({ error: errorDescription(error), at: Date.now() }, maxStepBytes);
        } finally {
          race.dispose();
        }
      },
      retry,
    );
    const result = await scheduler.await(step);
    clock.advance(result.at);
    afterStep();
    if ("messages" in result) return result.messages;
    if ("error" in result) throw rebuildError(result.error);
    throw new AgentError("the model step was cancelled");
  };
  if ((invokeModel as StructuredOutputModel).structuredOutput !== undefined) {
    journaled.structuredOutput = (invokeModel as StructuredOutputModel).structuredOutput!;
  }
  return journaled;
}

/** Throws an `AgentError` for step retry options that are not numbers they can mean (durations may also be Restate `Duration` objects). */
export function checkStepRetry(retry: StepRetryOptions): void {
  checkNumber("modelRetry.maxRetryAttempts", retry.maxRetryAttempts, { min: 0, integer: true });
  checkNumber("modelRetry.retryIntervalFactor", retry.retryIntervalFactor, { min: 1 });
  for (const key of ["maxRetryDuration", "initialRetryInterval", "maxRetryInterval"] as const) {
    const value = retry[key];
    if (typeof value !== "object") checkNumber(`modelRetry.${key}`, value, { min: 0 });
  }
}

/** What a model step stores in the journal (plain JSON). */
type ModelStep =
  { messages: ModelMessage[]; at: number } | { error: ErrorDescription; at: number } | { aborted: true; at: number };

type ErrorDescription = {
  name: string;
  message: string;
  provider?: string;
  status?: number;
  code?: string;
  requestId?: string;
};

const ignore = (): void => undefined;

// An error the server cannot journal would have the step run again forever: its text is cut to fit.
function fitErrorStep(step: { error: ErrorDescription; at: number }, maxStepBytes: number): ModelStep {
  const bytes = Buffer.byteLength(JSON.stringify(step));
  if (bytes <= maxStepBytes) return step;
  const { message } = step.error;
  const rest = bytes - Buffer.byteLength(JSON.stringify(message));
  return { error: { ...step.error, message: fitText(message, maxStepBytes - rest) }, at: step.at };
}

function retryableError(error: unknown): RetryableError {
  const asked = (error as { retryAfterMs?: unknown }).retryAfterMs;
  const retryAfter = typeof asked === "number" && Number.isFinite(asked) && asked >= 0 ? asked : undefined;
  return new RetryableError(
    describeError(error),
    retryAfter === undefined ? { cause: error } : { cause: error, retryAfter },
  );
}

function errorDescription(error: unknown): ErrorDescription {
  const description: ErrorDescription = { name: errorType(error) ?? "Error", message: describeError(error) };
  if (isInstance(error, ProviderError) || (isAgentError(error) && "provider" in error)) {
    const provider = error as ProviderError;
    description.provider = provider.provider;
    if (provider.status !== undefined) description.status = provider.status;
    if (provider.code !== undefined) description.code = provider.code;
    if (provider.requestId !== undefined) description.requestId = provider.requestId;
  }
  return description;
}

// The error the loop would have seen in process: its kind decides what the loop does (a context
// overflow lets the compaction strategies make room, then the call is made again).
function rebuildError(description: ErrorDescription): Error {
  const { name, message, provider } = description;
  if (provider !== undefined) {
    const details = {
      provider,
      ...(description.status === undefined ? {} : { status: description.status }),
      ...(description.code === undefined ? {} : { code: description.code }),
      ...(description.requestId === undefined ? {} : { requestId: description.requestId }),
    };
    return name === "ContextOverflowError"
      ? new ContextOverflowError(message, details)
      : new ProviderError(message, details);
  }
  if (name === "InvalidModelResponseError") return new InvalidModelResponseError(message);
  const error = new AgentError(message);
  error.name = name;
  return error;
}
