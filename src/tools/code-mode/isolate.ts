import type { QuickJSContext, QuickJSHandle, QuickJSSyncVariant, QuickJSWASMModule } from "quickjs-emscripten-core";
import { AgentError, boundText, describeError, maxErrorLength } from "../../errors.ts";
import type { JsonObject, JsonValue } from "../../session.ts";
import { ProgramStop } from "./program-stop.ts";

/**
 * What a program's tool call gives back to it: its output (an error result rejects the call's
 * promise with an `Error` carrying that output); `hold`: the call waits (for approval), and the
 * program stops once the calls already started have settled; `stop`: the program ends with `error`.
 */
export type HostSettlement =
  { type: "settled"; output: JsonValue; isError: boolean } | { type: "hold" } | { type: "stop"; error: string };

/** One run of a program in a fresh isolate (see `runIsolated`). */
export type IsolatedProgram = {
  /** JavaScript (types already stripped): the body of an async function. */
  readonly code: string;
  /** The names of `tools.<name>`. */
  readonly toolNames: readonly string[];
  /** Starts the program's tool call; never rejects. Called in the order the program starts them. */
  readonly call: (name: string, input: JsonObject) => Promise<HostSettlement>;
  /** Milliseconds since the epoch that `Date.now()` and `new Date()` give. */
  readonly now: number;
  /** Seeds `Math.random`. */
  readonly seed: string;
  readonly timeoutMs: number;
  readonly memoryMb: number;
  readonly maxCalls: number;
  /** Aborts the program (the run's signal). */
  readonly signal: AbortSignal;
  /** Aborted (with a `ProgramStop`) when the program ends early (time, `maxCalls`): the calls it started should stop. */
  readonly stopCalls: AbortController;
};

/** How a program ended. `logs`: its `console.*` lines, the last ones when there were too many. */
export type IsolatedEnd = { logs: string[] } & (
  { type: "returned"; output: JsonValue } | { type: "failed"; error: string } | { type: "held" } | { type: "aborted" }
);

/** The QuickJS build every program instantiates: loaded and compiled once per process, on first use. */
type Engine = {
  readonly newQuickJSWASMModuleFromVariant: (variant: QuickJSSyncVariant) => Promise<QuickJSWASMModule>;
  readonly newVariant: (variant: QuickJSSyncVariant, options: object) => QuickJSSyncVariant;
  readonly variant: QuickJSSyncVariant;
  readonly wasmModule: WasmModule;
  /** TypeScript to JavaScript: type annotations removed, lines kept where they were. */
  readonly stripTypes: (code: string) => string;
};

let engine: Promise<Engine> | undefined;

/**
 * Loads the optional peers code mode runs on (`quickjs-emscripten-core` with the
 * `@jitl/quickjs-wasmfile-release-sync` build) and compiles the WebAssembly once; throws an
 * `AgentError` saying what to install when they are missing.
 */
export function loadIsolate(): Promise<Engine> {
  engine ??= loadEngine().catch((error: unknown) => {
    engine = undefined;
    throw error;
  });
  return engine;
}

async function loadEngine(): Promise<Engine> {
  try {
    const [core, variantModule, sucrase, fs, nodeModule] = await Promise.all([
      import("quickjs-emscripten-core"),
      import("@jitl/quickjs-wasmfile-release-sync"),
      import("sucrase"),
      import("node:fs/promises"),
      import("node:module"),
    ]);
    // Its types are read as CommonJS (`default` the namespace); the ESM build Node loads exports the variant as `default`.
    const variant = variantModule.default as unknown as QuickJSSyncVariant;
    const bytes = await fs.readFile(
      nodeModule.createRequire(import.meta.url).resolve("@jitl/quickjs-wasmfile-release-sync/wasm"),
    );
    return {
      newQuickJSWASMModuleFromVariant: core.newQuickJSWASMModuleFromVariant,
      newVariant: core.newVariant,
      variant,
      wasmModule: await webAssembly.compile(bytes),
      stripTypes: (code) => sucrase.transform(code, { transforms: ["typescript"], disableESTransforms: true }).code,
    };
  } catch (error) {
    if ((error as { code?: unknown }).code !== "ERR_MODULE_NOT_FOUND") throw error;
    throw new AgentError(
      "codeMode needs QuickJS: npm install quickjs-emscripten-core @jitl/quickjs-wasmfile-release-sync sucrase",
      { cause: error },
    );
  }
}

