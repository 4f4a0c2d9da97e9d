import { boundText } from "../../errors.ts";
import { createAbortRace } from "../../shared/abort.ts";
import {
  type JsonObject,
  type ProgramCall,
  type Session,
  type ToolCallMessage,
  type ToolResultMessage,
} from "../../session.ts";
import { ApprovalPause } from "../approval-pause.ts";
import type { CallScope } from "../executor-setup.ts";
import type { Tool, ToolContext, ToolDefinition } from "../tool.ts";
import type { ToolOutcome } from "../tool-outcome.ts";
import type { CodeModeSettings } from "./code-mode-option.ts";
import { codeModeName } from "./code-mode-option.ts";
import { codeModeDeclarations } from "./declarations.ts";
import { runIsolated, type HostSettlement, type IsolatedEnd } from "./isolate.ts";
import { sameJson } from "../same-json.ts";
import { programRecord, type ProgramRecord, type RecordedCall } from "./program-record.ts";

/** Runs one of a program's calls the way a direct call runs (the executor's gate, handler and hooks); never rejects. */
export type ProgramCallStarter = (
  call: ToolCallMessage,
  scope: CallScope,
  turn: readonly ToolCallMessage[],
  caller: string,
) => Promise<ToolOutcome>;

/**
 * The deferred tools a `search_tools` result loaded before the call `id` entered `session` (the
 * whole session when it is not there), in load order: a program may call those among its tools.
 */
export type LoadedBefore = (session: Session, id: string) => readonly string[];

/** Code mode in a run: the `run_code` tool, the tools it changes, and what its results carry beside their output. */
export type CodeMode = {
  readonly settings: CodeModeSettings;
  /** `run_code`, described with the tools a program can call before any deferred tool is loaded. */
  readonly tool: Tool<{ code: string }>;
  /**
   * `run_code`'s description once these deferred tools are loaded: it declares the tools a program
   * can call then. Absent when no tool of the program's is deferred (the description never changes).
   */
  readonly describe: ((loaded: readonly string[]) => string) | undefined;
  /** The exclusive tools' names (executed for programs, never offered); absent when not exclusive. */
  readonly programOnly: ReadonlySet<string> | undefined;
  /** A code call's result with its `programCalls` and `logs`; any other result as it is. */
  readonly withRecord: (result: ToolResultMessage) => ToolResultMessage;
};

/**
 * The `run_code` tool of a run. Each call runs its program in a fresh isolate; the program's
 * tool calls go through `start` with ids `<code call id>.<n>`, so each is checked, approved, timed,
 * reported and counted as a direct call is. A call that needs approval pauses the code call (its
 * record travels as `approval.nested`); the next run reruns the program from the start and answers
 * the calls already made from that record, so none runs twice. A program reaches the deferred
 * tools among its tools that `loadedBefore` says were loaded before its code call, the ones the
 * model was shown in `run_code`'s description (a rerun sees the same).
 */
export function createCodeMode(
  settings: CodeModeSettings,
  start: ProgramCallStarter,
  loadedBefore: LoadedBefore,
): CodeMode {
  const records = new Map<string, { programCalls: ProgramCall[]; logs: string[] }>();
  const always = settings.tools.filter((definition) => definition.deferred !== true);
  const followsLoaded = always.length < settings.tools.length;
  const alwaysNames = always.map((definition) => definition.name);
  // The names a program of the code call in `context` may call: the same on a rerun, read from the session.
  const namesFor = (context: ToolContext): readonly string[] => {
    if (!followsLoaded) return alwaysNames;
    const loaded = loadedBefore(context.session, context.id);
    return callableOf(settings.tools, loaded).map((definition) => definition.name);
  };
  const tool: Tool<{ code: string }> = {
    name: codeModeName,
    description: runCodeDescription(settings, always),
    input_schema: {
      type: "object",
      properties: {
        code: {
          type: "string",
          description: "The program: the body of an async function (JavaScript or TypeScript) that returns the result.",
        },
      },
      required: ["code"],
      additionalProperties: false,
    },
    // The program's calls have their own timeouts; the program has `timeoutMs`.
    timeout: Number.POSITIVE_INFINITY,
    // Its calls may have side effects: start them only once the model's response is complete.
    eager: false,
    handler: async (input, context) => {
      const run = await runProgram(settings, start, { code: input.code, names: namesFor(context) }, context);
      if (run.end.type !== "held") records.set(context.id, { programCalls: run.programCalls, logs: run.end.logs });
      return outcomeOf(run, context);
    },
  };
  return {
    settings,
    tool,
    describe: followsLoaded ? (loaded) => runCodeDescription(settings, callableOf(settings.tools, loaded)) : undefined,
    programOnly: settings.exclusive ? new Set(settings.tools.map((definition) => definition.name)) : undefined,
    withRecord: (result) => {
      const record = records.get(result.id);
      if (record === undefined) return result;
      records.delete(result.id);
      const withCalls: ToolResultMessage = { ...result, programCalls: record.programCalls };
      if (record.logs.length > 0) withCalls.logs = record.logs;
      return withCalls;
    },
  };
}

