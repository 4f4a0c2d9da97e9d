import { createAbortRace, type AbortRace } from "./abort.ts";
import { errorMessage, isAbortError } from "./errors.ts";
import type { AgentEvent } from "./events.ts";
import type { JsonValue, Session, ToolCallMessage, ToolResultMessage } from "./session.ts";
import type { ToolContext, ToolDefinition, ToolHandler, ToolHandlers } from "./tools.ts";
import { validateToolInput } from "./validate-input.ts";

export type ExecuteToolCallsOptions = {
  /** Tool schemas (and `tool()` definitions): used to validate input and to find handlers. */
  tools?: readonly ToolDefinition[];
  /** Run the calls concurrently (default) or one after another in call order. */
  parallel?: boolean;
  /** At most this many handlers at once (default: no limit). */
  maxParallelTools?: number;
  /** Aborts running handlers; unfinished calls get error results. */
  signal?: AbortSignal;
  /** Milliseconds before a handler is abandoned with an error result (a tool's own `timeout` wins). */
  toolTimeout?: number;
  /** Passed to handlers in their context. */
  session?: Session;
  agentName?: string;
  /** Called with each result in call order, as soon as it and every result before it are ready. */
  onResult?: (result: ToolResultMessage) => void;
  /** Receives `tool-execution-start` and `tool-execution-end` for every call. */
  onEvent?: (event: AgentEvent) => void;
};

/**
 * Runs tool calls and returns exactly one result per call, in call order (seed 000 §4). Never
 * throws for a tool's failure: an unknown tool, input that fails the tool's schema (the handler is
 * not called), a throwing handler, a timeout or an abort each become an `isError` result.
 */
export async function executeToolCalls(
  toolCalls: readonly ToolCallMessage[],
  toolHandlers: ToolHandlers = {},
  options: ExecuteToolCallsOptions = {},
): Promise<ToolResultMessage[]> {
  const signal = options.signal ?? new AbortController().signal;
  const abortRace = createAbortRace(signal);
  try {
    return await createToolExecutor(options.tools ?? [], toolHandlers, options)(toolCalls, signal, abortRace);
  } finally {
    abortRace.dispose();
  }
}

export type ToolExecutor = (
  toolCalls: readonly ToolCallMessage[],
  signal: AbortSignal,
  abortRace: AbortRace,
) => Promise<ToolResultMessage[]>;

