import { InvalidModelResponseError } from "../errors.ts";
import type { AbortRace } from "../shared/abort.ts";
import { isModelStream, type ModelStreamEvent } from "./model-stream-event.ts";
import type { JsonObject, ModelMessage, Session, ToolCallMessage, TurnEndFields } from "../session.ts";
import type { ToolSchema } from "../shared/tool-schema.ts";
import { modelOwnFields, turnEndFields } from "./model-own-fields.ts";
import type { InvokeModel, ModelContext } from "./invoke-model.ts";

/** What reading a turn reports as it goes: the stream's deltas, and each tool call once it is complete. */
export type ModelTurnProgress =
  | Exclude<ModelStreamEvent, { type: "message" | "response-end" }>
  | { type: "tool-call-end"; id: string; name: string; input: JsonObject };

/** The arguments of one model call: what `invokeModel` is given. */
export type ModelCall = {
  readonly tools: ToolSchema[];
  readonly session: Session;
  readonly context: ModelContext;
};

/** Who reads a model turn: the model, and where what streams goes. The same for every call of a run. */
export type ModelReader = {
  readonly invokeModel: InvokeModel;
  readonly abortRace: AbortRace;
  /** Hears the stream's deltas as they arrive. */
  readonly emit: (event: ModelTurnProgress) => void;
  /** Hears each tool call of the stream once it is complete (before `response-end`); absent: nobody does. */
  readonly eager?: { readonly onToolCall: (call: ToolCallMessage) => void } | undefined;
};

/**
 * Calls the model once and returns the complete turn, checked. Stream deltas are forwarded to
 * `emit` as they arrive; messages are returned only once the whole turn is in, so a failure
 * mid-stream leaves nothing half-written. A model that answers with an array is read at once
 * (the turn itself is returned, and its failures thrown); any other answer gives a promise.
 */
export function readModelTurn(reader: ModelReader, call: ModelCall): ModelMessage[] | Promise<ModelMessage[]> {
  const result = reader.invokeModel(call.tools, call.session, call.context);
  // No async frame for an answer that is already here: at 2,000 concurrent runs the model turn's
  // async frames cost 10 to 20% of the CPU (bench/README.md).
  if (Array.isArray(result)) return checkTurn(result, noStop);
  return readLater(result, reader);
}

async function readLater(
  result: AsyncIterable<ModelStreamEvent> | Promise<ModelMessage[]>,
  reader: ModelReader,
): Promise<ModelMessage[]> {
  if (isModelStream(result)) {
    const { messages, stop } = await readStream(result, reader);
    return checkTurn(messages, stop);
  }
  return checkTurn(await reader.abortRace.race(result), noStop);
}

const noStop: TurnEndFields = {};

async function readStream(
  stream: AsyncIterable<ModelStreamEvent>,
  { abortRace, emit, eager }: ModelReader,
): Promise<{ messages: ModelMessage[]; stop: TurnEndFields }> {
  const iterator = stream[Symbol.asyncIterator]();
  const messages: ModelMessage[] = [];
  let stop: TurnEndFields = {};
  let ended = false;
  let done = false;
  try {
    for (;;) {
      const next = await abortRace.race(iterator.next());
      if (next.done === true) break;
      const event = next.value;
      if (event.type === "message") {
        const message = modelOwnFields(event.message);
        messages.push(message);
        if ("type" in message && message.type === "tool_call" && isWellFormedCall(message)) {
          emit({ type: "tool-call-end", id: message.id, name: message.name, input: message.input });
          // Calls after response-end are ones the length limit cut off: they never start early.
          if (!ended) eager?.onToolCall(message);
        }
      } else if (event.type === "response-end") {
        stop = turnEndFields(event);
        ended = true;
      } else emit(event);
    }
    done = true;
  } finally {
    // Abort or error mid-stream: let the adapter close its connection, without waiting on it.
    if (!done) void Promise.resolve(iterator.return?.()).catch(() => undefined);
  }
  return { messages, stop };
}

// Only a call the turn check will accept may start before the turn is complete.
function isWellFormedCall(call: ToolCallMessage): boolean {
  const input: unknown = call.input;
  return (
    typeof call.id === "string" &&
    call.id !== "" &&
    typeof call.name === "string" &&
    typeof input === "object" &&
    input !== null &&
    !Array.isArray(input)
  );
}

// The loop relies on these; a message that breaks them would corrupt the session later, so the
// turn is refused whole, before anything of it is added.
function checkTurn(messages: unknown, stop: TurnEndFields): ModelMessage[] {
  if (!Array.isArray(messages)) {
    throw new InvalidModelResponseError(`invokeModel must return an array of messages, got ${typeof messages}`);
  }
  // A new array of new messages, each with only the fields a model's message may have. Made at
  // its length: grown from empty, its first push would reserve room for 17.
  const checked = new Array<ModelMessage>(messages.length);
  // Made at the second call only: most turns have one call or none.
  let firstId: string | undefined;
  let ids: Set<string> | undefined;
  for (let index = 0; index < messages.length; index++) {
    const message: unknown = messages[index];
    if (typeof message !== "object" || message === null) {
      throw new InvalidModelResponseError(`invokeModel returned a non-object at index ${index}`);
    }
    const candidate = message as Partial<Record<string, unknown>>;
    if ((candidate.role === "assistant" || candidate.type === "thinking") && typeof candidate.content === "string") {
      checked[index] = modelOwnFields(message as ModelMessage);
      continue;
    }
    if (candidate.type !== "tool_call") {
      throw new InvalidModelResponseError(
        `invokeModel may return only assistant, thinking and tool_call messages; got ${JSON.stringify(message).slice(0, 80)} at index ${index}`,
      );
    }
    if (typeof candidate.id !== "string" || candidate.id === "" || typeof candidate.name !== "string") {
      throw new InvalidModelResponseError(`tool_call at index ${index} needs a non-empty string id and a name`);
    }
    if (candidate.id === firstId || ids?.has(candidate.id) === true)
      throw new InvalidModelResponseError(`duplicate tool_call id "${candidate.id}" in one response`);
    if (firstId === undefined) firstId = candidate.id;
    else (ids ??= new Set([firstId])).add(candidate.id);
    if (
      candidate.input !== undefined &&
      (typeof candidate.input !== "object" || candidate.input === null || Array.isArray(candidate.input))
    ) {
      throw new InvalidModelResponseError(`tool_call "${candidate.name}" input must be a JSON object`);
    }
    const call = modelOwnFields(message as ModelMessage) as ToolCallMessage;
    if (candidate.input === undefined) call.input = {};
    checked[index] = call;
  }
  if (checked.length === 0) return [{ role: "assistant", content: "", ...stop }];
  if (
    stop.stopReason !== undefined ||
    stop.usage !== undefined ||
    stop.rawStopReason !== undefined ||
    stop.stopDetails !== undefined ||
    stop.model !== undefined ||
    stop.responseId !== undefined
  ) {
    Object.assign(checked[checked.length - 1]!, stop);
  }
  return checked;
}
