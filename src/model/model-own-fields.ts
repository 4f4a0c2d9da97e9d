import type {
  AssistantMessage,
  ModelMessage,
  StopReason,
  ThinkingMessage,
  ToolCallMessage,
  TurnEndFields,
  Usage,
} from "../session.ts";

/**
 * A message as the loop keeps it from a model's output: a new object with only the fields a
 * model's message may have, each taken by name and only with its own type. Whatever else arrived
 * (an `approval`, a `heldResult`, a validated `output`, `compacted`, a relay's own fields) is left
 * behind: the loop alone decides those. Shapes it does not know are returned as they came, for the
 * turn check to refuse.
 */
export function modelOwnFields(message: ModelMessage): ModelMessage {
  const source = message as Partial<Record<string, unknown>>;
  if (source.role === "assistant") {
    const own: AssistantMessage = { role: "assistant", content: source.content as string };
    takeString(source, own, "signature");
    takeString(source, own, "provider");
    return Object.assign(own, turnEndFields(source));
  }
  if (source.type === "thinking") {
    const own: ThinkingMessage = { type: "thinking", content: source.content as string };
    takeString(source, own, "signature");
    takeString(source, own, "provider");
    if (source.redacted === true) own.redacted = true;
    return Object.assign(own, turnEndFields(source));
  }
  if (source.type === "tool_call") {
    const own = { type: "tool_call", id: source.id, name: source.name } as ToolCallMessage;
    if (source.input !== undefined) own.input = source.input as ToolCallMessage["input"];
    takeString(source, own, "signature");
    takeString(source, own, "provider");
    takeString(source, own, "wireId");
    takeString(source, own, "inputError");
    if (source.generatedId === true) own.generatedId = true;
    return Object.assign(own, turnEndFields(source));
  }
  return message;
}

/** The turn-end fields of a model's message or `response-end` event, by name, each checked for its type. */
export function turnEndFields(source: Partial<Record<string, unknown>>): TurnEndFields {
  const fields: TurnEndFields = {};
  if (typeof source.stopReason === "string") fields.stopReason = source.stopReason as StopReason;
  if (typeof source.rawStopReason === "string") fields.rawStopReason = source.rawStopReason;
  takeString(source, fields, "model");
  takeString(source, fields, "responseId");
  const details = source.stopDetails;
  if (typeof details === "object" && details !== null && !Array.isArray(details)) {
    const given = details as Partial<Record<string, unknown>>;
    const stopDetails: NonNullable<TurnEndFields["stopDetails"]> = {};
    takeString(given, stopDetails, "type");
    takeString(given, stopDetails, "category");
    takeString(given, stopDetails, "explanation");
    fields.stopDetails = stopDetails;
  }
  const usage = usageCounts(source.usage);
  if (usage !== undefined) fields.usage = usage;
  return fields;
}

/**
 * Usage as the loop keeps it: every count a non-negative safe integer. A bad optional count is left
 * out; without valid input and output counts there is no usage at all.
 */
function usageCounts(given: unknown): Usage | undefined {
  if (typeof given !== "object" || given === null || Array.isArray(given)) return undefined;
  const counts = given as Partial<Record<string, unknown>>;
  if (!isCount(counts.inputTokens) || !isCount(counts.outputTokens)) return undefined;
  const usage: Usage = { inputTokens: counts.inputTokens, outputTokens: counts.outputTokens };
  for (const name of ["cacheReadTokens", "cacheWriteTokens", "reasoningTokens"] as const) {
    const count = counts[name];
    if (isCount(count)) usage[name] = count;
  }
  return usage;
}

function isCount(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

function takeString<Target extends object>(
  source: Partial<Record<string, unknown>>,
  target: Target,
  name: keyof Target & string,
): void {
  const value = source[name];
  if (typeof value === "string") (target as Record<string, unknown>)[name] = value;
}
