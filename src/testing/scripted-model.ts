import { delay } from "../shared/abort.ts";
import { AgentError, describeValue } from "../errors.ts";
import { checkNumber, maxTimerDelay } from "../numeric-options.ts";
import type { ModelStreamEvent } from "../model/model-stream-event.ts";
import type { InvokeModel, ModelContext } from "../model/invoke-model.ts";
import { modelOwnFields, turnEndFields } from "../model/model-own-fields.ts";
import { forkSession, type ModelMessage, type Session } from "../session.ts";
import type { ToolSchema } from "../tools/tool.ts";

/** Produces a turn's messages from the session the model was called with. */
export type TurnFunction = (session: Session, context: ModelContext) => ModelMessage[] | Promise<ModelMessage[]>;

/**
 * One scripted model turn: its messages (or a function of the session), optionally after a delay
 * (abortable through the call's signal), or a failure instead.
 */
export type ScriptedTurn = ModelMessage[] | ModelMessage | TurnFunction | TurnOptions;

export type TurnOptions = {
  messages?: ModelMessage[] | TurnFunction;
  /** Wait this long (ms, from 0 to `maxTimerDelay`) before answering; an abort ends the wait. */
  delay?: number;
  /** @deprecated Alias of `delay`, the canonical name; giving both with different values is an error. */
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
 * a model. A call after the last turn throws, naming the call number. A malformed script (a turn
 * that is not messages, a function or turn options; a message a model cannot give; an unknown
 * option; a delay a timer cannot hold) throws an `AgentError` here, naming the turn, rather than
 * answering something at run time.
 */
export function scriptedModel(turns: readonly ScriptedTurn[], options: ScriptedModelOptions = {}): ScriptedModel {
  checkScript(turns);
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
      typeof turn === "function" || Array.isArray(turn)
        ? { messages: turn }
        : "role" in turn || "type" in turn
          ? { messages: [turn] }
          : turn;
    const spec = given.delayMs !== undefined && given.delay === undefined ? { ...given, delay: given.delayMs } : given;
    const streamed = spec.stream ?? options.stream ?? false;
    if (spec.delay === undefined && spec.error === undefined && !streamed && Array.isArray(spec.messages)) {
      return structuredClone(spec.messages);
    }
    const answer = async (): Promise<ModelMessage[]> => {
      if (spec.delay !== undefined) await delay(spec.delay, context.signal);
      if (spec.error !== undefined) throw spec.error;
      const messages =
        typeof spec.messages === "function" ? await spec.messages(session, context) : (spec.messages ?? []);
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

function checkScript(turns: readonly ScriptedTurn[]): void {
  if (!Array.isArray(turns))
    throw new AgentError(`scriptedModel: the script must be an array of turns; got ${describeValue(turns)}`);
  turns.forEach((turn: unknown, index) => {
    const where = `scriptedModel: turn ${index + 1}`;
    if (typeof turn === "function") return;
    if (Array.isArray(turn))
      return void turn.forEach((message, position) => checkMessage(message, `${where}, message ${position + 1}`));
    if (typeof turn !== "object" || turn === null)
      throw new AgentError(
        `${where} must be messages, a message, a function or turn options; got ${describeValue(turn)}`,
      );
    if ("role" in turn || "type" in turn) return checkMessage(turn, where);
    const unknown = Object.keys(turn).filter((key) => !turnOptionKeys.has(key));
    if (unknown.length > 0)
      throw new AgentError(
        `${where}: unknown option ${unknown.map((key) => JSON.stringify(key)).join(", ")} (known: ${[...turnOptionKeys].join(", ")})`,
      );
    const spec = turn as TurnOptions;
    for (const key of ["delay", "delayMs"] as const)
      checkNumber(`${where}: ${key}`, spec[key], { min: 0, max: maxTimerDelay });
    if (spec.delay !== undefined && spec.delayMs !== undefined && spec.delay !== spec.delayMs)
      throw new AgentError(`${where}: delay and delayMs differ; give one`);
    if (spec.stream !== undefined && typeof spec.stream !== "boolean")
      throw new AgentError(`${where}: stream must be true or false`);
    const messages: unknown = spec.messages;
    if (messages === undefined || typeof messages === "function") return;
    if (!Array.isArray(messages))
      throw new AgentError(
        `${where}: messages must be an array of messages or a function; got ${describeValue(messages)}`,
      );
    messages.forEach((message, position) => checkMessage(message, `${where}, message ${position + 1}`));
  });
}

const turnOptionKeys = new Set(["messages", "delay", "delayMs", "error", "stream"]);

// What a model may answer: the loop refuses anything else, so a script that holds it is a mistake.
function checkMessage(message: unknown, where: string): void {
  const candidate = (typeof message === "object" && message !== null ? message : {}) as Record<string, unknown>;
  const valid =
    (candidate.role === "assistant" && typeof candidate.content === "string") ||
    (candidate.type === "thinking" && typeof candidate.content === "string") ||
    (candidate.type === "tool_call" &&
      typeof candidate.id === "string" &&
      candidate.id !== "" &&
      typeof candidate.name === "string" &&
      (candidate.input === undefined ||
        (typeof candidate.input === "object" && candidate.input !== null && !Array.isArray(candidate.input))));
  if (!valid) {
    throw new AgentError(
      `${where} is not a message a model gives (assistant text, thinking, or a tool_call with an id, a name and an object input); got ${describeValue(message)}`,
    );
  }
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
      for (const delta of chunks(JSON.stringify(message.input)))
        yield { type: "tool-call-delta", id: message.id, delta };
    }
    // The message by the fields a model's message has; its turn-end fields go on response-end.
    const own = modelOwnFields(message);
    delete own.stopReason;
    delete own.rawStopReason;
    delete own.stopDetails;
    delete own.usage;
    yield { type: "message", message: own };
  }
  const last = messages[messages.length - 1];
  yield { type: "response-end", ...(last === undefined ? {} : turnEndFields(last)) };
}

function chunks(text: string, size = 8): string[] {
  const parts: string[] = [];
  for (let index = 0; index < text.length; index += size) parts.push(text.slice(index, index + size));
  return parts;
}