/** The part of the WebAssembly API used here (the project's types are Node's, which leave it out). */
type WebAssemblyApi = {
  compile: (bytes: Uint8Array) => Promise<WasmModule>;
  Memory: new (descriptor: { initial: number; maximum: number }) => WasmMemory;
};
type WasmModule = { readonly compiledWasm: unique symbol };
type WasmMemory = { readonly buffer: ArrayBuffer };
const webAssembly = (globalThis as unknown as { WebAssembly: WebAssemblyApi }).WebAssembly;

const pageBytes = 65536;
/** The build declares 16 MB initial memory and at most 2 GB. */
export const minMemoryMb = 16;
export const maxMemoryMb = 2048;
const maxLogChars = 100_000;

/**
 * Runs a program in a fresh QuickJS instance whose WebAssembly memory cannot grow past
 * `memoryMb` (QuickJS's own memory limit does not count every allocation of this build: an array
 * pushed in a loop went past it by 50 times), stopped by the interrupt handler at the time limit.
 * It has no timers, no host objects and no I/O; `tools.<name>(input)` calls out through `call`,
 * and inputs and results cross as JSON text. Never throws for what the program does.
 */
export async function runIsolated(program: IsolatedProgram): Promise<IsolatedEnd> {
  const loaded = await loadIsolate();
  // The program is the body of an async function, opened on its first line so its line numbers are its own.
  let source: string;
  try {
    source = loaded.stripTypes(`(async () => {${program.code}\n})`);
  } catch (error) {
    return { type: "failed", error: `SyntaxError: ${describeError(error)}`, logs: [] };
  }
  const memory = new webAssembly.Memory({
    initial: minMemoryMb * (1048576 / pageBytes),
    maximum: Math.floor((program.memoryMb * 1048576) / pageBytes),
  });
  const module = await loaded.newQuickJSWASMModuleFromVariant(
    loaded.newVariant(loaded.variant, { wasmModule: loaded.wasmModule, wasmMemory: memory }),
  );
  const runtime = module.newRuntime();
  const context = runtime.newContext();
  const state = newState({ ...program, code: source }, context);
  runtime.setInterruptHandler(() => state.stopReason !== undefined || performance.now() > state.deadline);
  runtime.setMaxStackSize(256 * 1024);
  return await runProgram(state);
}

/** What one run keeps while its program goes: its calls in flight, its logs, why it stops. */
type ProgramState = {
  readonly program: IsolatedProgram;
  readonly context: QuickJSContext;
  readonly deadline: number;
  readonly logs: string[];
  logChars: number;
  inFlight: number;
  calls: number;
  held: boolean;
  stopReason: string | undefined;
  wake: (() => void) | undefined;
  readonly settled: { ticket: number; settlement: HostSettlement & { type: "settled" } }[];
  settle: QuickJSHandle | undefined;
};

function newState(program: IsolatedProgram, context: QuickJSContext): ProgramState {
  return {
    program,
    context,
    deadline: performance.now() + program.timeoutMs,
    logs: [],
    logChars: 0,
    inFlight: 0,
    calls: 0,
    held: false,
    stopReason: undefined,
    wake: undefined,
    settled: [],
    settle: undefined,
  };
}

