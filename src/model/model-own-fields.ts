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
  // Each field read by name (no key picked at run time): this runs on every message of every turn.
  // Each copy starts as an empty object, its fields set one by one, not as a literal: a literal's
  // objects that live as long as their session are made in V8's old generation after a while, and
  // there every field set to a new value (the id, the input) costs a write barrier.
  const source = message as Partial<Record<string, unknown>>;
  if (source.role === "assistant") {
    const own = {} as AssistantMessage;
    own.role = "assistant";
    own.content = source.content as string;
    if (typeof source.signature === "string") own.signature = source.signature;
    if (typeof source.provider === "string") own.provider = source.provider;
    copyTurnEndFields(source, own);
    return own;
  }
  if (source.type === "thinking") {
    const own = {} as ThinkingMessage;
    own.type = "thinking";
    own.content = source.content as string;
    if (typeof source.signature === "string") own.signature = source.signature;
    if (typeof source.provider === "string") own.provider = source.provider;
    if (source.redacted === true) own.redacted = true;
    copyTurnEndFields(source, own);
    return own;
  }
  if (source.type === "tool_call") {
    const own = {} as ToolCallMessage;
    own.type = "tool_call";
    own.id = source.id as string;
    own.name = source.name as string;
    if (source.input !== undefined) own.input = source.input as ToolCallMessage["input"];
    if (typeof source.signature === "string") own.signature = source.signature;
    if (typeof source.provider === "string") own.provider = source.provider;
    if (typeof source.wireId === "string") own.wireId = source.wireId;
    if (typeof source.inputError === "string") own.inputError = source.inputError;
    if (source.generatedId === true) own.generatedId = true;
    copyTurnEndFields(source, own);
    return own;
  }
  return message;
}

/** The turn-end fields of a model's message or `response-end` event, by name, each checked for its type. */
export function turnEndFields(source: Partial<Record<string, unknown>>): TurnEndFields {
  const fields: TurnEndFields = {};
  copyTurnEndFields(source, fields);
  return fields;
}

// Written onto the message itself: no object of its own for the fields, none for a turn without them.
function copyTurnEndFields(source: Partial<Record<string, unknown>>, target: TurnEndFields): void {
  if (typeof source.stopReason === "string") target.stopReason = source.stopReason as StopReason;
  if (typeof source.rawStopReason === "string") target.rawStopReason = source.rawStopReason;
  if (typeof source.model === "string") target.model = source.model;
  if (typeof source.responseId === "string") target.responseId = source.responseId;
  const details = source.stopDetails;
  if (typeof details === "object" && details !== null && !Array.isArray(details)) {
    const given = details as Partial<Record<string, unknown>>;
    const stopDetails: NonNullable<TurnEndFields["stopDetails"]> = {};
    if (typeof given.type === "string") stopDetails.type = given.type;
    if (typeof given.category === "string") stopDetails.category = given.category;
    if (typeof given.explanation === "string") stopDetails.explanation = given.explanation;
    target.stopDetails = stopDetails;
  }
  const usage = usageCounts(source.usage);
  if (usage !== undefined) target.usage = usage;
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
