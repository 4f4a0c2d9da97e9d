import type { InvokeModel } from "../model/invoke-model.ts";

/**
 * A model that records tool calls besides its own answers (a cassette with `tools: "record"`)
 * declares it with a `recordToolCall` property on the function, as a `StructuredOutputModel`
 * declares native output. The loop then hands every call whose input passed validation to it:
 * `run` calls the handler (awaited; it rejects where the handler throws). Recording runs it and
 * keeps what it gave; replaying returns the recorded output (or throws the recorded error) without
 * calling `run`, so the tool's side effects do not happen again.
 */
export type ToolCallRecorder = (call: RecordedToolCall, run: () => Promise<unknown>) => Promise<unknown>;

/** The call as the recorder sees it: `input` is the validated input the handler receives. */
export type RecordedToolCall = { id: string; name: string; input: unknown; agent?: string };

/** The recorder an `invokeModel` declared, if any. */
export function toolCallRecorderOf(invokeModel: InvokeModel): ToolCallRecorder | undefined {
  const declared = (invokeModel as { recordToolCall?: unknown }).recordToolCall;
  return typeof declared === "function" ? (declared as ToolCallRecorder) : undefined;
}
