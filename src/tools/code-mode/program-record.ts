import { isToolCall, isToolResult, type Session, type ToolCallMessage, type ToolResultMessage } from "../../session.ts";

/** What a paused program left for its rerun: when it first started, and its calls in start order. */
export type ProgramRecord = { readonly startedAt: number; readonly calls: readonly RecordedCall[] };

/** A call the program made before: with its result when it finished, else waiting (or decided) for approval. */
export type RecordedCall = { readonly call: ToolCallMessage; readonly result?: ToolResultMessage };

/**
 * Reads the record a paused code call keeps (`approval.nested`: the program as a user message whose
 * `ts` is the first start, its calls, their results). A record without a readable start time
 * starts now: the clock is the only thing it changes.
 */
export function programRecord(nested: Session): ProgramRecord {
  const results = new Map<string, ToolResultMessage>();
  for (const message of nested.messages) if (isToolResult(message)) results.set(message.id, message);
  const calls: RecordedCall[] = [];
  for (const message of nested.messages) {
    if (!isToolCall(message)) continue;
    const result = results.get(message.id);
    calls.push(result === undefined ? { call: message } : { call: message, result });
  }
  const first = nested.messages[0];
  const started = first !== undefined && "role" in first && first.ts !== undefined ? Date.parse(first.ts) : Number.NaN;
  return { startedAt: Number.isNaN(started) ? Date.now() : started, calls };
}
