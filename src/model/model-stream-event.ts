import type { ModelMessage, TurnEndFields } from "../session.ts";

/**
 * What a streaming `invokeModel` yields. Deltas are for display only; the loop builds the turn from
 * `message` events alone, so an adapter emits each generic message once it is complete (a tool
 * call's `message` is the end of that call: its input is final and valid JSON).
 */
export type ModelStreamEvent =
  /** A piece of assistant text as it streams. */
  | { type: "text-delta"; delta: string }
  /** A piece of reasoning text as it streams. */
  | { type: "thinking-delta"; delta: string }
  /** The model started a tool call; its input follows as `tool-call-delta`s. */
  | { type: "tool-call-start"; id: string; name: string }
  /** A fragment of a tool call's input JSON (not parseable on its own). */
  | { type: "tool-call-delta"; id: string; delta: string }
  /** A complete generic message of this turn, in order. */
  | { type: "message"; message: ModelMessage }
  /**
   * The turn is over: the loop records these on the turn's last message. A tool call whose input
   * the length limit cut off (sent with `{}` input so the turn stays complete) must come after this
   * event: the loop starts calls early only before it, and never runs a cut call.
   */
  | ({ type: "response-end" } & TurnEndFields)
  /**
   * `withFallback` moved the call from model `from` to model `to` (indexes into the models it was
   * given) because `from` failed with `error`. Nothing of the failed model's answer is kept.
   */
  | { type: "fallback"; from: number; to: number; error: string; errorType?: string };

/** Events the loop passes through from the model stream unchanged: deltas, and fallbacks. */
export type ModelDeltaEvent = Extract<
  ModelStreamEvent,
  { type: "text-delta" | "thinking-delta" | "tool-call-start" | "tool-call-delta" | "fallback" }
>;

/** Whether an `invokeModel` answered with a stream of events (rather than messages or a promise of them). */
export function isModelStream(value: unknown): value is AsyncIterable<ModelStreamEvent> {
  return typeof value === "object" && value !== null && Symbol.asyncIterator in value;
}