// Runs jobs, then waits for a call to settle (or the time limit, or the abort), until the program ends.
async function runProgram(state: ProgramState): Promise<IsolatedEnd> {
  const { program } = state;
  const poke = (): void => state.wake?.();
  program.signal.addEventListener("abort", poke, { once: true });
  const timer = setTimeout(poke, Math.min(program.timeoutMs, 2 ** 31 - 1) + 5);
  try {
    const started = start(state);
    if ("error" in started) return { type: "failed", error: started.error, logs: state.logs };
    for (;;) {
      const outcome = step(state, started.promise);
      if (outcome !== undefined) return await finish(state, outcome);
      await new Promise<void>((resolve) => {
        state.wake = resolve;
        if (state.settled.length > 0 || shouldStop(state)) resolve();
      });
      state.wake = undefined;
      deliver(state);
    }
  } catch (error) {
    return await finish(state, { type: "failed", error: `the program's isolate failed: ${describeError(error)}` });
  } finally {
    clearTimeout(timer);
    program.signal.removeEventListener("abort", poke);
  }
}

// Runs the jobs the last settlements queued, then says whether the program ended.
function step(state: ProgramState, promise: QuickJSHandle): IsolatedEndWithoutLogs | undefined {
  const { context, program } = state;
  if (program.signal.aborted) return { type: "aborted" };
  if (state.stopReason !== undefined) return { type: "failed", error: state.stopReason };
  if (performance.now() > state.deadline) return timeUp(program);
  if (state.held) return state.inFlight === 0 ? { type: "held" } : undefined;
  const jobs = context.runtime.executePendingJobs();
  if (jobs.error !== undefined) {
    const error = jobs.error.consume((handle) => describeThrown(context, handle));
    return failure(state, error);
  }
  jobs.dispose();
  if (state.stopReason !== undefined) return { type: "failed", error: state.stopReason };
  if (state.held) return state.inFlight === 0 ? { type: "held" } : undefined;
  const promiseState = context.getPromiseState(promise);
  if (promiseState.type === "fulfilled") {
    const text = promiseState.value.consume((handle) => context.getString(handle));
    return { type: "returned", output: JSON.parse(text) as JsonValue };
  }
  if (promiseState.type === "rejected")
    return failure(
      state,
      promiseState.error.consume((handle) => describeThrown(context, handle)),
    );
  if (state.inFlight === 0 && state.settled.length === 0)
    return {
      type: "failed",
      error:
        "time limit: the program awaits a promise that can never settle (no tool call is running; there are no timers)",
    };
  return undefined;
}

// An interrupt surfaces as the program's error: past the deadline it is the time limit.
function failure(state: ProgramState, error: string): IsolatedEndWithoutLogs {
  if (state.stopReason !== undefined) return { type: "failed", error: state.stopReason };
  return performance.now() > state.deadline ? timeUp(state.program) : { type: "failed", error };
}

function timeUp(program: IsolatedProgram): IsolatedEndWithoutLogs {
  return { type: "failed", error: `time limit: the program ran longer than ${program.timeoutMs} ms` };
}

function shouldStop(state: ProgramState): boolean {
  return (
    state.program.signal.aborted ||
    state.stopReason !== undefined ||
    performance.now() > state.deadline ||
    (state.held && state.inFlight === 0)
  );
}

// An end before every started call settled stops them, and waits for them: each is recorded.
async function finish(state: ProgramState, outcome: IsolatedEndWithoutLogs): Promise<IsolatedEnd> {
  if (state.inFlight > 0) {
    state.program.stopCalls.abort(new ProgramStop("the program ended before this call did"));
    while (state.inFlight > 0)
      await new Promise<void>((resolve) => {
        state.wake = resolve;
      });
  }
  return { ...outcome, logs: state.logs };
}

