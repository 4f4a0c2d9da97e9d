import { existsSync, readFileSync, renameSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { delay } from "../shared/abort.ts";
import { AgentError, ContextOverflowError, isRaisedBeforeSending, ProviderError } from "../errors.ts";
import type { InvokeModel, ModelContext } from "../model/invoke-model.ts";
import { isModelStream, type ModelStreamEvent } from "../model/model-stream-event.ts";
import { jsonNestedDeeperThan, maxJsonDepth, type ModelMessage, type Session } from "../session.ts";
import type { ToolSchema } from "../shared/tool-schema.ts";
import type { RecordedToolCall, ToolCallRecorder } from "../tools/tool-call-recorder.ts";
import { isToolContent, toolContent } from "../tools/tool-content.ts";
import { firstDifference, showValue } from "./cassette-compare.ts";
import {
  cassetteRequest,
  plain,
  recordError,
  type CassetteAnswer,
  type CassetteEntry,
  type CassetteModelEntry,
  type CassetteRequest,
  type CassetteToolEntry,
  type RecordedError,
} from "./cassette-entry.ts";
import { CassetteError, CassetteMismatchError, CassetteSecretError } from "./cassette-errors.ts";
import { findSecret } from "./secret-scan.ts";

export type CassetteMode = "auto" | "record" | "replay" | "live" | "update";

export type CassetteOptions = {
  /** The JSONL file: one entry per model call (and per tool call with `tools: "record"`). */
  path: string;
  /**
   * `"auto"` (default): replay when the file exists, record otherwise; with `CI` set it never
   * records (a missing file is an error). `"record"`: call the model and write a new file.
   * `"replay"`: answer from the file only. `"live"`: pass through. `"update"`: replay until the
   * first call that differs, then record from there on. `SAL_CASSETTE_MODE`, when set, wins.
   */
  mode?: CassetteMode;
  /**
   * The entry to write, for the user's own secrets. On replay the live request goes through it
   * too before it is compared, so a redacted recording still matches.
   */
  redact?: (entry: CassetteEntry) => CassetteEntry;
  /** `"instant"` (default) or `"recorded"`: replay streamed events with the timing they came with. */
  pace?: "instant" | "recorded";
  /** `"record"`: tool results are recorded too, and replayed without running the handlers. */
  tools?: "record" | "off";
};

/** The model `cassette()` returns: an `invokeModel`, plus what `assertCassetteUsed` reads. */
export type CassetteModel = InvokeModel & {
  /** The mode in effect after `SAL_CASSETTE_MODE` and `CI` were applied. */
  readonly cassetteMode: Exclude<CassetteMode, "auto">;
  readonly cassettePath: string;
  /** Entries of the file no call has used yet (replay and update). */
  readonly unusedEntries: () => CassetteEntry[];
  /** Declared to the loop with `tools: "record"`: each tool call goes through the cassette. */
  readonly recordToolCall?: ToolCallRecorder;
  readonly structuredOutput?: "native";
};

/**
 * Wraps `invokeModel` so a run's model calls are recorded to a JSONL file once and replayed from it
 * afterwards, strictly and in order: a request that differs from the recording throws
 * `CassetteMismatchError` naming the call and the first differing path. Nothing that looks like an
 * API key is ever written (`CassetteSecretError`); the adapters' headers are never seen here.
 */
export function cassette(invokeModel: InvokeModel, options: CassetteOptions): CassetteModel {
  checkOptions(options);
  const mode = effectiveMode(options);
  const recorder = createRecorder(invokeModel, options, mode);
  const model = ((tools: ToolSchema[], session: Session, context: ModelContext) =>
    recorder.call(tools, session, context)) as InvokeModel;
  const declared: Record<string, unknown> = {
    cassetteMode: mode,
    cassettePath: options.path,
    unusedEntries: () => recorder.unused(),
  };
  if ("structuredOutput" in invokeModel && invokeModel.structuredOutput === "native") {
    declared.structuredOutput = "native";
  }
  if (options.tools === "record" && mode !== "live") declared.recordToolCall = recorder.toolCall;
  return Object.assign(model, declared) as unknown as CassetteModel;
}

/** Throws when entries of the cassette were left unused: the run made fewer calls than were recorded. */
export function assertCassetteUsed(model: InvokeModel): void {
  const unused = (model as Partial<CassetteModel>).unusedEntries;
  if (typeof unused !== "function")
    throw new CassetteError("assertCassetteUsed: this model was not made by cassette()");
  const left = unused();
  if (left.length === 0) return;
  const described = left
    .slice(0, 5)
    .map((entry) => (entry.kind === "model" ? `model call ${entry.call}` : `tool call ${entry.name} (${entry.id})`))
    .join(", ");
  throw new CassetteError(
    `cassette ${(model as CassetteModel).cassettePath}: ${left.length} recorded ${left.length === 1 ? "entry was" : "entries were"} not used: ${described}${left.length > 5 ? ", …" : ""}`,
  );
}

type Recorder = {
  call(tools: ToolSchema[], session: Session, context: ModelContext): ReturnType<InvokeModel>;
  toolCall: ToolCallRecorder;
  unused(): CassetteEntry[];
};

/** What one cassette holds while runs use it. */
type Tape = {
  readonly path: string;
  readonly mode: Exclude<CassetteMode, "auto">;
  readonly options: CassetteOptions;
  /** The file's text before this cassette began, to put back when a recording is refused. */
  readonly original: string | undefined;
  /** The entries read from the file (replay and update). */
  readonly recorded: CassetteEntry[];
  readonly used: Set<number>;
  /** What the file will hold: in update mode, the replayed entries until the first change, then new ones. */
  readonly written: CassetteEntry[];
  recording: boolean;
  calls: number;
  /** Set once a recording was refused: every later call fails the same way. */
  failed: Error | undefined;
};

function createRecorder(
  invokeModel: InvokeModel,
  options: CassetteOptions,
  mode: Exclude<CassetteMode, "auto">,
): Recorder {
  const original = existsSync(options.path) ? readFileSync(options.path, "utf8") : undefined;
  const tape: Tape = {
    path: options.path,
    mode,
    options,
    original,
    recorded: mode === "replay" || mode === "update" ? readCassette(options.path, original) : [],
    used: new Set(),
    written: [],
    recording: mode === "record",
    calls: 0,
    failed: undefined,
  };
  return {
    call: (tools, session, context) => callModel(tape, invokeModel, { tools, session, context }),
    toolCall: (call, run) => callTool(tape, call, run),
    unused: () => tape.recorded.filter((_, index) => !tape.used.has(index)),
  };
}

type ModelCall = { tools: ToolSchema[]; session: Session; context: ModelContext };

function callModel(tape: Tape, invokeModel: InvokeModel, request: ModelCall): ReturnType<InvokeModel> {
  if (tape.failed !== undefined) throw tape.failed;
  tape.calls += 1;
  const { tools, session, context } = request;
  if (tape.mode === "live") return invokeModel(tools, session, context);
  const asked = cassetteRequest(tools, session, context);
  if (!tape.recording) {
    const next = nextModelEntry(tape, context.agentName);
    const difference = next === undefined ? undefined : compareRequest(tape, next.entry, asked);
    if (next !== undefined && difference === undefined) {
      tape.used.add(next.index);
      if (tape.mode === "update") tape.written.push(next.entry);
      return replayAnswer(next.entry.answer, context, tape.options.pace ?? "instant");
    }
    if (tape.mode !== "update") throw mismatch(tape.calls, next?.entry, difference, asked);
    startRecording(tape, next?.index ?? tape.recorded.length);
  }
  return recordCall(tape, invokeModel, request, asked);
}

function redacted<Entry extends CassetteEntry>(tape: Tape, entry: Entry): Entry {
  const redact = tape.options.redact;
  return (redact === undefined ? entry : plain(redact(entry))) as Entry;
}

function compareRequest(tape: Tape, entry: CassetteModelEntry, request: CassetteRequest) {
  const now = redacted(tape, { ...entry, request: plain(request) as CassetteRequest }).request;
  return firstDifference(entry.request, plain(now));
}

function nextModelEntry(
  tape: Tape,
  agent: string | undefined,
): { entry: CassetteModelEntry; index: number } | undefined {
  for (let index = 0; index < tape.recorded.length; index++) {
    const entry = tape.recorded[index]!;
    if (entry.kind === "model" && !tape.used.has(index) && entry.agent === agent) return { entry, index };
  }
  return undefined;
}

// Update mode keeps what was replayed before the first change, in file order, and drops the rest.
function startRecording(tape: Tape, fromIndex: number): void {
  tape.recording = true;
  tape.written.length = 0;
  for (let index = 0; index < fromIndex; index++) if (tape.used.has(index)) tape.written.push(tape.recorded[index]!);
  for (let index = fromIndex; index < tape.recorded.length; index++) tape.used.add(index);
}

function write(tape: Tape, entry: CassetteEntry): void {
  refuseSecrets(tape, entry, entry.kind === "model" ? `call ${entry.call}` : `tool call ${entry.id}`);
  tape.written.push(entry);
  mkdirSync(dirname(tape.path), { recursive: true });
  const temporary = `${tape.path}.${process.pid}.tmp`;
  writeFileSync(temporary, tape.written.map((line) => JSON.stringify(line)).join("\n") + "\n", { mode: 0o644 });
  renameSync(temporary, tape.path);
}

// A refused recording leaves the file as it was before this cassette began (or absent).
function refuseSecrets(tape: Tape, value: unknown, where: string): void {
  const secret = findSecret(value, where);
  if (secret === undefined) return;
  tape.failed = new CassetteSecretError(secret.where, secret.kind);
  if (tape.original === undefined) rmSync(tape.path, { force: true });
  else writeFileSync(tape.path, tape.original);
  throw tape.failed;
}

function recordCall(
  tape: Tape,
  invokeModel: InvokeModel,
  call: ModelCall,
  request: CassetteRequest,
): ReturnType<InvokeModel> {
  const { tools, session, context } = call;
  const entryOf = (answer: CassetteAnswer): CassetteModelEntry => {
    const entry: CassetteModelEntry = { kind: "model", call: 0, iteration: context.iteration, request, answer };
    if (context.agentName !== undefined) entry.agent = context.agentName;
    return entry;
  };
  const keep = (answer: CassetteAnswer): void => {
    const entry = redacted(tape, plain(entryOf(answer)) as CassetteModelEntry);
    entry.call = tape.written.filter((line) => line.kind === "model").length + 1;
    write(tape, entry);
  };
  // A request that carries a key is refused before anything is sent.
  refuseSecrets(
    tape,
    redacted(tape, plain(entryOf({ type: "messages", messages: [], ms: 0 })) as CassetteModelEntry),
    "the request",
  );
  const started = performance.now();
  const elapsed = (): number => Math.round(performance.now() - started);
  const failed = (error: unknown): never => {
    // An error raised before anything was sent (no key, an invalid setting) is not the model's answer.
    if (!context.signal.aborted && !isRaisedBeforeSending(error))
      keep({ type: "error", error: recordError(error), ms: elapsed() });
    throw error;
  };
  let answer: ReturnType<InvokeModel>;
  try {
    answer = invokeModel(tools, session, context);
  } catch (error) {
    return failed(error);
  }
  if (isModelStream(answer)) return recordStream(answer, context, elapsed, keep);
  return Promise.resolve(answer).then((messages) => {
    keep({ type: "messages", messages: plain(messages) as ModelMessage[], ms: elapsed() });
    return messages;
  }, failed);
}

async function callTool(tape: Tape, call: RecordedToolCall, run: () => Promise<unknown>): Promise<unknown> {
  if (tape.failed !== undefined) throw tape.failed;
  if (!tape.recording) {
    const index = tape.recorded.findIndex(
      (entry, at) => entry.kind === "tool" && !tape.used.has(at) && entry.id === call.id && entry.name === call.name,
    );
    const entry = tape.recorded[index] as CassetteToolEntry | undefined;
    if (entry !== undefined) return replayTool(tape, entry, index, call);
    if (tape.mode !== "update") {
      throw new CassetteMismatchError(`cassette: tool call ${call.name} (${call.id}) was not recorded`, {
        call: tape.calls,
        path: "tool",
        now: call.name,
      });
    }
  }
  const entryOf = (result: CassetteToolEntry["result"]): CassetteToolEntry => {
    const entry: CassetteToolEntry = { kind: "tool", id: call.id, name: call.name, input: plain(call.input), result };
    if (call.agent !== undefined) entry.agent = call.agent;
    return entry;
  };
  try {
    const output = await run();
    const result = isToolContent(output)
      ? { output: null, content: output.content }
      : { output: plain(output) ?? null };
    write(tape, redacted(tape, plain(entryOf(result)) as CassetteToolEntry));
    return output;
  } catch (error) {
    if (tape.failed !== undefined) throw error;
    const message = error instanceof Error ? error.message : String(error);
    write(tape, redacted(tape, plain(entryOf({ output: message, isError: true })) as CassetteToolEntry));
    throw error;
  }
}

function replayTool(tape: Tape, entry: CassetteToolEntry, index: number, call: RecordedToolCall): unknown {
  const difference = firstDifference(entry.input, plain(call.input));
  if (difference !== undefined) {
    const path = difference.path === "(the whole value)" ? "input" : `input.${difference.path}`;
    throw new CassetteMismatchError(
      `cassette: tool call ${call.name} (${call.id}) differs from the recording at ${path}: recorded ${showValue(difference.recorded)}, now ${showValue(difference.now)}`,
      { call: tape.calls, path, recorded: difference.recorded, now: difference.now },
    );
  }
  tape.used.add(index);
  if (tape.mode === "update") tape.written.push(entry);
  if (entry.result.isError === true) throw new Error(String(entry.result.output));
  return entry.result.content === undefined ? plain(entry.result.output) : toolContent(entry.result.content);
}

async function* recordStream(
  stream: AsyncIterable<ModelStreamEvent>,
  context: ModelContext,
  elapsed: () => number,
  keep: (answer: CassetteAnswer) => void,
): AsyncGenerator<ModelStreamEvent> {
  const events: { ms: number; event: ModelStreamEvent }[] = [];
  try {
    for await (const event of stream) {
      events.push({ ms: elapsed(), event: plain(event) as ModelStreamEvent });
      yield event;
    }
  } catch (error) {
    if (!context.signal.aborted) keep({ type: "stream", events, error: recordError(error), ms: elapsed() });
    throw error;
  }
  keep({ type: "stream", events, ms: elapsed() });
}

function replayAnswer(
  answer: CassetteAnswer,
  context: ModelContext,
  pace: "instant" | "recorded",
): ReturnType<InvokeModel> {
  if (answer.type === "stream") return replayStream(answer, context, pace);
  const wait = pace === "recorded" ? delay(answer.ms, context.signal) : Promise.resolve();
  return wait.then(() => {
    if (answer.type === "error") throw rebuildError(answer.error);
    return plain(answer.messages) as ModelMessage[];
  });
}

async function* replayStream(
  answer: Extract<CassetteAnswer, { type: "stream" }>,
  context: ModelContext,
  pace: "instant" | "recorded",
): AsyncGenerator<ModelStreamEvent> {
  const started = performance.now();
  for (const { ms, event } of answer.events) {
    if (pace === "recorded") await delay(Math.max(0, ms - (performance.now() - started)), context.signal);
    yield plain(event) as ModelStreamEvent;
  }
  if (pace === "recorded") await delay(Math.max(0, answer.ms - (performance.now() - started)), context.signal);
  if (answer.error !== undefined) throw rebuildError(answer.error);
}

/** An error equivalent to the recorded one: the same class where it is a provider's, else an `AgentError` with its fields. */
export function rebuildError(recorded: RecordedError): Error {
  const details = {
    provider: recorded.provider ?? "cassette",
    ...(recorded.status === undefined ? {} : { status: recorded.status }),
    ...(recorded.retryable === undefined ? {} : { retryable: recorded.retryable }),
    ...(recorded.retryAfterMs === undefined ? {} : { retryAfterMs: recorded.retryAfterMs }),
    ...(recorded.code === undefined ? {} : { code: recorded.code }),
  };
  if (recorded.name === "ContextOverflowError") return new ContextOverflowError(recorded.message, details);
  if (recorded.name === "ProviderError") return new ProviderError(recorded.message, details);
  const error = new AgentError(recorded.message, { retryable: recorded.retryable ?? false });
  Object.defineProperty(error, "name", { value: recorded.name, enumerable: false, writable: true, configurable: true });
  Object.assign(error, details);
  return error;
}

function mismatch(
  call: number,
  entry: CassetteModelEntry | undefined,
  difference: ReturnType<typeof firstDifference>,
  request: CassetteRequest,
): CassetteMismatchError {
  if (entry === undefined || difference === undefined) {
    return new CassetteMismatchError(
      `cassette: model call ${call} was not recorded (the recording has fewer calls); the request's last message: ${showValue(request.messages.at(-1))}`,
      { call, path: "(no recorded call)" },
    );
  }
  return new CassetteMismatchError(
    `cassette: model call ${call} differs from the recording at ${difference.path}: recorded ${showValue(difference.recorded)}, now ${showValue(difference.now)}`,
    { call, path: difference.path, recorded: difference.recorded, now: difference.now },
  );
}

/** The entries of a cassette file, each checked for its shape; a missing file is an error here. */
export function readCassette(
  path: string,
  text = existsSync(path) ? readFileSync(path, "utf8") : undefined,
): CassetteEntry[] {
  if (text === undefined) {
    throw new CassetteError(
      `cassette: no recording at ${path}; record it first (mode "record", or "auto" without CI set) and commit it`,
    );
  }
  const entries: CassetteEntry[] = [];
  const lines = text.split("\n");
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!;
    if (line.trim() === "") continue;
    if (jsonNestedDeeperThan(line))
      throw new CassetteError(`cassette ${path}: line ${index + 1} is nested more than ${maxJsonDepth} levels deep`);
    let entry: unknown;
    try {
      entry = JSON.parse(line);
    } catch {
      throw new CassetteError(`cassette ${path}: line ${index + 1} is not JSON`);
    }
    const problem = entryProblem(entry);
    if (problem !== undefined) throw new CassetteError(`cassette ${path}: line ${index + 1}: ${problem}`);
    entries.push(entry as CassetteEntry);
  }
  return entries;
}