// The program's tools it can call with these deferred tools loaded, in the run's order.
function callableOf(tools: readonly ToolDefinition[], loaded: readonly string[]): ToolDefinition[] {
  return tools.filter((definition) => definition.deferred !== true || loaded.includes(definition.name));
}

/** The description of `run_code`: how to write a program, its limits, and the declarations of the tools it can call. */
function runCodeDescription(settings: CodeModeSettings, callable: readonly ToolDefinition[]): string {
  return [
    "Runs a program that calls the tools below as async functions and gives back only what it returns.",
    "Use it for work that takes many tool calls (lookups, loops, filters, joins): do the work in the program and return just the answer, not the raw tool outputs.",
    "The program is the body of an async function in JavaScript or TypeScript: use `await`, and `return` a JSON value. A failed tool call rejects with an Error whose `output` is the tool's error; catch it to go on.",
    "There is no network, file system, import, timer or `process`; `Date` is fixed at the program's start. `console.log` output is shown only when the program fails.",
    `Limits: ${settings.timeoutMs} ms, ${settings.memoryMb} MB, ${settings.maxCalls} tool calls.`,
    "",
    "```ts",
    codeModeDeclarations(callable),
    "```",
  ].join("\n");
}

/** One run of a program: how it ended, and its calls in start order. */
type ProgramRun = { end: IsolatedEnd; programCalls: ProgramCall[]; calls: ProgramCallState[]; startedAt: number };

/** A call of this run: its message (with its approval while it waits) and its result once it has one. */
type ProgramCallState = { call: ToolCallMessage; result?: ToolResultMessage; pending?: Session | true };

async function runProgram(
  settings: CodeModeSettings,
  start: ProgramCallStarter,
  { code, names }: { code: string; names: readonly string[] },
  context: ToolContext,
): Promise<ProgramRun> {
  const record: ProgramRecord | undefined = context.resume === undefined ? undefined : programRecord(context.resume);
  const startedAt = record?.startedAt ?? madeAt(context) ?? Date.now();
  const stopCalls = new AbortController();
  const signal = AbortSignal.any([context.signal, stopCalls.signal]);
  const scope: CallScope = { signal, abortRace: createAbortRace(signal) };
  const calls: ProgramCallState[] = [];
  try {
    const end = await runIsolated({
      code,
      toolNames: names,
      now: startedAt,
      seed: context.id,
      timeoutMs: settings.timeoutMs,
      memoryMb: settings.memoryMb,
      maxCalls: settings.maxCalls,
      signal: context.signal,
      stopCalls,
      call: (name, input) => startCall({ calls, record, start, scope, caller: context.id }, name, input),
    });
    return { end, programCalls: calls.flatMap(programCallOf), calls, startedAt };
  } finally {
    scope.abortRace.dispose();
  }
}

type CallRun = {
  readonly calls: ProgramCallState[];
  readonly record: ProgramRecord | undefined;
  readonly start: ProgramCallStarter;
  readonly scope: CallScope;
  readonly caller: string;
};