// Evaluates the prelude (the globals), then the program: an async function the prelude runs.
function start(state: ProgramState): { promise: QuickJSHandle } | { error: string } {
  const { context, program } = state;
  const hostCall = context.newFunction("call", (name, input) => startCall(state, name, input));
  const hostLog = context.newFunction("log", (level, text) => {
    log(state, context.getString(level), context.getString(text));
  });
  const prelude = context.unwrapResult(context.evalCode(preludeSource, "prelude.js"));
  const args = [
    hostCall,
    hostLog,
    context.newNumber(program.now),
    context.newNumber(seedOf(program.seed)),
    context.newString(JSON.stringify(program.toolNames)),
  ];
  const installed = context.callFunction(prelude, context.undefined, ...args);
  for (const handle of [...args, prelude]) handle.dispose();
  const functions = context.unwrapResult(installed);
  state.settle = context.getProp(functions, "settle");
  const run = context.getProp(functions, "run");
  functions.dispose();
  const evaluated = context.evalCode(program.code, "program.js");
  if (evaluated.error !== undefined)
    return { error: evaluated.error.consume((handle) => describeThrown(context, handle)) };
  const promise = context.callFunction(run, context.undefined, evaluated.value);
  evaluated.value.dispose();
  run.dispose();
  if (promise.error !== undefined) return { error: promise.error.consume((handle) => describeThrown(context, handle)) };
  return { promise: promise.value };
}

// `tools.<name>(input)` in the program: the input arrives as JSON text, checked by the prelude.
function startCall(state: ProgramState, nameHandle: QuickJSHandle, inputHandle: QuickJSHandle): QuickJSHandle {
  const { context, program } = state;
  if (state.held || state.stopReason !== undefined) return context.newNumber(-1);
  state.calls++;
  if (state.calls > program.maxCalls) {
    state.stopReason = `the program started more than ${program.maxCalls} tool calls (maxCalls)`;
    return context.newNumber(-1);
  }
  const ticket = state.calls;
  const name = context.getString(nameHandle);
  const input = JSON.parse(context.getString(inputHandle)) as JsonObject;
  state.inFlight++;
  const settled = (settlement: HostSettlement): void => {
    state.inFlight--;
    if (settlement.type === "hold") state.held = true;
    else if (settlement.type === "stop") state.stopReason ??= settlement.error;
    else state.settled.push({ ticket, settlement });
    state.wake?.();
  };
  program
    .call(name, input)
    .then(settled, (error: unknown) =>
      settled({ type: "settled", output: `Error: ${describeError(error)}`, isError: true }),
    );
  return context.newNumber(ticket);
}

// Hands settled results to the program in the order they settled (never once it is held or stopping).
function deliver(state: ProgramState): void {
  const { context } = state;
  const settled = state.settled.splice(0);
  if (state.held || state.stopReason !== undefined || state.program.signal.aborted) return;
  for (const { ticket, settlement } of settled) {
    const ticketHandle = context.newNumber(ticket);
    const outputHandle = context.newString(JSON.stringify(settlement.output));
    const result = context.callFunction(
      state.settle!,
      context.undefined,
      ticketHandle,
      settlement.isError ? context.true : context.false,
      outputHandle,
    );
    ticketHandle.dispose();
    outputHandle.dispose();
    result.dispose();
  }
}

// The last lines, at most `maxLogChars` in all.
function log(state: ProgramState, level: string, text: string): void {
  const line = level === "log" ? text : `[${level}] ${text}`;
  state.logs.push(line);
  state.logChars += line.length;
  while (state.logChars > maxLogChars && state.logs.length > 1) state.logChars -= state.logs.shift()!.length;
}

type IsolatedEndWithoutLogs =
  { type: "returned"; output: JsonValue } | { type: "failed"; error: string } | { type: "held" } | { type: "aborted" };

// An error the program threw, as `Name: message (line n)`; any other thrown value as JSON.
function describeThrown(context: QuickJSContext, handle: QuickJSHandle): string {
  const described = context.dump(handle) as unknown;
  if (typeof described === "object" && described !== null && "message" in described) {
    const { name, message, stack } = described as { name?: unknown; message?: unknown; stack?: unknown };
    const line = typeof stack === "string" ? /program\.js:(\d+)/.exec(stack)?.[1] : undefined;
    const text = `${typeof name === "string" ? name : "Error"}: ${String(message)}`;
    return line === undefined ? text : `${text} (line ${line})`;
  }
  return `Uncaught ${boundText(JSON.stringify(described) ?? String(described), maxErrorLength)}`;
}

