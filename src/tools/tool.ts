import { checkNumber } from "../numeric-options.ts";
import type { ApprovalPolicy } from "./approval-policy.ts";
import type { ModelPrice } from "../model/cost.ts";
import type { BudgetLedger } from "../model/budget.ts";
import type { JsonObject, JsonValue, Session, ToolCallMessage, Usage } from "../session.ts";
import type { ElicitationAnswer, ElicitationRequest } from "./elicitation.ts";
import { schemaKind } from "./schema-kind.ts";
import { validateStandard, type StandardSchemaV1 } from "./standard-schema.ts";
import type { ValidationResult } from "./validate-input.ts";
import type { BackgroundOption, ToolSchema } from "../shared/tool-schema.ts";
import { askedInputSchema, backgroundOf, checkBackground } from "./background.ts";

export type { ValidationResult } from "./validate-input.ts";
export type { ToolSchema } from "../shared/tool-schema.ts";

/** What a handler receives besides its input. */
export type ToolContext = {
  /** Aborted when the run is aborted or the tool's timeout passes; a handler doing I/O should pass it on. */
  signal: AbortSignal;
  /** The id of the tool call being answered. */
  id: string;
  /** The tool's name. */
  name: string;
  /**
   * The session the call belongs to (read it; do not modify it). What it holds depends on when the
   * call starts: a call started while the model still streams its turn (an eager tool, the default
   * for streamed answers) sees the session as it was before that turn, without the turn's text,
   * thinking or calls, its own included; a call started once the turn is complete (a model that
   * answers with an array or a promise, a tool with `eager: false`, `eagerTools: false`, a resumed
   * call) sees the turn's messages too, every call of the turn included. Use `id`, `name` and the
   * input for the call itself, never its position in `session`; `turn` for the turn's calls.
   */
  session: Session;
  /**
   * The tool calls of the model turn this call belongs to, in call order, up to and including
   * this one (the last): the same whenever the call starts (while the model streams or after the
   * turn is complete), so a handler can see what the model asked for beside it.
   */
  turn: readonly ToolCallMessage[];
  /** The agent's `name` option, if any. */
  agentName?: string;
  /** Reports progress (any JSON value) as a `tool-execution-update` event; it does not enter the session. */
  update: (progress: JsonValue) => void;
  /** The session this handler paused with (by throwing `ApprovalPause`), when the call resumes. */
  resume?: Session;
  /**
   * Counts model calls made for this call (a subagent's) against the run's `budget` (tokens, and
   * with the run's `prices` USD) at once, and records them on the call's result
   * (`ToolResultMessage.subagentUsage`) for the metrics. `calls` defaults to 1. Absent outside a run.
   */
  spend?: (spent: { usage: Usage; model?: string; calls?: number }) => void;
  /** What is left of the run's `budget` now (`usd` with prices), the limits above it included; absent when there are none. */
  budgetLeft?: () => { usd?: number; tokens?: number };
  /**
   * This call's ledger, within the run's (see `BudgetLedger`): a run started for the call (a
   * subagent) passes it as its `parentBudget`, so each of its model calls counts against the
   * run's budget (and every one above it) as it ends, is recorded on this call's result, and none
   * starts once any of them is used up. Absent outside a run.
   */
  budget?: BudgetLedger;
  /** The run's `prices`, for a subagent to price its own calls with; absent without. */
  prices?: Readonly<Record<string, ModelPrice>>;
  /**
   * Set when the call runs as a background task: its id (unique across sessions, the same on a
   * rerun after a restart) and which start this is (1, then 2 after a restart). The id is the
   * idempotency key for work outside the process: a handler that finds it there reattaches.
   */
  task?: { id: string; attempt: number };
  /** The run's `approvalPolicy`, for a subagent's run to inherit unless it has its own; absent without. */
  approvalPolicy?: ApprovalPolicy;
  /**
   * Asks the run's user a question for `server` (an `elicitation-request` event, answered with
   * `answerElicitation` on the `agentStream` handle); resolves `cancel` once `signal` aborts.
   * Absent when no one can answer (a run nobody listens to).
   */
  elicit?: (server: string, request: ElicitationRequest, signal: AbortSignal) => Promise<ElicitationAnswer>;
};

/**
 * Runs one tool call. Returns a string or any JSON value (`undefined` becomes `""`); may be async.
 * A throw becomes an error result `"Error: <message>"` sent back to the model, never a crash.
 */
export type ToolHandler<Input = any> = (input: Input, context: ToolContext) => unknown;

