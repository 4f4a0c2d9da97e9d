// OpenTelemetry spans for a run, built only on the loop's events (no hooks into the loop itself).
// `@opentelemetry/api` is an optional peer dependency: type imports only here, and the module is
// loaded once, when this entry point is first imported; when it is missing, observers do nothing.
import type { Attributes, Context, ContextAPI, Span, TraceAPI, Tracer } from "@opentelemetry/api";
import type { AgentEvent } from "../events.ts";
import type { Message, ModelMessage, StopReason, Usage } from "../session.ts";

/** The parts of `@opentelemetry/api` the observer uses (the module namespace itself fits). */
export type OtelApi = { trace: Pick<TraceAPI, "getTracer" | "setSpan">; context: Pick<ContextAPI, "active"> };

/** Loaded at import time; `undefined` when `@opentelemetry/api` is not installed. */
const installedApi: OtelApi | undefined = await import("@opentelemetry/api").then(
  (module) => module,
  () => undefined,
);

export type OtelObserverOptions = {
  /** The tracer to make spans with (default: `trace.getTracer("simple-agent-loop")` of the global provider). */
  tracer?: Tracer;
  /**
   * The OpenTelemetry API to use instead of the `@opentelemetry/api` this package can import
   * (e.g. when a bundler leaves the optional peer out). Without either, the observer is a no-op.
   */
  api?: OtelApi;
  /** `gen_ai.agent.name` of the run span (default: the `agentName` of the `run-start` event, i.e. the loop's `name`). */
  agentName?: string;
  /** `gen_ai.request.model` of model-call spans (their name becomes `chat <model>`); the events do not carry it. */
  model?: string;
  /** `gen_ai.provider.name` of model-call spans, e.g. `"anthropic"`, `"openai"`, `"aws.bedrock"`. */
  provider?: string;
  /** Parent of the run span (default: the active context when `run-start` arrives). */
  parentContext?: Context;
  /**
   * Record tool inputs and outputs as `gen_ai.tool.call.arguments` / `gen_ai.tool.call.result`
   * (opt-in in the conventions: they may hold sensitive data). Default `false`.
   */
  recordContent?: boolean;
};

/** An event listener: pass `onEvent` (or the observer itself, which is the same function) as the loop's `onEvent`. */
export type OtelObserver = ((event: AgentEvent) => void) & { onEvent: (event: AgentEvent) => void };

// Numeric values of the API's enums, so that nothing but types is imported from it.
const SPAN_KIND_INTERNAL = 0;
const SPAN_KIND_CLIENT = 2;
const STATUS_ERROR = 2;

/**
 * Spans for a run following the OpenTelemetry GenAI semantic conventions, made from the loop's
 * events: `invoke_agent <name>` (from `run-start` to `run-end`), a `chat <model>` (or `chat`)
 * span per model call (from `turn-start` to the end of the model's response: the message of the
 * turn that carries its stop reason or usage, else the first other event after its messages, a
 * `retry`, `turn-end` or `run-end`) and an `execute_tool <tool name>` span per tool call (from
 * `tool-execution-start` to `tool-execution-end`). Model-call and tool spans are children of the
 * run span (set explicitly through the context, so no context manager is needed). Failures set
 * span status ERROR and `error.type`: a failed run (`_OTHER`, or `MaxIterationsError`), the model
 * call that was open when it failed or was retried, and tool results with `isError`
 * (`tool_error`).
 *
 * Usage: `agentLoop(model, tools, session, { onEvent: otelObserver({ model: "gpt-5" }) })`; to
 * combine with your own listener, call `observer.onEvent(event)` from it.
 *
 * `@opentelemetry/api` (>= 1.9) is an optional peer dependency, imported once when this module
 * loads (top-level `await import()` guarded against its absence). When it is not installed and
 * no `api` option is given, the observer is a no-op. Use one observer per run at a time: events
 * of concurrent runs (e.g. parallel subagents) cannot be told apart; give a subagent its own
 * observer. The spans only observe: tool handlers do not run inside the tool span's context.
 */
