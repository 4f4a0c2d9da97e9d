import type { BudgetLedger } from "./budget.ts";
import type { ModelSettings } from "./model-settings.ts";
import type { ModelStreamEvent } from "./model-stream-event.ts";
import type { JsonObject, ModelMessage, Session } from "../session.ts";
import type { ToolSchema } from "../shared/tool-schema.ts";

/** What `invokeModel` receives besides the tools and the session. */
export type ModelContext = {
  /** Aborted when the run is aborted: pass it to the HTTP request. */
  signal: AbortSignal;
  /** Counts model calls in this run, from 1. */
  iteration: number;
  /** The agent's `name` option, if any. */
  agentName?: string;
  /**
   * How to call the model: the run's `settings` with a `beforeModelCall` hook's for this call merged
   * over them. Every adapter honours each field, or throws before the request when it cannot.
   */
  settings?: ModelSettings;
  /**
   * The id of the session when it is bound to a store (the id given to `store.open(id)`, the log
   * file's base name for `openSession(path)`): a stable key for prompt caches and traces.
   */
  sessionId?: string;
  /**
   * Set when the run has an `output` schema. An `invokeModel` flagged `structuredOutput: "native"`
   * (see `StructuredOutputModel`) must convey it to the model itself; any other may ignore it, since
   * the loop then shows the model the schema in a system message.
   */
  output?: { jsonSchema: JsonObject };
  /**
   * The run's budget (see `BudgetLedger`): an `invokeModel` that may make more than one request for
   * one call (`withFallback`, moving on to the next model) starts none once it is used up
   * (`budget.exhausted()`). Absent when the run has no budget; not enumerable (a copy by spread drops it).
   */
  budget?: BudgetLedger;
};

/**
 * The only place that knows a provider's format: converts the generic session to a
 * request, calls the model, converts the answer back. Returns the turn's generic messages (array
 * or promise of one), with `stopReason`/`usage` on the last, or streams `ModelStreamEvent`s.
 * Throwing is how it reports a failed call; the loop adds nothing of that turn to the session.
 */
export type InvokeModel = (
  tools: ToolSchema[],
  session: Session,
  context: ModelContext,
) => ModelMessage[] | Promise<ModelMessage[]> | AsyncIterable<ModelStreamEvent>;

/**
 * An `invokeModel` that may declare how it handles a run's `output` schema, as a property on the
 * function (`invoke.structuredOutput = "native"`). `"native"`: it conveys `context.output` to the
 * model itself, with the provider's structured-output mode (or, where a request cannot use that
 * mode, an instruction of its own), so the loop adds no instruction message to the model's view.
 * Absent: the loop adds a system message with the schema. Either way the loop validates the final
 * answer, stores it as `output`, and sends an invalid one back for correction.
 */
export type StructuredOutputModel = InvokeModel & { structuredOutput?: "native" };

/** Whether an `invokeModel` declared native structured output (then the loop does not instruct it). */
export function hasNativeStructuredOutput(invokeModel: InvokeModel): boolean {
  return "structuredOutput" in invokeModel && invokeModel.structuredOutput === "native";
}
