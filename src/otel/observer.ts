// OpenTelemetry spans for a run, built only on the loop's events (no hooks into the loop itself).
// `@opentelemetry/api` is an optional peer dependency: type imports only here, and the module is
// loaded once, when this entry point is first imported; when it is missing, observers do nothing.
import type { Attributes, Context, ContextAPI, Span, TraceAPI, Tracer } from "@opentelemetry/api";
import type { AgentEvent } from "../loop/events.ts";
import { isModelMessage, type JsonValue, type ModelMessage, type Usage, type UserMessage } from "../session.ts";
import { AgentError, describeValue } from "../errors.ts";
import { checkBoolean } from "../numeric-options.ts";
import { addUsage, fail, inputMessages, outputMessages, setUsage, toolCallResult } from "./span-attributes.ts";

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
  /** `gen_ai.request.model` of the run's spans (model-call spans are then named `chat <model>`); the events do not carry it. */
  model?: string;
  /**
   * `gen_ai.provider.name` (required by the conventions), e.g. `"anthropic"`, `"openai"`,
   * `"aws.bedrock"`, `"gcp.gemini"`. Subagent runs inherit it unless `agents` says otherwise.
   */
  provider?: string;
  /** `gen_ai.conversation.id` of the run and model-call spans: your id for the session, to group runs of one conversation. */
  conversationId?: string;
  /**
   * Model and provider of subagent runs, by the subagent's name. A subagent run gets no
   * `gen_ai.request.model` without an entry here: it often uses another model than its parent.
   */
  agents?: Record<string, { model?: string; provider?: string }>;
  /** Parent of the run span (default: the active context when `run-start` arrives). */
  parentContext?: Context;
  /**
   * Record content (opt-in in the conventions: it may hold sensitive data): tool inputs and
   * outputs as `gen_ai.tool.call.arguments` / `gen_ai.tool.call.result`, and each model call's
   * response as `gen_ai.output.messages`. A result with images or files is recorded as the
   * conventions' message parts (`text`, `blob`, `uri`), a blob without its bytes (`content: ""`,
   * `size` in bytes) unless `recordMediaData` is on. Default `false`.
   */
  recordContent?: boolean;
  /**
   * With `recordContent`, keep the base64 of images and files in the recorded parts too (a 1 MB
   * screenshot adds 1.4 MB to the span; most backends cap attributes well below that). Default `false`.
   */
  recordMediaData?: boolean;
};

/** An event listener: pass `onEvent` (or the observer itself, which is the same function) as the loop's `onEvent`. */
export type OtelObserver = ((event: AgentEvent) => void) & { onEvent: (event: AgentEvent) => void };

/**
 * Spans for a run following the OpenTelemetry GenAI semantic conventions, made from the loop's
 * events: `invoke_agent <name>` (INTERNAL, from `run-start` to `run-end`), a `chat <model>` (or
 * `chat`) span per model call (CLIENT, from `turn-start`, or the end of a retry's backoff, to the
 * end of the model's response) and an `execute_tool <tool name>` span per tool call (INTERNAL,
 * from `tool-execution-start` to `tool-execution-end`), and a `guardrail <name>` span per
 * guardrail verdict (INTERNAL, with `simple_agent_loop.guardrail.name`, `.kind`, `.action` and
 * `.message`; a blocked run's outcome is `blocked`). Model-call, tool and guardrail spans are children of
 * the run span (set explicitly through the context, so no context manager is needed). A
 * subagent's run (`subagentTool`: its events arrive as the call's `tool-execution-update`s) gets
 * its own `invoke_agent` span tree under the tool span of the call that started it, and a
 * code-mode program's calls (events with `caller`) are children of their code call's tool span.
 *
 * Failures set span status ERROR and `error.type`: a failed run or model call (the error's class
 * name, e.g. `ProviderError`, or `_OTHER` when what was thrown is not an `Error`), a run that hit
 * `maxIterations` (`MaxIterationsError`), a call that overflowed the context
 * (`ContextOverflowError`), and tool results with `isError` (`tool_error`). An aborted run is not
 * an error: its outcome is in `simple_agent_loop.run.outcome`.
 *
 * Usage: `agentLoop(model, tools, session, { onEvent: otelObserver({ model: "gpt-5", provider: "openai" }) })`;
 * to combine with your own listener, call `observer.onEvent(event)` from it. The observer never
 * throws (a failing tracer cannot break the run), but a listener of yours that throws stops the
 * run's events, `run-end` included, so the open spans are never ended.
 *
 * `@opentelemetry/api` (>= 1.9) is an optional peer dependency, imported once when this module
 * loads (top-level `await import()` guarded against its absence). When it is not installed and
 * no `api` option is given, the observer is a no-op. Use one observer per run at a time: events
 * of concurrent top-level runs cannot be told apart (subagents are told apart by their call).
 * Do not give a `subagentTool` an observer of its own as well: its spans would be made twice.
 * The spans only observe: tool handlers do not run inside the tool span's context.
 */