// The n-th call of this run is the record's n-th, if it has one: answered from it when it has a
// result, run through the gate with its decision when it waited; any other call is new.
async function startCall(run: CallRun, name: string, input: JsonObject): Promise<HostSettlement> {
  const { calls, record, caller } = run;
  const index = calls.length;
  const recorded: RecordedCall | undefined = record?.calls[index];
  if (recorded !== undefined && (recorded.call.name !== name || !sameJson(recorded.call.input, input)))
    return {
      type: "stop",
      error: `diverged at call ${index + 1}: the program called ${describeCall(name, input)} where it called ${describeCall(recorded.call.name, recorded.call.input)} before (a program must make the same calls when it runs again after an approval)`,
    };
  if (recorded?.result !== undefined) {
    calls.push({ call: recorded.call, result: recorded.result });
    return settledBy(recorded.result);
  }
  const call: ToolCallMessage = recorded?.call ?? { type: "tool_call", id: `${caller}.${index + 1}`, name, input };
  const state: ProgramCallState = { call };
  calls.push(state);
  const outcome = await run.start(
    call,
    run.scope,
    calls.map((entry) => entry.call),
    caller,
  );
  if (outcome.type === "approval-pending") {
    state.pending = outcome.nested ?? true;
    return { type: "hold" };
  }
  state.result = outcome;
  return settledBy(outcome);
}

function settledBy(result: ToolResultMessage): HostSettlement {
  return { type: "settled", output: result.output, isError: result.isError === true };
}

// What the code call answers: the program's output, its error, or a pause for its waiting calls.
function outcomeOf(run: ProgramRun, context: ToolContext): unknown {
  const { end } = run;
  switch (end.type) {
    case "returned":
      return end.output;
    case "held":
      throw new ApprovalPause(pausedRecord(run, context));
    case "aborted":
      throw context.signal.reason ?? abortError();
    case "failed":
      throw new Error(`${boundText(end.error, 1500)}${logsTail(end.logs)}`);
  }
}

function abortError(): Error {
  const error = new Error("the program was aborted");
  error.name = "AbortError";
  return error;
}

// The model sees a program's console output only when it failed: its last 2,000 characters.
function logsTail(logs: readonly string[]): string {
  if (logs.length === 0) return "";
  const text = logs.join("\n");
  const tail = text.length > 2000 ? `…${text.slice(-2000)}` : text;
  return `\n\nconsole output${text.length > 2000 ? " (last 2,000 characters)" : ""}:\n${tail}`;
}

/**
 * The record a paused code call keeps as `approval.nested`: the program as a user message (its
 * `ts` the first start's time, which the rerun's clock gives), then one turn of its calls in start
 * order (each waiting call `approval: { status: "pending" }`, a paused subagent's with its own
 * `nested`), then the results of those that finished.
 */
function pausedRecord(run: ProgramRun, context: ToolContext): Session {
  const code = codeOf(context);
  const calls = run.calls.map(({ call, pending }) => {
    if (pending === undefined) return stripApproval(call);
    return {
      ...call,
      approval: pending === true ? { status: "pending" as const } : { status: "pending" as const, nested: pending },
    };
  });
  const results = run.calls.flatMap(({ result }) => (result === undefined ? [] : [result]));
  return {
    messages: [{ role: "user", content: code, ts: new Date(run.startedAt).toISOString() }, ...calls, ...results],
  };
}

// When the code call entered the session (its `ts`): the same on a durable run's replay, where the
// clock of the process is not.
function madeAt(context: ToolContext): number | undefined {
  const ts = context.turn.find((entry) => entry.id === context.id)?.ts;
  const ms = ts === undefined ? Number.NaN : Date.parse(ts);
  return Number.isNaN(ms) ? undefined : ms;
}

function codeOf(context: ToolContext): string {
  const call = context.turn.find((entry) => entry.id === context.id);
  const code = call?.input.code;
  return typeof code === "string" ? code : "";
}

function stripApproval(call: ToolCallMessage): ToolCallMessage {
  if (call.approval === undefined) return call;
  const { approval: _approval, ...rest } = call;
  return rest;
}

function programCallOf({ call, result }: ProgramCallState): ProgramCall[] {
  if (result === undefined) return [];
  const entry: ProgramCall = { id: call.id, name: call.name, input: call.input, output: result.output };
  if (result.isError === true) entry.isError = true;
  if (result.content !== undefined) entry.content = result.content;
  return [entry];
}

function describeCall(name: string, input: JsonObject): string {
  return `tools.${name}(${boundText(JSON.stringify(input), 200)})`;
}