/** Prepares the lookups once, for a loop that executes tool calls every turn. */
export function createToolExecutor(
  tools: readonly ToolDefinition[],
  toolHandlers: ToolHandlers,
  options: Omit<ExecuteToolCallsOptions, "tools" | "signal">,
): ToolExecutor {
  const definitions = new Map(tools.map((definition) => [definition.name, definition]));
  const limit = options.parallel === false ? 1 : Math.max(1, options.maxParallelTools ?? Number.POSITIVE_INFINITY);
  const { onEvent, onResult } = options;

  async function runOne(call: ToolCallMessage, signal: AbortSignal, abortRace: AbortRace): Promise<ToolResultMessage> {
    const definition = definitions.get(call.name);
    const handler: ToolHandler | undefined =
      definition !== undefined && "handler" in definition ? definition.handler : toolHandlers[call.name];
    onEvent?.({ type: "tool-execution-start", id: call.id, name: call.name, input: call.input });
    const started = performance.now();
    const result = await answer(call, definition, handler, signal, abortRace);
    onEvent?.({ type: "tool-execution-end", id: call.id, name: call.name, result, durationMs: performance.now() - started });
    return result;
  }

  async function answer(
    call: ToolCallMessage,
    definition: ToolDefinition | undefined,
    handler: ToolHandler | undefined,
    signal: AbortSignal,
    abortRace: AbortRace,
  ): Promise<ToolResultMessage> {
    if (handler === undefined) {
      const available = [...new Set([...definitions.keys(), ...Object.keys(toolHandlers)])].join(", ");
      return errorResult(call.id, `Error: unknown tool "${call.name}". Available tools: ${available || "none"}.`);
    }
    if (signal.aborted) return errorResult(call.id, abortedText);
    let input: unknown = call.input;
    try {
      if (definition !== undefined) {
        let validation = validateToolInput(definition, input);
        if (validation instanceof Promise) validation = await abortRace.race(validation);
        if (!validation.ok) {
          return errorResult(call.id, `Error: invalid input for tool "${call.name}": ${validation.message}`);
        }
        input = validation.value;
      }
      const timeout = (definition !== undefined && "timeout" in definition ? definition.timeout : undefined) ?? options.toolTimeout;
      const output = timeout === undefined
        ? await runHandler(handler, input, contextFor(call, signal), abortRace)
        : await runWithTimeout(handler, input, call, signal, timeout);
      return { type: "tool_result", id: call.id, output: toJsonOutput(output) };
    } catch (error) {
      if (signal.aborted && isAbortError(error)) return errorResult(call.id, abortedText);
      if (error instanceof ToolTimeoutError) return errorResult(call.id, `Error: ${error.message}`);
      return errorResult(call.id, `Error: ${errorMessage(error)}`);
    }
  }

  function contextFor(call: ToolCallMessage, signal: AbortSignal): ToolContext {
    const context: ToolContext = { signal, id: call.id, name: call.name, session: options.session ?? { messages: [] } };
    if (options.agentName !== undefined) context.agentName = options.agentName;
    return context;
  }

  async function runWithTimeout(
    handler: ToolHandler,
    input: unknown,
    call: ToolCallMessage,
    runSignal: AbortSignal,
    timeout: number,
  ): Promise<unknown> {
    const controller = new AbortController();
    const onRunAbort = (): void => controller.abort(runSignal.reason);
    runSignal.addEventListener("abort", onRunAbort, { once: true });
    const timer = setTimeout(
      () => controller.abort(new ToolTimeoutError(`tool "${call.name}" timed out after ${timeout} ms`)),
      timeout,
    );
    const callRace = createAbortRace(controller.signal);
    try {
      return await runHandler(handler, input, contextFor(call, controller.signal), callRace);
    } catch (error) {
      if (controller.signal.reason instanceof ToolTimeoutError) throw controller.signal.reason;
      throw error;
    } finally {
      clearTimeout(timer);
      runSignal.removeEventListener("abort", onRunAbort);
      callRace.dispose();
    }
  }

  return async function execute(toolCalls, signal, abortRace) {
    if (toolCalls.length === 1) {
      const result = await runOne(toolCalls[0]!, signal, abortRace);
      onResult?.(result);
      return [result];
    }
    const results: ToolResultMessage[] = new Array<ToolResultMessage>(toolCalls.length);
    let next = 0;
    let flushed = 0;
    const worker = async (): Promise<void> => {
      while (next < toolCalls.length) {
        const index = next++;
        results[index] = await runOne(toolCalls[index]!, signal, abortRace);
        for (; flushed < toolCalls.length && results[flushed] !== undefined; flushed++) onResult?.(results[flushed]!);
      }
    };
    await Promise.all(Array.from({ length: Math.min(limit, toolCalls.length) }, worker));
    return results;
  };
}

const abortedText = "Error: aborted before the tool finished";

class ToolTimeoutError extends Error {
  override name = "ToolTimeoutError";
}

function errorResult(id: string, output: string): ToolResultMessage {
  return { type: "tool_result", id, output, isError: true };
}

// A handler that ignores its signal cannot hold the run: the race settles on abort and the
// handler's late result is dropped.
async function runHandler(handler: ToolHandler, input: unknown, context: ToolContext, abortRace: AbortRace): Promise<unknown> {
  const output = handler(input, context);
  if (output !== null && typeof output === "object" && typeof (output as PromiseLike<unknown>).then === "function") {
    return abortRace.race(output as PromiseLike<unknown>);
  }
  return output;
}

/** Tool output must be plain JSON to stay in the session; `undefined` becomes `""`. Throws for values JSON cannot hold. */
function toJsonOutput(output: unknown): JsonValue {
  if (output === undefined) return "";
  if (typeof output === "string" || typeof output === "boolean" || output === null) return output;
  if (typeof output === "number" && Number.isFinite(output)) return output;
  const text = JSON.stringify(output);
  if (text === undefined) return "";
  return JSON.parse(text) as JsonValue;
}