function entryProblem(entry: unknown): string | undefined {
  if (typeof entry !== "object" || entry === null || Array.isArray(entry)) return "not an entry object";
  const record = entry as Record<string, unknown>;
  if (record.kind === "tool") {
    if (typeof record.id !== "string" || typeof record.name !== "string") return "a tool entry needs id and name";
    if (typeof record.result !== "object" || record.result === null) return "a tool entry needs a result";
    return undefined;
  }
  if (record.kind !== "model") return `unknown kind ${showValue(record.kind)}`;
  const request = record.request as Record<string, unknown> | undefined;
  if (
    typeof request !== "object" ||
    request === null ||
    !Array.isArray(request.messages) ||
    !Array.isArray(request.tools)
  ) {
    return "a model entry needs request.messages and request.tools";
  }
  const answer = record.answer as Record<string, unknown> | undefined;
  if (typeof answer !== "object" || answer === null) return "a model entry needs an answer";
  if (answer.type === "stream" && !Array.isArray(answer.events)) return "a streamed answer needs events";
  if (answer.type === "messages" && !Array.isArray(answer.messages)) return "a messages answer needs messages";
  if (answer.type === "error" && (typeof answer.error !== "object" || answer.error === null))
    return "an error answer needs its error";
  if (!["stream", "messages", "error"].includes(answer.type as string))
    return `unknown answer type ${showValue(answer.type)}`;
  return undefined;
}