export function otelObserver(options: OtelObserverOptions = {}): OtelObserver {
  checkObserverOptions(options);
  const api = options.api ?? installedApi;
  if (api === undefined) return Object.assign(noop, { onEvent: noop });
  const tracer = options.tracer ?? api.trace.getTracer("simple-agent-loop");
  const state = runState(
    {
      api,
      tracer,
      options,
      recordContent: options.recordContent === true,
      mediaData: options.recordMediaData === true,
    },
    options,
  );
  const onEvent = (event: AgentEvent): void => {
    try {
      onRunEvent(state, event);
    } catch {
      // Telemetry must never break the run it observes (a throwing listener aborts the loop).
    }
  };
  return Object.assign(onEvent, { onEvent });
}

function noop(_event: AgentEvent): void {}

// Checked as the loop checks its own: `recordContent: "false"` must not turn content recording on.
function checkObserverOptions(options: OtelObserverOptions): void {
  if (typeof options !== "object" || options === null)
    throw new AgentError(`otelObserver: options must be an object; got ${describeValue(options)}`);
  checkBoolean("otelObserver: recordContent", options.recordContent);
  checkBoolean("otelObserver: recordMediaData", options.recordMediaData);
  for (const key of ["agentName", "model", "provider", "conversationId"] as const) {
    const value: unknown = options[key];
    if (value !== undefined && typeof value !== "string")
      throw new AgentError(`otelObserver: ${key} must be a string; got ${describeValue(value)}`);
  }
  const agents: unknown = options.agents;
  if (agents !== undefined && (typeof agents !== "object" || agents === null || Array.isArray(agents)))
    throw new AgentError(`otelObserver: agents must be an object keyed by subagent name; got ${describeValue(agents)}`);
}

// Numeric values of the API's enums, so that nothing but types is imported from it.
const SPAN_KIND_INTERNAL = 0;
const SPAN_KIND_CLIENT = 2;

type EventOf<Type extends AgentEvent["type"]> = Extract<AgentEvent, { type: Type }>;

/** What every run of one observer shares: the API, the tracer and the options it was made with. */
type Tracing = {
  api: OtelApi;
  tracer: Tracer;
  options: OtelObserverOptions;
  recordContent: boolean;
  /** Base64 of images and files kept in recorded parts (`recordMediaData`). */
  mediaData: boolean;
};

/** The settings of one run's spans: the options' for the top-level run, the `agents` entry's for a subagent. */
type RunSettings = Pick<OtelObserverOptions, "agentName" | "model" | "provider" | "conversationId" | "parentContext">;

/**
 * The spans of one run that are open now, changed only by the handlers below. At most one run
 * span, one model-call span and one span per tool call in flight are open at a time; a subagent's
 * run has a state of its own, held by the tool span of the call that started it.
 */
type RunState = {
  readonly tracing: Tracing;
  readonly settings: RunSettings;
  /** From `run-start` to `run-end`; undefined outside a run (then no other span opens). */
  run: { span: Span; context: Context; usage?: Usage } | undefined;
  /** The model call in progress, with the messages of its response so far and its usage once reported. */
  chat: { span: Span; messages: ModelMessage[]; usage?: Usage } | undefined;
  /** When the repeat of a retried model call begins (epoch ms): its span starts then, not during the backoff. */
  retryAt: number | undefined;
  /** Tool calls executing, by call id. */
  readonly tools: Map<string, ToolSpan>;
  /** With `recordContent`: the user messages since the last model call began (the next call's `gen_ai.input.messages`). */
  newInput: UserMessage[];
};

/** `caller`: for a call a code-mode program made, its code call's id (its span is the parent). */
type ToolSpan = { span: Span; subagent?: RunState; caller?: string };

function runState(tracing: Tracing, settings: RunSettings): RunState {
  return { tracing, settings, run: undefined, chat: undefined, retryAt: undefined, tools: new Map(), newInput: [] };
}