/** A tool schema bundled with its handler, as made by `tool()`; can be passed wherever a `ToolSchema` is. */
export type Tool<Input = any> = ToolSchema & {
  handler: ToolHandler<Input>;
  /** Checks and converts the model's input before the handler sees it; set by `tool()` for a Standard Schema. */
  validate?: (input: unknown) => ValidationResult | Promise<ValidationResult>;
  /**
   * Milliseconds before the call is abandoned with an error result; overrides the loop's
   * `toolTimeout`. `Infinity`: no timer, whatever `toolTimeout` says.
   */
  timeout?: number;
  /**
   * `false`: never start this tool before the model's response is complete. Set it for tools with
   * side effects: an eager call whose response is then cut off or fails has already run.
   */
  eager?: boolean;
  /**
   * `"verbatim"`: this tool's result is the run's answer. Once every call of its response is
   * answered, the run ends with an assistant message holding the result's text (`answerFrom`: the
   * call's id), without another model call that would paraphrase it. An error result does not
   * end the run; of two such calls in one response, the first in call order gives the answer.
   */
  answer?: "verbatim";
  /**
   * A JSON Schema of the tool's result (an MCP tool's `outputSchema`): code mode types the
   * tool's function by it instead of `unknown`. Never sent to the model as a field of the tool.
   */
  outputSchema?: JsonObject;
};

/** Anything accepted in a tool list: a bare schema (handler in `toolHandlers`) or a `Tool`. */
export type ToolDefinition = ToolSchema | Tool;

export type ToolHandlers = Record<string, ToolHandler>;

type InputOf<Schema> = Schema extends StandardSchemaV1 ? StandardSchemaV1.InferOutput<Schema> : Record<string, any>;

type ToolHandlerFor<Schema> = (input: InputOf<Schema>, context: ToolContext) => unknown;

/**
 * Options of `tool()`. The canonical names are `inputSchema` and `handler`; `input_schema` and
 * `execute` are accepted as aliases (see `InputSchemaOption`, `HandlerOption`), never both of a pair.
 */
export type ToolOptions<Schema extends StandardSchemaV1 | JsonObject> = {
  name: string;
  description: string;
  /** The JSON Schema shown to the model, for a Standard Schema that cannot describe itself (no `~standard.jsonSchema`). */
  jsonSchema?: JsonObject;
  /** Milliseconds before a call is abandoned with an error result (> 0; `Infinity`: no timer). */
  timeout?: number;
  /** `false`: do not start before the model's response is complete (see `Tool.eager`). */
  eager?: boolean;
  /** Every call waits for a human's approval: the run pauses (see `resolveApproval`). */
  requireApproval?: boolean;
  /** Not sent to the model until `search_tools` loads it (see `ToolSchema.deferred`). */
  deferred?: boolean;
  /** `"verbatim"`: the tool's result is the run's answer (see `Tool.answer`). */
  answer?: "verbatim";
  /** Calls run as background tasks: answered at once, their outcome delivered later (see `BackgroundOption`). */
  background?: BackgroundOption;
} & InputSchemaOption<Schema> &
  HandlerOption<Schema>;

/** A tool's input schema: `inputSchema`, or its alias `input_schema`. */
export type InputSchemaOption<Schema> =
  | {
      /** A JSON Schema object, or a Standard Schema (zod 4, valibot, arktype…) whose output type the handler receives. */
      inputSchema: Schema;
      input_schema?: never;
    }
  | {
      /**
       * Alias of `inputSchema`, the canonical name: the snake_case name tool schemas themselves use
       * (`ToolSchema.input_schema`), for code written against it.
       */
      input_schema: Schema;
      inputSchema?: never;
    };

/** A tool's handler: `handler`, or its alias `execute`. */
export type HandlerOption<Schema> =
  | {
      /** Runs each call with the validated input (see `ToolHandler`). */
      handler: ToolHandlerFor<Schema>;
      execute?: never;
    }
  | {
      /** Alias of `handler`, the canonical name, for code written against tools with an `execute` method. */
      execute: ToolHandlerFor<Schema>;
      handler?: never;
    };

/**
 * Bundles a tool's schema and handler. With a Standard Schema the input is validated (and
 * transformed) by that schema and its type is inferred for the handler; with a JSON Schema the
 * loop validates the input against it.
 */
/**
 * What is wrong with what the model is told of a tool, if anything: its name as every provider
 * takes one (Anthropic, OpenAI and Bedrock accept only `^[a-zA-Z0-9_-]{1,64}$`; a request with
 * another fails there, on every call) and its description as text.
 */