const modes: readonly CassetteMode[] = ["auto", "record", "replay", "live", "update"];

function checkOptions(options: CassetteOptions): void {
  if (typeof options !== "object" || options === null)
    throw new CassetteError("cassette: options with a path are required");
  if (typeof options.path !== "string" || options.path === "")
    throw new CassetteError("cassette: path must be a non-empty string");
  if (options.mode !== undefined && !modes.includes(options.mode)) {
    throw new CassetteError(`cassette: mode must be one of ${modes.join(", ")}; got ${showValue(options.mode)}`);
  }
  if (options.pace !== undefined && options.pace !== "instant" && options.pace !== "recorded") {
    throw new CassetteError(`cassette: pace must be "instant" or "recorded"; got ${showValue(options.pace)}`);
  }
  if (options.tools !== undefined && options.tools !== "record" && options.tools !== "off") {
    throw new CassetteError(`cassette: tools must be "record" or "off"; got ${showValue(options.tools)}`);
  }
  if (options.redact !== undefined && typeof options.redact !== "function") {
    throw new CassetteError("cassette: redact must be a function of an entry");
  }
}

function effectiveMode(options: CassetteOptions): Exclude<CassetteMode, "auto"> {
  const fromEnvironment = process.env.SAL_CASSETTE_MODE;
  let mode = options.mode ?? "auto";
  if (fromEnvironment !== undefined && fromEnvironment !== "") {
    if (!modes.includes(fromEnvironment as CassetteMode)) {
      throw new CassetteError(
        `SAL_CASSETTE_MODE must be one of ${modes.join(", ")}; got ${showValue(fromEnvironment)}`,
      );
    }
    mode = fromEnvironment as CassetteMode;
  }
  if (mode !== "auto") return mode;
  if (existsSync(options.path)) return "replay";
  if (isCi()) {
    throw new CassetteError(
      `cassette: no recording at ${options.path}, and CI is set, so none is made here: record it locally and commit it`,
    );
  }
  return "record";
}

function isCi(): boolean {
  const value = process.env.CI;
  return value !== undefined && value !== "" && value !== "0" && value.toLowerCase() !== "false";
}
