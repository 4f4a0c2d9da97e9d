import { delay } from "../abort.ts";
import type { ModelStreamEvent } from "../events.ts";
import type { InvokeModel, ModelContext } from "../invoke-model.ts";
import { forkSession, type ModelMessage, type Session } from "../session.ts";
import type { ToolSchema } from "../tools.ts";

/** Produces a turn's messages from the session the model was called with. */
export type TurnFunction = (session: Session, context: ModelContext) => ModelMessage[] | Promise<ModelMessage[]>;

/**
 * One scripted model turn: its messages (or a function of the session), optionally after a delay
 * (abortable through the call's signal), or a failure instead.
 */
export type ScriptedTurn = ModelMessage[] | ModelMessage | TurnFunction | TurnOptions;

export type TurnOptions = {
  messages?: ModelMessage[] | TurnFunction;
  /** Wait this long (ms) before answering; an abort ends the wait. */
  delay?: number;
  /** Same as `delay`. */
  delayMs?: number;
  /** Throw this instead of answering (after the delay). */
  error?: unknown;
  /** Stream this turn as events (overrides the model's `stream` option). */
  stream?: boolean;
};

export type ScriptedModelOptions = {
  /** Answer as a stream of events (deltas, then each message) instead of an array. Default false. */
  stream?: boolean;
  /** Keep a deep copy of every session the model is called with in `calls` (default true). */
  record?: boolean;
};

/** A scripted `invokeModel` with what it was called with. */
export type ScriptedModel = InvokeModel & {
  /** Deep copies of the session at each call, in call order (when `record` is on). */
  readonly calls: Session[];
  /** The same array as `calls`. */
  readonly sessions: Session[];
  /** The tool schemas of each call. */
  readonly toolsSeen: ToolSchema[][];
  /** How many turns were consumed. */
  readonly callCount: number;
};

/**
 * An `invokeModel` that replays scripted turns, in order, one per call: for testing agents without
 * a model. A call after the last turn throws, naming the call number.
 */
export function scriptedModel(turns: readonly ScriptedTurn[], options: ScriptedModelOptions = {}): ScriptedModel {
  const calls: Session[] = [];
  const toolsSeen: ToolSchema[][] = [];
  let callCount = 0;

  const invoke = (tools: ToolSchema[], session: Session, context: ModelContext) => {
    const turn = turns[callCount];
    callCount++;
    if (options.record !== false) {
      calls.push(forkSession(session));
      toolsSeen.push(tools);
    }
    if (turn === undefined) {
      throw new Error(`scriptedModel: no turn scripted for call ${callCount} (${turns.length} scripted)`);
    }
    // A bare message (not in an array) is a one-message turn, not turn options.
    const given: TurnOptions =
      typeof turn === "function" || Array.isArray(turn) ? { messages: turn } : "role" in turn || "type" in turn ? { messages: [turn] } : turn;
    const spec = given.delayMs !== undefined && given.delay === undefined ? { ...given, delay: given.delayMs } : given;
    const streamed = spec.stream ?? options.stream ?? false;
    if (spec.delay === undefined && spec.error === undefined && !streamed && Array.isArray(spec.messages)) {
      return structuredClone(spec.messages);
    }
    const answer = async (): Promise<ModelMessage[]> => {
      if (spec.delay !== undefined) await delay(spec.delay, context.signal);
      if (spec.error !== undefined) throw spec.error;
      const messages = typeof spec.messages === "function" ? await spec.messages(session, context) : spec.messages ?? [];
      return structuredClone(messages);
    };
    return streamed ? streamTurn(answer) : answer();
  };

  return Object.defineProperties(invoke, {
    calls: { get: () => calls },
    sessions: { get: () => calls },
    toolsSeen: { get: () => toolsSeen },
    callCount: { get: () => callCount },
  }) as ScriptedModel;
}

// Splits each message into the deltas a provider would stream, then the message itself.
async function* streamTurn(answer: () => Promise<ModelMessage[]>): AsyncGenerator<ModelStreamEvent> {
  const messages = await answer();
  for (const message of messages) {
    if ("role" in message) {
      for (const delta of chunks(message.content)) yield { type: "text-delta", delta };
    } else if (message.type === "thinking") {
      for (const delta of chunks(message.content)) yield { type: "thinking-delta", delta };
    } else {
      yield { type: "tool-call-start", id: message.id, name: message.name };
      for (const delta of chunks(JSON.stringify(message.input))) yield { type: "tool-call-delta", id: message.id, delta };
    }
    const { stopReason: _stopReason, rawStopReason: _raw, usage: _usage, ...rest } = message;
    yield { type: "message", message: rest as ModelMessage };
  }
  const last = messages[messages.length - 1];
  const end: ModelStreamEvent = { type: "response-end" };
  if (last?.stopReason !== undefined) end.stopReason = last.stopReason;
  if (last?.rawStopReason !== undefined) end.rawStopReason = last.rawStopReason;
  if (last?.usage !== undefined) end.usage = last.usage;
  yield end;
}

function chunks(text: string, size = 8): string[] {
  const parts: string[] = [];
  for (let index = 0; index < text.length; index += size) parts.push(text.slice(index, index + size));
  return parts;
}