// 32 bits of a string's FNV-1a hash: the same id gives the same random sequence.
function seedOf(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/**
 * Runs first in every isolate: installs `tools`, `console`, the fixed clock and the seeded
 * `Math.random`, and returns `run` (the program's promise, resolved with its output as JSON text)
 * and `settle` (gives a call its result). What it uses is captured before the program runs, so a
 * program that replaces `JSON` or `Promise` changes only its own view.
 */
const preludeSource = String.raw`(function (hostCall, hostLog, now, seed, namesJson) {
  "use strict";
  const parse = JSON.parse, stringify = JSON.stringify, PromiseCtor = Promise, ErrorCtor = Error;
  const freeze = Object.freeze, defineProperty = Object.defineProperty, isArray = Array.isArray;
  const waiting = new Map();
  const strictJson = (value, what) => stringify(value === undefined ? null : value, function (key, item) {
    const kind = typeof item;
    if (kind === "function") throw new TypeError(what + " cannot hold a function" + (key === "" ? "" : " (at " + stringify(key) + ")"));
    if (kind === "bigint") throw new TypeError(what + " cannot hold a BigInt" + (key === "" ? "" : " (at " + stringify(key) + ")"));
    if (kind === "symbol") throw new TypeError(what + " cannot hold a symbol" + (key === "" ? "" : " (at " + stringify(key) + ")"));
    return item;
  });
  const tools = {};
  for (const name of parse(namesJson)) {
    const call = function (input) {
      if (input === undefined) input = {};
      if (typeof input !== "object" || input === null || isArray(input))
        return PromiseCtor.reject(new TypeError("tools." + name + " takes one object as its input"));
      let json;
      try { json = strictJson(input, "the input of tools." + name); } catch (error) { return PromiseCtor.reject(error); }
      const ticket = hostCall(name, json);
      return new PromiseCtor((resolve, reject) => { if (ticket > 0) waiting.set(ticket, { resolve, reject }); });
    };
    defineProperty(tools, name, { value: call, enumerable: true });
  }
  freeze(tools);
  const text = (value) => {
    if (typeof value === "string") return value;
    if (value instanceof ErrorCtor) return String(value.name) + ": " + String(value.message);
    try { const json = stringify(value); return json === undefined ? String(value) : json; } catch { return String(value); }
  };
  const console = {};
  for (const level of ["log", "info", "warn", "error", "debug"])
    console[level] = (...values) => { hostLog(level, values.map(text).join(" ")); };
  freeze(console);
  defineProperty(globalThis, "tools", { value: tools, enumerable: false });
  defineProperty(globalThis, "console", { value: console, enumerable: false, writable: true, configurable: true });
  const RealDate = Date;
  const FixedDate = function Date(...args) {
    if (new.target === undefined) return new RealDate(now).toString();
    return args.length === 0 ? new RealDate(now) : new RealDate(...args);
  };
  FixedDate.prototype = RealDate.prototype;
  FixedDate.now = () => now;
  FixedDate.parse = RealDate.parse;
  FixedDate.UTC = RealDate.UTC;
  defineProperty(RealDate.prototype, "constructor", { value: FixedDate, writable: true, configurable: true });
  globalThis.Date = FixedDate;
  let state = seed >>> 0;
  Math.random = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = Math.imul(state ^ (state >>> 15), 1 | state);
    mixed = (mixed + Math.imul(mixed ^ (mixed >>> 7), 61 | mixed)) ^ mixed;
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296;
  };
  const settle = (ticket, isError, outputJson) => {
    const entry = waiting.get(ticket);
    if (entry === undefined) return;
    waiting.delete(ticket);
    const output = parse(outputJson);
    if (!isError) return entry.resolve(output);
    const error = new ErrorCtor(typeof output === "string" ? output : stringify(output));
    error.output = output;
    entry.reject(error);
  };
  const run = (body) => PromiseCtor.resolve().then(body).then((value) => strictJson(value, "the program's result"));
  return { run, settle };
})`;