/** Moves the run's spans along by one event (and, through its tool spans, those of the subagent runs it starts). */
function onRunEvent(state: RunState, event: AgentEvent): void {
  if (state.retryAt !== undefined && event.type !== "tool-execution-end" && event.type !== "tool-execution-update")
    startRepeat(state, event, state.retryAt);
  // The model's response is over once anything but its own messages follows them.
  if (
    state.chat !== undefined &&
    state.chat.messages.length > 0 &&
    !(event.type === "message" && isModelMessage(event.message))
  )
    endChat(state);
  switch (event.type) {
    case "run-start":
      return startRun(state, event);
    case "turn-start":
      endChat(state);
      return startChat(state);
    case "retry":
      return endFailedAttempt(state, event);
    case "compaction":
      return endOverflowedCall(state);
    case "message":
      return recordModelMessage(state, event);
    case "turn-end":
      recordTurnEnd(state, event.usage, event.stopReason);
      return endChat(state);
    case "tool-execution-start":
      return startTool(state, event);
    case "tool-execution-update":
      return forwardToSubagent(state, event);
    case "tool-approval-request":
      return endPausedTool(state, event);
    case "tool-execution-end":
      return endTool(state, event);
    case "guardrail":
      return recordGuardrail(state, event);
    case "run-end":
      return endRun(state, event);
    default:
      return undefined;
  }
}

/** Starts the span of a retried call's repeat at its due time, unless an abort during the backoff prevented the repeat. */
function startRepeat(state: RunState, event: AgentEvent, due: number): void {
  // Late results of tools the failed attempt started early say nothing about the repeat, so the
  // caller skips them. An abort during the backoff ends the run before the due time: then the
  // repeat never began.
  state.retryAt = undefined;
  const now = Date.now();
  // Timers and Date.now() can disagree by a millisecond: only clearly early counts.
  const early = now < due - 1;
  const abortedInBackoff =
    early &&
    (event.type === "run-end" ||
      (event.type === "message" &&
        "role" in event.message &&
        event.message.role === "assistant" &&
        event.message.stopReason === "aborted"));
  if (!abortedInBackoff) startChat(state, Math.min(due, now));
}

function startRun(state: RunState, event: EventOf<"run-start">): void {
  endAll(state);
  const { api, tracer } = state.tracing;
  const agentName = state.settings.agentName ?? event.agentName;
  const attributes: Attributes = { "gen_ai.operation.name": "invoke_agent" };
  if (agentName !== undefined) attributes["gen_ai.agent.name"] = agentName;
  addModelAttributes(attributes, state.settings);
  const parent = state.settings.parentContext ?? api.context.active();
  const name = agentName === undefined ? "invoke_agent" : `invoke_agent ${agentName}`;
  const span = tracer.startSpan(name, { kind: SPAN_KIND_INTERNAL, attributes }, parent);
  state.run = { span, context: api.trace.setSpan(parent, span) };
  state.newInput = [];
  const { input } = event;
  if (!state.tracing.recordContent || input === undefined || input.length === 0) return;
  span.setAttribute("gen_ai.input.messages", inputMessages(input, state.tracing.mediaData));
  state.newInput = [...input];
}

/** `gen_ai.request.model`, `gen_ai.provider.name` and `gen_ai.conversation.id`, each when known: run and model-call spans carry them. */
function addModelAttributes(attributes: Attributes, settings: RunSettings): void {
  if (settings.model !== undefined) attributes["gen_ai.request.model"] = settings.model;
  if (settings.provider !== undefined) attributes["gen_ai.provider.name"] = settings.provider;
  if (settings.conversationId !== undefined) attributes["gen_ai.conversation.id"] = settings.conversationId;
}

function startChat(state: RunState, startTime?: number): void {
  if (state.run === undefined) return;
  const { model } = state.settings;
  const attributes: Attributes = { "gen_ai.operation.name": "chat" };
  addModelAttributes(attributes, state.settings);
  const name = model === undefined ? "chat" : `chat ${model}`;
  const spanOptions =
    startTime === undefined
      ? { kind: SPAN_KIND_CLIENT, attributes }
      : { kind: SPAN_KIND_CLIENT, attributes, startTime };
  const span = state.tracing.tracer.startSpan(name, spanOptions, state.run.context);
  // What this call's model is shown for the first time from the user (tool results: on their spans).
  if (state.newInput.length > 0)
    span.setAttribute("gen_ai.input.messages", inputMessages(state.newInput, state.tracing.mediaData));
  state.chat = { span, messages: [] };
}

