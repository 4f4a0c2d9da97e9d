import { AgentError, describeValue } from "../../errors.ts";
import { checkBoolean, checkNumber } from "../../numeric-options.ts";
import { recallOutputName } from "../recall-output.ts";
import { searchToolsName } from "../search-tools.ts";
import type { ToolDefinition } from "../tool.ts";
import { maxMemoryMb, minMemoryMb } from "./isolate.ts";

/** The name of the tool code mode adds: the model writes a program as its input `{ code }`. */
export const codeModeName = "run_code";

/**
 * Code mode (`codeMode` of the loop, `runAgent` and `defineAgent`): the model also gets `run_code`,
 * whose input is a program that calls the tools as async functions (`tools.<name>(input)`), in a
 * QuickJS isolate; only the program's result enters the context. `true` takes the defaults.
 */
export type CodeModeOption =
  | boolean
  | {
      /**
       * The tools a program may call (default: every tool a program can call; see `codeModeName`).
       * A deferred one among them is callable, and declared to the model, only from the model call
       * after a `search_tools` result loaded it, as for a direct call.
       */
      tools?: string[];
      /**
       * `true`: those tools are no longer sent to the model directly; a direct call is an unknown
       * tool. A deferred one is still found and loaded by `search_tools`, and then only a program
       * can call it.
       */
      exclusive?: boolean;
      /** The whole program's time, tool calls included, in ms (default 30,000). */
      timeoutMs?: number;
      /** The isolate's memory, in MB (16 to 2,048; default 64). */
      memoryMb?: number;
      /** At most this many tool calls per program (default 1,000); one more ends it with an error. */
      maxCalls?: number;
    };

/** Code mode as a run uses it: the option read and checked, with its defaults. */
export type CodeModeSettings = {
  /** The tools a program may call, in the run's order; a deferred one only once the session loaded it. */
  readonly tools: readonly ToolDefinition[];
  readonly exclusive: boolean;
  readonly timeoutMs: number;
  readonly memoryMb: number;
  readonly maxCalls: number;
};

/**
 * Reads `codeMode` against the run's tools; undefined when it is off. Throws an `AgentError`
 * naming the field for a bad value, an unknown tool, or one no program may call: a handoff,
 * `search_tools`, `recall_output`, a tool whose result is the run's answer (`answer: "verbatim"`), `run_code`.
 */
export function readCodeMode(option: unknown, tools: readonly ToolDefinition[]): CodeModeSettings | undefined {
  if (option === undefined || option === false) return undefined;
  const given: Exclude<CodeModeOption, boolean> = option === true ? {} : checkShape(option);
  checkBoolean("codeMode.exclusive", given.exclusive);
  checkNumber("codeMode.timeoutMs", given.timeoutMs, { min: 0, exclusive: true });
  checkNumber("codeMode.memoryMb", given.memoryMb, { min: minMemoryMb, max: maxMemoryMb });
  checkNumber("codeMode.maxCalls", given.maxCalls, { min: 1, integer: true });
  if (tools.some((definition) => definition.name === codeModeName))
    throw new AgentError(`codeMode: a tool of the run is named "${codeModeName}", the name code mode gives its tool`);
  return {
    tools: programTools(given.tools, tools),
    exclusive: given.exclusive === true,
    timeoutMs: given.timeoutMs ?? 30_000,
    memoryMb: given.memoryMb ?? 64,
    maxCalls: given.maxCalls ?? 1000,
  };
}

/**
 * Marks a tool no program may call (a handoff: its result changes who answers; `why` says so in
 * the error naming it in `codeMode.tools`); returns it. The
 * loop's own `search_tools` and `recall_output`, and verbatim-answer tools, are never callable either.
 */
export function notForPrograms<Definition extends ToolDefinition>(
  definition: Definition,
  why = "a handoff",
): Definition {
  unprogrammable.set(definition, why);
  return definition;
}

const unprogrammable = new WeakMap<ToolDefinition, string>();

/** Why a program may not call this tool, or undefined when it may. */
export function programProblem(definition: ToolDefinition): string | undefined {
  const why = unprogrammable.get(definition);
  if (why !== undefined) return why;
  if (definition.name === searchToolsName || definition.name === recallOutputName) return "a tool of the loop's own";
  if ("answer" in definition && definition.answer === "verbatim") return "its result is the run's answer (verbatim)";
  return undefined;
}

function checkShape(option: unknown): Exclude<CodeModeOption, boolean> {
  if (typeof option !== "object" || option === null || Array.isArray(option))
    throw new AgentError(`codeMode must be true, false or an object; got ${describeValue(option)}`);
  const known = ["tools", "exclusive", "timeoutMs", "memoryMb", "maxCalls"];
  for (const key of Object.keys(option))
    if (!known.includes(key)) throw new AgentError(`codeMode.${key} is not an option (known: ${known.join(", ")})`);
  return option;
}

// The named tools, else every one a program may call (a deferred one once loaded).
function programTools(names: unknown, tools: readonly ToolDefinition[]): ToolDefinition[] {
  if (names === undefined) return tools.filter((definition) => programProblem(definition) === undefined);
  if (!Array.isArray(names) || names.some((name) => typeof name !== "string"))
    throw new AgentError(`codeMode.tools must be an array of tool names; got ${describeValue(names)}`);
  const byName = new Map(tools.map((definition) => [definition.name, definition]));
  const chosen: ToolDefinition[] = [];
  for (const name of names as string[]) {
    const definition = byName.get(name);
    if (definition === undefined)
      throw new AgentError(
        `codeMode.tools: no tool "${name}" in this run (tools: ${[...byName.keys()].join(", ") || "none"})`,
      );
    const problem = programProblem(definition);
    if (problem !== undefined)
      throw new AgentError(`codeMode.tools: "${name}" cannot be called from a program: ${problem}`);
    if (!chosen.includes(definition)) chosen.push(definition);
  }
  return tools.filter((definition) => chosen.includes(definition));
}