export function toolNameProblem(name: unknown, description: unknown): string | undefined {
  if (typeof name !== "string" || !/^[a-zA-Z0-9_-]{1,64}$/.test(name))
    return `tool ${JSON.stringify(name) ?? String(name)}: a tool's name must be 1-64 letters, digits, _ or - (what providers accept)`;
  if (description !== undefined && typeof description !== "string")
    return `tool "${name}": description must be a string`;
  return undefined;
}

/**
 * What is wrong with a tool definition's `input_schema`, if anything: it must be a JSON Schema
 * object (providers send it as the tool's parameters, and every call's input is validated against
 * it). A hand-written definition with `inputSchema` (the name `tool()` takes) instead is named as
 * the likely slip.
 */
export function toolSchemaProblem(definition: ToolDefinition): string | undefined {
  const schema: unknown = (definition as { input_schema?: unknown }).input_schema;
  if (typeof schema === "object" && schema !== null && !Array.isArray(schema)) return undefined;
  const hint =
    "inputSchema" in definition
      ? ` (it has "inputSchema": a hand-written definition names it "input_schema"; tool() takes "inputSchema")`
      : "";
  return `tool "${definition.name}": "input_schema" must be a JSON Schema object, not ${schema === undefined ? "missing" : (JSON.stringify(schema) ?? typeof schema)}${hint}`;
}

export function tool<Schema extends StandardSchemaV1 | JsonObject>(
  options: ToolOptions<Schema>,
): Tool<InputOf<Schema>> {
  const { name, description } = options;
  // The one place the aliases are read: from here on only the canonical names exist.
  const inputSchema = options.inputSchema ?? options.input_schema;
  const handler = options.handler ?? options.execute;
  // The types require both; a caller without them must not get a tool the model cannot call.
  const problem = toolNameProblem(name, description);
  if (problem !== undefined) throw new TypeError(problem);
  if (inputSchema === undefined) throw new TypeError(`tool "${name}": an input schema (inputSchema) is required`);
  if (typeof inputSchema !== "object" || inputSchema === null || Array.isArray(inputSchema))
    throw new TypeError(`tool "${name}": inputSchema must be a JSON Schema object or a Standard Schema`);
  if (typeof handler !== "function") throw new TypeError(`tool "${name}": a handler function is required`);
  checkToolTimeout(name, options.timeout);
  checkBackground(name, options.background);
  const definition: Tool<InputOf<Schema>> = { name, description, input_schema: {}, handler };
  if (options.timeout !== undefined) definition.timeout = options.timeout;
  if (options.eager !== undefined) definition.eager = options.eager;
  if (options.requireApproval !== undefined) definition.requireApproval = options.requireApproval;
  if (options.deferred !== undefined) definition.deferred = options.deferred;
  if (options.answer !== undefined) definition.answer = options.answer;
  if (options.background !== undefined) definition.background = options.background;
  // A typed JSON Schema (`jsonSchema<T>()`) is checked like any JSON Schema: synchronously, compiled once.
  const kind = schemaKind(inputSchema, options.jsonSchema);
  if (kind.type === "standard") {
    const { schema } = kind;
    if (kind.jsonSchema === undefined) {
      throw new TypeError(
        `tool "${name}": this ${schema["~standard"].vendor} schema cannot produce a JSON Schema for the model; pass one as \`jsonSchema\` (for valibot, toJsonSchema from @valibot/to-json-schema)`,
      );
    }
    definition.validate = (input) => validateStandard(schema, input);
  }
  if (kind.jsonSchema !== undefined) definition.input_schema = kind.jsonSchema;
  return definition;
}

/** Throws an `AgentError` unless a tool's `timeout` is a number of milliseconds > 0 or `Infinity`. */
export function checkToolTimeout(name: string, timeout: unknown): void {
  checkNumber(`tool "${name}": timeout`, timeout, { min: 0, exclusive: true, infinity: true });
}

/** The model-facing part of each tool: handlers and loop-only fields removed, provider fields kept. */
export function toolSchemas(tools: readonly ToolDefinition[]): ToolSchema[] {
  return tools.map((definition) => {
    if (!loopOnlyKeys.some((key) => key in definition)) return definition;
    const schema: Record<string, unknown> = { ...definition };
    for (const key of loopOnlyKeys) delete schema[key];
    // The model decides which calls run in the background: it is shown the input that says so.
    if (backgroundOf(definition)?.when === "asked") schema.input_schema = askedInputSchema(definition.input_schema);
    return schema as ToolSchema;
  });
}

// Fields the loop reads from a tool definition; the model never sees them.
const loopOnlyKeys = [
  "handler",
  "validate",
  "timeout",
  "eager",
  "requireApproval",
  "deferred",
  "answer",
  "background",
  "outputSchema",
];