/** Ends the model call in progress, if any; its usage then counts in the run's. */
function endChat(state: RunState, error?: { type: string; message: string }): void {
  const { chat, run } = state;
  if (chat === undefined) return;
  if (error !== undefined) fail(chat.span, error.type, errorText(state, error.type, error.message));
  if (state.tracing.recordContent && chat.messages.length > 0)
    chat.span.setAttribute("gen_ai.output.messages", outputMessages(chat.messages));
  if (chat.usage !== undefined && run !== undefined) run.usage = addUsage(run.usage, chat.usage);
  chat.span.end();
  state.chat = undefined;
}

/**
 * An error's description for a span's status: its text with `recordContent` on; otherwise its type
 * and a fixed text, since an error's message can quote the model's answer or a tool's input
 * (`InvalidModelResponseError`, `MaxIterationsError`'s last action, a provider's error body).
 */
function errorText(state: RunState, type: string, message: string): string {
  return state.tracing.recordContent ? message : `${type} (error text not recorded: recordContent is off)`;
}

/** The failed attempt is its own model call; the repeat gets a new span once it begins. */
function endFailedAttempt(state: RunState, event: EventOf<"retry">): void {
  endChat(state, { type: event.errorType ?? "_OTHER", message: event.error });
  state.retryAt = Date.now() + event.delayMs;
}

/** Compaction while a call is open and unanswered: the call overflowed the context and is repeated. */
function endOverflowedCall(state: RunState): void {
  if (state.chat === undefined || state.chat.messages.length > 0) return;
  endChat(state, { type: "ContextOverflowError", message: "the prompt exceeded the model's context window" });
  startChat(state);
}

function recordModelMessage(state: RunState, event: EventOf<"message">): void {
  const { message } = event;
  // Steering, follow-ups and corrections: the next call's new input.
  if (state.tracing.recordContent && "role" in message && message.role === "user") state.newInput.push(message);
  const { chat } = state;
  if (chat === undefined || !isModelMessage(message)) return;
  // The model answered: its input is not new to the next call (a retried call's repeat had it too).
  state.newInput = [];
  chat.messages.push(message);
  const { usage, stopReason, model, responseId } = message;
  // Who answered, as the adapter recorded it on the turn's last message.
  if (typeof model === "string") chat.span.setAttribute("gen_ai.response.model", model);
  if (typeof responseId === "string") chat.span.setAttribute("gen_ai.response.id", responseId);
  recordTurnEnd(state, usage, stopReason);
  // The loop records usage and stop reason on the turn's last message.
  if (usage !== undefined || stopReason !== undefined) endChat(state);
}

function recordTurnEnd(state: RunState, usage: Usage | undefined, stopReason: string | undefined): void {
  const { chat } = state;
  if (chat === undefined) return;
  if (usage !== undefined) {
    setUsage(chat.span, usage);
    chat.usage = usage;
  }
  if (stopReason !== undefined) chat.span.setAttribute("gen_ai.response.finish_reasons", [stopReason]);
}

function startTool(state: RunState, event: EventOf<"tool-execution-start">): void {
  if (state.run === undefined) return;
  const attributes: Attributes = {
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": event.name,
    "gen_ai.tool.call.id": event.id,
    "gen_ai.tool.type": "function",
  };
  if (state.tracing.recordContent) attributes["gen_ai.tool.call.arguments"] = JSON.stringify(event.input);
  removeTool(state, event.id)?.span.end();
  // A program's call runs inside its code call: its span is a child of that call's.
  const { caller } = event;
  const program = caller === undefined ? undefined : state.tools.get(caller);
  const parent =
    program === undefined ? state.run.context : state.tracing.api.trace.setSpan(state.run.context, program.span);
  const span = state.tracing.tracer.startSpan(
    `execute_tool ${event.name}`,
    { kind: SPAN_KIND_INTERNAL, attributes },
    parent,
  );
  state.tools.set(event.id, program === undefined ? { span } : { span, caller: caller! });
}

/**
 * A guardrail's verdict: a span `guardrail <name>` under the run span, ended where the verdict
 * arrived (the event marks the answer, not the start of the check).
 */
