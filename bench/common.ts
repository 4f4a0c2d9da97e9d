// What every library adapter shares: the one tool, the scripted plan of the zero-latency model,
// and the counters that prove each library did all the work it is timed for.
import { z } from "zod";

export const SYSTEM_PROMPT = "You are a calculator. Use the add tool.";
export const USER_PROMPT = "Add 1 and 2, again and again.";
export const FINAL_TEXT = "done";

/** The one tool, as JSON Schema. Every library is given this schema (or the zod schema below). */
export const ADD_TOOL = {
  name: "add",
  description: "Adds two numbers and returns the sum.",
  input_schema: {
    type: "object",
    properties: { a: { type: "number" }, b: { type: "number" } },
    required: ["a", "b"],
    additionalProperties: false,
  },
};

/**
 * The same schema in zod, for libraries that validate tool input only through a zod (or Standard
 * Schema) object and pass a plain JSON Schema through unchecked. It converts to ADD_TOOL.input_schema.
 */
export const ADD_ZOD = z.strictObject({ a: z.number(), b: z.number() });

/** The arguments of a scripted tool call whose library takes the same call every turn: an object, or JSON text for JSON-text APIs. */
export const ADD_INPUT = { a: 1, b: 2 } as const;
export const ADD_INPUT_JSON = JSON.stringify(ADD_INPUT);

export type AddInput = { a: number; b: number };

/** The id of the k-th tool call of model call n. */
export const callId = (n: number, k: number): string => `call_${n}_${k}`;

export type WorkloadSpec = {
  /** Model calls that ask for tools; call number `turns` (0-based) answers with text. */
  turns: number;
  /** Tool calls in each of those model calls. */
  callsPerTurn: number;
  /** Milliseconds each tool handler sleeps (0: returns synchronously). */
  toolSleepMs: number;
  /**
   * With `toolSleepMs` 0: the handler answers with an already-resolved promise instead of the
   * value, so each call takes the library's awaited path without a timer.
   */
  awaited?: boolean;
};

/**
 * One run of the scripted conversation. Adapters call `tool` from their tool handler, `nextCall`
 * from their model, and the checks with what the library handed the model.
 */
export class Workload {
  readonly turns: number;
  readonly callsPerTurn: number;
  readonly toolSleepMs: number;
  readonly awaited: boolean;
  modelCalls = 0;
  toolCalls = 0;
  /** Called on every model call and tool call (the memory probe samples the heap there). */
  readonly probe: (() => void) | undefined;

  constructor(spec: WorkloadSpec, probe?: () => void) {
    this.turns = spec.turns;
    this.callsPerTurn = spec.callsPerTurn;
    this.toolSleepMs = spec.toolSleepMs;
    this.awaited = spec.awaited === true;
    this.probe = probe;
  }

  /** The tool body: counts the call and adds (after sleeping, for the parallel workload). */
  tool = (input: AddInput): number | Promise<number> => {
    this.toolCalls++;
    this.probe?.();
    if (typeof input?.a !== "number" || typeof input?.b !== "number") {
      throw new Error(`bench: tool got bad input ${JSON.stringify(input)}`);
    }
    const sum = input.a + input.b;
    if (this.toolSleepMs === 0) return this.awaited ? Promise.resolve(sum) : sum;
    return new Promise((resolve) => setTimeout(() => resolve(sum), this.toolSleepMs));
  };

  /**
   * The arguments of tool call k of model call n: a different sum every turn, so a guard against a
   * model repeating itself (simple-agent-loop's default loop guard) lets the script run with its
   * defaults on.
   */
  input(n: number, k: number): AddInput {
    return { a: n, b: k + 1 };
  }

  /** Called at the start of each model call; returns its 0-based number. */
  nextCall(): number {
    this.probe?.();
    return this.modelCalls++;
  }

  /** True when model call `n` should ask for tools, false when it should answer with text. */
  wantsTools(n: number): boolean {
    return n < this.turns;
  }

  /**
   * At model call n > 0 the prompt must end with a tool result of call n-1: proof that the
   * library ran the tool and sent its result back before calling the model again.
   */
  checkLastResult(n: number, lastResultId: string | undefined): void {
    if (n === 0) return;
    if (lastResultId === undefined || !lastResultId.startsWith(`call_${n - 1}_`)) {
      throw new Error(
        `bench: model call ${n} did not receive the results of call ${n - 1} (last result id: ${lastResultId})`,
      );
    }
  }

  /** At the final model call the prompt must still hold the whole history (no trimming). */
  checkHistory(n: number, promptItems: number): void {
    if (n !== this.turns) return;
    const minimum = 2 * this.turns;
    if (promptItems < minimum) {
      throw new Error(`bench: final model call saw ${promptItems} history items, expected at least ${minimum}`);
    }
  }

  /** Fails loudly unless the library made every model call and ran every tool call. */
  assertComplete(label: string): void {
    const expectedTools = this.turns * this.callsPerTurn;
    const expectedModel = this.turns + 1;
    if (this.toolCalls !== expectedTools || this.modelCalls !== expectedModel) {
      throw new Error(
        `bench: ${label} ran ${this.toolCalls} tool calls (expected ${expectedTools}) and ` +
          `${this.modelCalls} model calls (expected ${expectedModel})`,
      );
    }
  }
}

/** What an adapter returns: the final text, and whatever holds the run's history (kept alive for the memory probe). */
export type RunOutput = { text: string; keep: unknown };

export type Adapter = {
  /** Display name. */
  name: string;
  /** npm package whose version is reported ("" for the hand-written loop). */
  packageName: string;
  /** How tool input is validated, for the report. */
  validation: string;
  /** How the scripted model is plugged in, for the report. */
  modelHook: string;
  run(workload: Workload): Promise<RunOutput>;
};