export function otelObserver(options: OtelObserverOptions = {}): OtelObserver {
  const api = options.api ?? installedApi;
  if (api === undefined) return Object.assign(noop, { onEvent: noop });
  const tracer = options.tracer ?? api.trace.getTracer("simple-agent-loop");
  const recordContent = options.recordContent === true;

  let run: { span: Span; context: Context } | undefined;
  let chat: { span: Span; sawMessage: boolean } | undefined;
  const tools = new Map<string, Span>();

  const endChat = (error?: string): void => {
    if (chat === undefined) return;
    if (error !== undefined) fail(chat.span, "_OTHER", error);
    chat.span.end();
    chat = undefined;
  };
  const startChat = (): void => {
    if (run === undefined) return;
    const attributes: Attributes = { "gen_ai.operation.name": "chat" };
    if (options.model !== undefined) attributes["gen_ai.request.model"] = options.model;
    if (options.provider !== undefined) attributes["gen_ai.provider.name"] = options.provider;
    const name = options.model === undefined ? "chat" : `chat ${options.model}`;
    chat = { span: tracer.startSpan(name, { kind: SPAN_KIND_CLIENT, attributes }, run.context), sawMessage: false };
  };

  const onEvent = (event: AgentEvent): void => {
    // The model's response is over once anything but its own messages follows them.
    if (chat?.sawMessage === true && !(event.type === "message" && isModelMessage(event.message))) endChat();
    switch (event.type) {
      case "run-start": {
        endAll();
        const agentName = options.agentName ?? event.agentName;
        const attributes: Attributes = { "gen_ai.operation.name": "invoke_agent" };
        if (agentName !== undefined) attributes["gen_ai.agent.name"] = agentName;
        if (options.model !== undefined) attributes["gen_ai.request.model"] = options.model;
        if (options.provider !== undefined) attributes["gen_ai.provider.name"] = options.provider;
        const parent = options.parentContext ?? api.context.active();
        const name = agentName === undefined ? "invoke_agent" : `invoke_agent ${agentName}`;
        const span = tracer.startSpan(name, { kind: SPAN_KIND_INTERNAL, attributes }, parent);
        run = { span, context: api.trace.setSpan(parent, span) };
        break;
      }
      case "turn-start":
        endChat();
        startChat();
        break;
      case "retry":
        // The failed attempt is its own model call; the repeat gets a new span.
        endChat(event.error);
        startChat();
        break;
      case "message":
        if (chat !== undefined && isModelMessage(event.message)) {
          chat.sawMessage = true;
          const { usage, stopReason } = event.message;
          if (usage !== undefined) setUsage(chat.span, usage);
          if (stopReason !== undefined) setFinishReason(chat.span, stopReason);
          if (usage !== undefined || stopReason !== undefined) endChat();
        }
        break;
      case "turn-end":
        if (chat !== undefined) {
          if (event.usage !== undefined) setUsage(chat.span, event.usage);
          if (event.stopReason !== undefined) setFinishReason(chat.span, event.stopReason);
          endChat();
        }
        break;
      case "tool-execution-start": {
        if (run === undefined) break;
        const attributes: Attributes = {
          "gen_ai.operation.name": "execute_tool",
          "gen_ai.tool.name": event.name,
          "gen_ai.tool.call.id": event.id,
          "gen_ai.tool.type": "function",
        };
        if (recordContent) attributes["gen_ai.tool.call.arguments"] = JSON.stringify(event.input);
        tools.get(event.id)?.end();
        tools.set(event.id, tracer.startSpan(`execute_tool ${event.name}`, { kind: SPAN_KIND_INTERNAL, attributes }, run.context));
        break;
      }
      case "tool-execution-end": {
        const span = tools.get(event.id);
        if (span === undefined) break;
        tools.delete(event.id);
        const { output, isError } = event.result;
        if (recordContent) span.setAttribute("gen_ai.tool.call.result", typeof output === "string" ? output : JSON.stringify(output));
        if (isError === true) fail(span, "tool_error", typeof output === "string" ? output : JSON.stringify(output));
        span.end();
        break;
      }
      case "run-end": {
        const failed = event.outcome === "error" || event.outcome === "max-iterations";
        const errorType = event.outcome === "max-iterations" ? "MaxIterationsError" : "_OTHER";
        if (chat !== undefined && failed && event.outcome === "error") endChat(event.error ?? "model call failed");
        if (run !== undefined) {
          const span = run.span;
          span.setAttribute("simple_agent_loop.run.outcome", event.outcome);
          const usage = event.metrics?.usage;
          if (usage !== undefined) setUsage(span, usage);
          if (failed) fail(span, errorType, event.error ?? event.outcome);
        }
        endAll();
        break;
      }
      default:
        break;
    }
  };

  /** Ends every open span (a new run, or the end of this one). */
  function endAll(): void {
    endChat();
    for (const span of tools.values()) span.end();
    tools.clear();
    run?.span.end();
    run = undefined;
  }

  return Object.assign(onEvent, { onEvent });
}

function noop(_event: AgentEvent): void {}

function isModelMessage(message: Message): message is ModelMessage {
  return "role" in message ? message.role === "assistant" : message.type === "thinking" || message.type === "tool_call";
}

function setUsage(span: Span, usage: Usage): void {
  span.setAttribute("gen_ai.usage.input_tokens", usage.inputTokens);
  span.setAttribute("gen_ai.usage.output_tokens", usage.outputTokens);
  if (usage.cacheReadTokens !== undefined) span.setAttribute("gen_ai.usage.cache_read.input_tokens", usage.cacheReadTokens);
  if (usage.cacheWriteTokens !== undefined) span.setAttribute("gen_ai.usage.cache_creation.input_tokens", usage.cacheWriteTokens);
}

function setFinishReason(span: Span, stopReason: StopReason): void {
  span.setAttribute("gen_ai.response.finish_reasons", [stopReason]);
}

function fail(span: Span, errorType: string, message: string): void {
  span.setAttribute("error.type", errorType);
  span.setStatus({ code: STATUS_ERROR, message });
}