function recordGuardrail(state: RunState, event: EventOf<"guardrail">): void {
  if (state.run === undefined) return;
  const attributes: Attributes = {
    "simple_agent_loop.guardrail.name": event.name,
    "simple_agent_loop.guardrail.kind": event.kind,
    "simple_agent_loop.guardrail.action": event.action,
  };
  if (event.message !== undefined) attributes["simple_agent_loop.guardrail.message"] = event.message;
  state.tracing.tracer
    .startSpan(`guardrail ${event.name}`, { kind: SPAN_KIND_INTERNAL, attributes }, state.run.context)
    .end();
}

/** A subagent's events arrive as its call's progress: its run gets a state of its own under the call's span. */
function forwardToSubagent(state: RunState, event: EventOf<"tool-execution-update">): void {
  const tool = state.tools.get(event.id);
  const inner = asAgentEvent(event.progress);
  if (tool === undefined || state.run === undefined || inner === undefined) return;
  if (inner.type === "run-start" && tool.subagent === undefined) {
    const { api, options } = state.tracing;
    const agent = inner.agentName === undefined ? undefined : options.agents?.[inner.agentName];
    const provider = agent?.provider ?? state.settings.provider;
    tool.subagent = runState(state.tracing, {
      ...(agent?.model === undefined ? {} : { model: agent.model }),
      ...(provider === undefined ? {} : { provider }),
      parentContext: api.trace.setSpan(state.run.context, tool.span),
    });
  }
  if (tool.subagent !== undefined) onRunEvent(tool.subagent, inner);
}

/** A handler that paused for approval (a subagent's run paused): its call ends here, unanswered. */
function endPausedTool(state: RunState, event: EventOf<"tool-approval-request">): void {
  const tool = removeTool(state, event.id);
  if (tool === undefined) return;
  tool.span.setAttribute("simple_agent_loop.tool.approval", "pending");
  tool.span.end();
}

function endTool(state: RunState, event: EventOf<"tool-execution-end">): void {
  const tool = removeTool(state, event.id);
  if (tool === undefined) return;
  const { recordContent, mediaData } = state.tracing;
  const { isError } = event.result;
  const text = toolCallResult(event.result, mediaData);
  if (recordContent) tool.span.setAttribute("gen_ai.tool.call.result", text);
  // A tool's error text is content (it can echo a file, a command's output, the input).
  if (isError === true)
    fail(tool.span, "tool_error", recordContent ? text : "the tool returned an error result (content not recorded)");
  tool.span.end();
}

/**
 * Forgets the call's span (the caller ends it) and ends the spans of the subagent run it started,
 * and of the calls its program started that are still open.
 */
function removeTool(state: RunState, id: string): ToolSpan | undefined {
  const tool = state.tools.get(id);
  if (tool === undefined) return undefined;
  state.tools.delete(id);
  // A subagent abandoned mid-run (its call aborted or timed out) sends no more events.
  if (tool.subagent !== undefined) endAll(tool.subagent);
  for (const [callId, call] of state.tools) if (call.caller === id) removeTool(state, callId)?.span.end();
  return tool;
}

function endRun(state: RunState, event: EventOf<"run-end">): void {
  if (state.chat !== undefined && event.outcome === "error")
    endChat(state, { type: event.errorType ?? "_OTHER", message: event.error ?? "model call failed" });
  const { run } = state;
  if (run !== undefined) {
    // End the model call first, so that its usage counts in the run's.
    endChat(state);
    const span = run.span;
    span.setAttribute("simple_agent_loop.run.outcome", event.outcome);
    if (event.pending !== undefined)
      span.setAttribute(
        "simple_agent_loop.run.pending_tool_call_ids",
        event.pending.map((call) => call.id),
      );
    if (run.usage !== undefined) setUsage(span, run.usage);
    const type = event.outcome === "max-iterations" ? "MaxIterationsError" : (event.errorType ?? "_OTHER");
    if (event.outcome === "error" || event.outcome === "max-iterations")
      fail(span, type, errorText(state, type, event.error ?? event.outcome));
  }
  endAll(state);
}

/** Ends every open span (a new run, the end of this one, or the call that ran it ending first). */
function endAll(state: RunState): void {
  state.retryAt = undefined;
  endChat(state);
  for (const id of [...state.tools.keys()]) removeTool(state, id)?.span.end();
  state.run?.span.end();
  state.run = undefined;
}

// A subagent's events travel as its call's progress values; any other progress is not an event.
function asAgentEvent(progress: JsonValue): AgentEvent | undefined {
  if (typeof progress !== "object" || progress === null || Array.isArray(progress)) return undefined;
  return typeof progress.type === "string" ? (progress as unknown as AgentEvent) : undefined;
}
