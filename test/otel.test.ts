import * as api from "@opentelemetry/api";
import type { InMemorySpanExporter, ReadableSpan, SpanProcessor } from "@opentelemetry/sdk-trace-base";
import { describe, expect, it, vi } from "vitest";
import {
  agentLoop,
  agentStream,
  ContextOverflowError,
  initSession,
  ProviderError,
  resolveApproval,
  subagentTool,
  tool,
  type InvokeModel,
} from "simple-agent-loop";
import { otelObserver } from "simple-agent-loop/otel";
import { scriptedModel } from "simple-agent-loop/testing";
import { spanRecorder } from "./span-recorder.ts";

// Spans in the order they were started: start times have only millisecond precision here, so
// spans started in the same millisecond would otherwise compare equal.
const startOrder = new Map<string, number>();
const recordStarts: SpanProcessor = {
  onStart: (span) => void startOrder.set(span.spanContext().spanId, startOrder.size),
  onEnd: () => undefined,
  forceFlush: async () => undefined,
  shutdown: async () => undefined,
};

function setup(): { exporter: InMemorySpanExporter; tracer: api.Tracer } {
  return spanRecorder([recordStarts]);
}

const durationMs = (span: ReadableSpan): number => span.duration[0] * 1000 + span.duration[1] / 1e6;

const lookup = tool({
  name: "lookup",
  description: "Look up.",
  inputSchema: { type: "object" },
  handler: () => "found",
});
const broken = tool({
  name: "broken",
  description: "Always fails.",
  inputSchema: { type: "object" },
  handler: () => {
    throw new Error("disk on fire");
  },
});

function twoToolRun() {
  return scriptedModel([
    [
      { type: "tool_call", id: "call-1", name: "lookup", input: { q: "a" } },
      {
        type: "tool_call",
        id: "call-2",
        name: "broken",
        input: {},
        stopReason: "tool_use",
        usage: { inputTokens: 100, outputTokens: 20 },
      },
    ],
    [
      {
        role: "assistant",
        content: "done",
        stopReason: "end_turn",
        usage: { inputTokens: 150, outputTokens: 5, cacheReadTokens: 80 },
      },
    ],
  ]);
}

describe("otelObserver", () => {
  it("makes a run span with model-call and tool spans under it, following the GenAI conventions", async () => {
    const { exporter, tracer } = setup();
    const observer = otelObserver({ tracer, model: "test-model", provider: "scripted" });
    await agentLoop(twoToolRun(), [lookup, broken], initSession("system", "go"), { name: "helper", onEvent: observer });

    const spans = exporter.getFinishedSpans();
    const runs = spans.filter((span) => span.attributes["gen_ai.operation.name"] === "invoke_agent");
    expect(runs).toHaveLength(1);
    const run = runs[0]!;
    expect(run.name).toBe("invoke_agent helper");
    expect(run.attributes["gen_ai.agent.name"]).toBe("helper");
    expect(run.status.code).not.toBe(api.SpanStatusCode.ERROR);
    expect(run.attributes["gen_ai.usage.input_tokens"]).toBe(250);
    expect(run.attributes["gen_ai.usage.output_tokens"]).toBe(25);
    expect(run.parentSpanContext).toBeUndefined();

    const chats = spans.filter((span) => span.attributes["gen_ai.operation.name"] === "chat");
    expect(chats).toHaveLength(2);
    chats.sort((a, b) => (a.startTime[0] - b.startTime[0]) * 1e9 + (a.startTime[1] - b.startTime[1]));
    expect(chats.map((span) => span.name)).toEqual(["chat test-model", "chat test-model"]);
    expect(chats[0]!.kind).toBe(api.SpanKind.CLIENT);
    expect(chats[0]!.attributes).toMatchObject({
      "gen_ai.request.model": "test-model",
      "gen_ai.provider.name": "scripted",
      "gen_ai.usage.input_tokens": 100,
      "gen_ai.usage.output_tokens": 20,
      "gen_ai.response.finish_reasons": ["tool_use"],
    });
    expect(chats[1]!.attributes).toMatchObject({
      "gen_ai.usage.input_tokens": 150,
      "gen_ai.usage.output_tokens": 5,
      "gen_ai.usage.cache_read.input_tokens": 80,
      "gen_ai.response.finish_reasons": ["end_turn"],
    });

    const tools = spans.filter((span) => span.attributes["gen_ai.operation.name"] === "execute_tool");
    expect(tools).toHaveLength(2);
    const ok = tools.find((span) => span.attributes["gen_ai.tool.name"] === "lookup")!;
    const failed = tools.find((span) => span.attributes["gen_ai.tool.name"] === "broken")!;
    expect(ok.name).toBe("execute_tool lookup");
    expect(ok.attributes["gen_ai.tool.call.id"]).toBe("call-1");
    expect(ok.status.code).not.toBe(api.SpanStatusCode.ERROR);
    expect(ok.attributes["error.type"]).toBeUndefined();
    expect(ok.attributes["gen_ai.tool.call.arguments"]).toBeUndefined();
    expect(failed.name).toBe("execute_tool broken");
    expect(failed.attributes["gen_ai.tool.call.id"]).toBe("call-2");
    expect(failed.status.code).toBe(api.SpanStatusCode.ERROR);
    // A tool's error text is content: not exported unless recordContent is on.
    expect(failed.status.message).not.toContain("disk on fire");
    expect(failed.attributes["error.type"]).toBe("tool_error");

    expect(spans).toHaveLength(5);
    for (const child of [...chats, ...tools]) {
      expect(child.parentSpanContext?.spanId).toBe(run.spanContext().spanId);
      expect(child.spanContext().traceId).toBe(run.spanContext().traceId);
    }
    for (const span of spans) expect(durationMs(span)).toBeGreaterThanOrEqual(0);
  });

  it("ends the run span and the open model-call span with ERROR when the model call fails", async () => {
    const { exporter, tracer } = setup();
    const model = scriptedModel([
      { error: new ProviderError("model unavailable", { provider: "openai", status: 503 }) },
    ]);
    const observer = otelObserver({ tracer });
    await expect(
      agentLoop(model, [], initSession("system", "go"), { retry: false, onEvent: observer.onEvent }),
    ).rejects.toThrow("model unavailable");

    const spans = exporter.getFinishedSpans();
    expect(spans).toHaveLength(2);
    const run = spans.find((span) => span.attributes["gen_ai.operation.name"] === "invoke_agent")!;
    const chat = spans.find((span) => span.attributes["gen_ai.operation.name"] === "chat")!;
    expect(run.name).toBe("invoke_agent");
    expect(run.status.code).toBe(api.SpanStatusCode.ERROR);
    // Without recordContent the status says the type, never the error's text (it can quote content).
    expect(run.status.message).toBe("ProviderError (error text not recorded: recordContent is off)");
    expect(run.attributes["error.type"]).toBe("ProviderError");
    expect(run.attributes["simple_agent_loop.run.outcome"]).toBe("error");
    expect(chat.name).toBe("chat");
    expect(chat.status.code).toBe(api.SpanStatusCode.ERROR);
    expect(chat.attributes["error.type"]).toBe("ProviderError");
    expect(chat.parentSpanContext?.spanId).toBe(run.spanContext().spanId);
  });

  it("names a failure that is not an Error _OTHER", async () => {
    const { exporter, tracer } = setup();
    const model: InvokeModel = () => Promise.reject("the socket said no");
    await expect(
      agentLoop(model, [], initSession("system", "go"), { retry: false, onEvent: otelObserver({ tracer }) }),
    ).rejects.toBe("the socket said no");
    const spans = exporter.getFinishedSpans();
    expect(
      spans.map((span) => [
        span.attributes["gen_ai.operation.name"],
        span.attributes["error.type"],
        span.status.message,
      ]),
    ).toStrictEqual([
      ["chat", "_OTHER", "_OTHER (error text not recorded: recordContent is off)"],
      ["invoke_agent", "_OTHER", "_OTHER (error text not recorded: recordContent is off)"],
    ]);
  });

  it("gives a retried attempt its own failed span, and records tool content only when asked", async () => {
    const { exporter, tracer } = setup();
    const model = scriptedModel([
      { error: Object.assign(new Error("overloaded"), { retryable: true }) },
      [{ type: "tool_call", id: "c1", name: "lookup", input: { q: "x" } }],
      { role: "assistant", content: "ok" },
    ]);
    const stream = agentStream(model, [lookup], initSession("system", "go"), {
      retry: { initialDelayMs: 1, maxDelayMs: 1 },
      onEvent: otelObserver({ tracer, recordContent: true }),
    });
    await stream.result;

    const spans = exporter.getFinishedSpans();
    const chats = spans.filter((span) => span.attributes["gen_ai.operation.name"] === "chat");
    const tool = spans.find((span) => span.attributes["gen_ai.operation.name"] === "execute_tool")!;
    expect(tool.attributes["gen_ai.tool.call.arguments"]).toBe('{"q":"x"}');
    expect(tool.attributes["gen_ai.tool.call.result"]).toBe("found");
    expect(chats).toHaveLength(3);
    const failed = chats.filter((span) => span.status.code === api.SpanStatusCode.ERROR);
    expect(failed).toHaveLength(1);
    expect(failed[0]!.status.message).toContain("overloaded");
    expect(failed[0]!.attributes["error.type"]).toBe("Error");
    const run = spans.find((span) => span.attributes["gen_ai.operation.name"] === "invoke_agent")!;
    expect(run.status.code).not.toBe(api.SpanStatusCode.ERROR);
  });

  it("runs without error on the global API when no tracer provider is registered (no-op spans)", async () => {
    const observer = otelObserver();
    await agentLoop(twoToolRun(), [lookup, broken], initSession("system", "go"), { onEvent: observer });
    expect(typeof observer.onEvent).toBe("function");
  });
});

const byStart = (a: ReadableSpan, b: ReadableSpan): number =>
  startOrder.get(a.spanContext().spanId)! - startOrder.get(b.spanContext().spanId)!;
const ofOperation = (spans: ReadableSpan[], operation: string): ReadableSpan[] =>
  spans.filter((span) => span.attributes["gen_ai.operation.name"] === operation).sort(byStart);
const toMs = (time: [number, number]): number => time[0] * 1000 + time[1] / 1e6;
const childrenOf = (spans: ReadableSpan[], parent: ReadableSpan): ReadableSpan[] =>
  spans.filter((span) => span.parentSpanContext?.spanId === parent.spanContext().spanId).sort(byStart);

describe("otelObserver: content", () => {
  it("exports no content without recordContent: no prompt, answer, thinking, tool input, output or error text in any span", async () => {
    const secrets = [
      "SYSTEM-SECRET",
      "USER-SECRET",
      "THINKING-SECRET",
      "ANSWER-SECRET",
      "INPUT-SECRET",
      "OUTPUT-SECRET",
      "ERROR-SECRET",
    ];
    const leaky = tool({
      name: "leaky",
      description: "Leaks.",
      inputSchema: { type: "object" },
      handler: () => "OUTPUT-SECRET",
    });
    const failing = tool({
      name: "failing",
      description: "Fails.",
      inputSchema: { type: "object" },
      handler: () => {
        throw new Error("ERROR-SECRET in /home/user/.env");
      },
    });
    const model = (): InvokeModel =>
      scriptedModel([
        [
          { type: "thinking", content: "THINKING-SECRET" },
          { type: "tool_call", id: "c1", name: "leaky", input: { q: "INPUT-SECRET" } },
          { type: "tool_call", id: "c2", name: "failing", input: { q: "INPUT-SECRET" } },
        ],
        [{ role: "assistant", content: "ANSWER-SECRET" }],
      ]);
    for (const recordContent of [false, true]) {
      const { exporter, tracer } = setup();
      await agentLoop(model(), [leaky, failing], initSession("SYSTEM-SECRET", "USER-SECRET"), {
        onEvent: otelObserver({ tracer, recordContent }),
      });
      const exported = JSON.stringify(
        exporter.getFinishedSpans().map((span) => ({
          name: span.name,
          attributes: span.attributes,
          status: span.status,
          events: span.events,
          links: span.links,
        })),
      );
      const found = secrets.filter((secret) => exported.includes(secret));
      if (recordContent)
        expect(found).toEqual(
          expect.arrayContaining(["OUTPUT-SECRET", "ERROR-SECRET", "INPUT-SECRET", "ANSWER-SECRET"]),
        );
      else expect(found).toStrictEqual([]);
    }
  });

  it("bounds a failed span's status message", async () => {
    const { exporter, tracer } = setup();
    const huge = tool({
      name: "huge",
      description: "Fails loudly.",
      inputSchema: { type: "object" },
      handler: () => {
        throw new Error("x".repeat(100_000));
      },
    });
    const model = scriptedModel([
      [{ type: "tool_call", id: "c1", name: "huge", input: {} }],
      [{ role: "assistant", content: "ok" }],
    ]);
    await agentLoop(model, [huge], initSession("s", "u"), { onEvent: otelObserver({ tracer, recordContent: true }) });
    const failed = exporter.getFinishedSpans().find((span) => span.attributes["gen_ai.tool.name"] === "huge")!;
    expect(failed.status.message!.length).toBeLessThan(1100);
  });
});

describe("otelObserver: subagents, retries and failures", () => {
  it("nests each subagent run under the tool span of the call that started it, parallel calls apart", async () => {
    const { exporter, tracer } = setup();
    const inner = scriptedModel([
      [{ type: "tool_call", id: "inner-1", name: "lookup", input: {}, usage: { inputTokens: 7, outputTokens: 1 } }],
      { role: "assistant", content: "first", usage: { inputTokens: 9, outputTokens: 2 } },
      { role: "assistant", content: "second", usage: { inputTokens: 3, outputTokens: 1 } },
    ]);
    const researcher = subagentTool({
      name: "researcher",
      description: "Researches.",
      systemPrompt: "r",
      invokeModel: inner,
      tools: [lookup],
    });
    const model = scriptedModel([
      [
        { type: "tool_call", id: "p1", name: "researcher", input: { prompt: "x" } },
        { type: "tool_call", id: "p2", name: "researcher", input: { prompt: "y" } },
      ],
      { role: "assistant", content: "done" },
    ]);
    const observer = otelObserver({
      tracer,
      model: "big",
      provider: "openai",
      agents: { researcher: { model: "small" } },
    });
    await agentLoop(model, [researcher], initSession("system", "go"), { name: "main", onEvent: observer });

    const spans = exporter.getFinishedSpans();
    // Start times have millisecond precision: a parent and its first child may tie, so find runs by name.
    const main = spans.find((span) => span.name === "invoke_agent main");
    expect(
      ofOperation(spans, "invoke_agent")
        .filter((span) => span !== main)
        .map((span) => span.name),
    ).toEqual(["invoke_agent researcher", "invoke_agent researcher"]);
    const toolSpans = childrenOf(spans, main!).filter(
      (span) => span.attributes["gen_ai.operation.name"] === "execute_tool",
    );
    expect(toolSpans.map((span) => span.attributes["gen_ai.tool.call.id"])).toEqual(["p1", "p2"]);
    for (const [index, toolSpan] of toolSpans.entries()) {
      const nested = childrenOf(spans, toolSpan);
      expect(nested).toHaveLength(1);
      expect(nested[0]!.attributes).toMatchObject({
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "researcher",
        "gen_ai.request.model": "small",
        "gen_ai.provider.name": "openai",
      });
      expect(nested[0]!.attributes["simple_agent_loop.run.outcome"]).toBe("done");
      // Usage stays with the run that spent it (the two runs share the scripted model's turns).
      expect(nested[0]!.attributes["gen_ai.usage.input_tokens"]).toBe(index === 0 ? 7 + 3 : 9);
      // Each run's own spans sit under it, not under the other run or the parent's run.
      const own = childrenOf(spans, nested[0]!);
      expect(own.every((span) => span.spanContext().traceId === main!.spanContext().traceId)).toBe(true);
      expect(own.map((span) => span.name)).toEqual(
        index === 0 ? ["chat small", "execute_tool lookup", "chat small"] : ["chat small"],
      );
    }
    expect(main!.attributes["gen_ai.usage.input_tokens"]).toBeUndefined();
    expect(spans.filter((span) => span.name.startsWith("chat big"))).toHaveLength(2);
  });

  it("ends a subagent's spans when its call is abandoned before the subagent's run ends", async () => {
    const { exporter, started, tracer } = spanRecorder([recordStarts]);
    const hang = tool({
      name: "hang",
      description: "Never ends.",
      inputSchema: { type: "object" },
      handler: () => new Promise(() => undefined),
    });
    const sub = subagentTool({
      name: "sub",
      description: "Sub.",
      systemPrompt: "s",
      invokeModel: scriptedModel([[{ type: "tool_call", id: "h", name: "hang", input: {} }]]),
      tools: [hang],
    });
    const model = scriptedModel([
      [{ type: "tool_call", id: "p1", name: "sub", input: { prompt: "x" } }],
      { role: "assistant", content: "ok" },
    ]);
    await agentLoop(model, [{ ...sub, timeout: 30 }], initSession("system", "go"), {
      onEvent: otelObserver({ tracer }),
    });

    const ended = new Set(exporter.getFinishedSpans().map((span) => span.spanContext().spanId));
    expect(started.filter((id) => !ended.has(id))).toEqual([]);
    expect(ofOperation(exporter.getFinishedSpans(), "invoke_agent").map((span) => span.name)).toEqual([
      "invoke_agent",
      "invoke_agent sub",
    ]);
  });

  it("ends a call whose subagent paused for approval at the pause, and names the calls the run waits for", async () => {
    const { exporter, tracer } = setup();
    const dangerous = tool({
      name: "dangerous",
      description: "Needs approval.",
      inputSchema: { type: "object" },
      requireApproval: true,
      handler: () => "did it",
    });
    const sub = subagentTool({
      name: "sub",
      description: "Sub.",
      systemPrompt: "s",
      invokeModel: scriptedModel([
        [{ type: "tool_call", id: "q1", name: "dangerous", input: {} }],
        { role: "assistant", content: "sub done" },
      ]),
      tools: [dangerous],
    });
    const model = scriptedModel([
      [{ type: "tool_call", id: "p1", name: "sub", input: { prompt: "x" } }],
      { role: "assistant", content: "ok" },
    ]);
    const session = initSession("system", "go");
    await agentLoop(model, [sub], session, { onEvent: otelObserver({ tracer }) });

    let spans = exporter.getFinishedSpans();
    const parentRun = spans.find((span) => span.name === "invoke_agent");
    const subRun = spans.find((span) => span.name === "invoke_agent sub");
    expect(parentRun!.attributes["simple_agent_loop.run.outcome"]).toBe("paused");
    expect(parentRun!.attributes["simple_agent_loop.run.pending_tool_call_ids"]).toEqual(["p1"]);
    expect(subRun!.attributes["simple_agent_loop.run.pending_tool_call_ids"]).toEqual(["q1"]);
    const call = ofOperation(spans, "execute_tool")[0]!;
    expect(call.attributes["simple_agent_loop.tool.approval"]).toBe("pending");
    expect(call.status.code).not.toBe(api.SpanStatusCode.ERROR);

    exporter.reset();
    resolveApproval(session, "q1", { approved: true });
    await agentLoop(model, [sub], session, { onEvent: otelObserver({ tracer }) });
    spans = exporter.getFinishedSpans();
    expect(ofOperation(spans, "invoke_agent").map((span) => span.attributes["simple_agent_loop.run.outcome"])).toEqual([
      "done",
      "done",
    ]);
    const dangerousCall = spans.find((span) => span.name === "execute_tool dangerous")!;
    const subCall = spans.find((span) => span.name === "execute_tool sub")!;
    expect(dangerousCall.status.code).not.toBe(api.SpanStatusCode.ERROR);
    expect(childrenOf(spans, subCall).map((span) => span.name)).toEqual(["invoke_agent sub"]);
  });

  it("starts the repeat of a retried model call after the backoff, and makes no span for a repeat an abort prevented", async () => {
    const { exporter, tracer } = setup();
    const overloaded = (): Error => Object.assign(new Error("overloaded"), { retryable: true, retryAfterMs: 60 });
    const model = scriptedModel([{ error: overloaded() }, { role: "assistant", content: "ok" }]);
    await agentLoop(model, [], initSession("system", "go"), { onEvent: otelObserver({ tracer }) });

    const [failed, repeat] = ofOperation(exporter.getFinishedSpans(), "chat");
    expect(failed!.status.code).toBe(api.SpanStatusCode.ERROR);
    expect(repeat!.status.code).not.toBe(api.SpanStatusCode.ERROR);
    expect(toMs(repeat!.startTime) - toMs(failed!.endTime)).toBeGreaterThanOrEqual(55);
    // Its end is the model's answer, not the run's: it ends no later than the agent span (a bound on
    // its duration in milliseconds would measure the machine's load). The two ends may be the same
    // instant, read through the SDK's clock conversion: allow it a millisecond of rounding.
    const [agent] = ofOperation(exporter.getFinishedSpans(), "invoke_agent");
    expect(toMs(repeat!.endTime)).toBeLessThanOrEqual(toMs(agent!.endTime) + 1);

    exporter.reset();
    // Aborted during the backoff (when the retry is announced, not after a guessed time).
    const controller = new AbortController();
    const observer = otelObserver({ tracer });
    await agentLoop(scriptedModel([{ error: overloaded() }]), [], initSession("system", "go"), {
      signal: controller.signal,
      onEvent: (event) => {
        observer(event);
        if (event.type === "retry") controller.abort();
      },
    });
    const spans = exporter.getFinishedSpans();
    expect(ofOperation(spans, "chat")).toHaveLength(1);
    expect(ofOperation(spans, "invoke_agent")[0]!.attributes["simple_agent_loop.run.outcome"]).toBe("aborted");
  });

  it("marks a model call that overflowed the context, and gives the call after compaction its own span", async () => {
    const { exporter, tracer } = setup();
    let calls = 0;
    const model = (): { role: "assistant"; content: string }[] => {
      if (calls++ === 0) throw new ContextOverflowError("prompt is too long", { provider: "test", status: 400 });
      return [{ role: "assistant", content: "fits now" }];
    };
    const session = initSession("system", "old question");
    session.messages.push({ role: "assistant", content: "old answer" }, { role: "user", content: "new question" });
    const dropOldest = (current: typeof session, { reason }: { reason: string }): void => {
      if (reason === "overflow") current.messages.splice(1, 2);
    };
    await agentLoop(model, [], session, { compaction: dropOldest, onEvent: otelObserver({ tracer }) });

    const chats = ofOperation(exporter.getFinishedSpans(), "chat");
    expect(chats).toHaveLength(2);
    expect(chats[0]!.attributes["error.type"]).toBe("ContextOverflowError");
    expect(chats[0]!.status.code).toBe(api.SpanStatusCode.ERROR);
    expect(chats[1]!.status.code).not.toBe(api.SpanStatusCode.ERROR);
  });

  it("sums only reported usage on the run span: no zeros for counts no call reported", async () => {
    const { exporter, tracer } = setup();
    const model = scriptedModel([{ role: "assistant", content: "no usage here" }]);
    await agentLoop(model, [], initSession("system", "go"), { onEvent: otelObserver({ tracer }) });
    const withoutUsage = ofOperation(exporter.getFinishedSpans(), "invoke_agent")[0]!;
    expect(Object.keys(withoutUsage.attributes).filter((key) => key.startsWith("gen_ai.usage."))).toEqual([]);

    exporter.reset();
    await agentLoop(twoToolRun(), [lookup, broken], initSession("system", "go"), { onEvent: otelObserver({ tracer }) });
    const run = ofOperation(exporter.getFinishedSpans(), "invoke_agent")[0]!;
    expect(run.attributes).toMatchObject({
      "gen_ai.usage.input_tokens": 250,
      "gen_ai.usage.output_tokens": 25,
      "gen_ai.usage.cache_read.input_tokens": 80,
    });
    expect(run.attributes["gen_ai.usage.cache_creation.input_tokens"]).toBeUndefined();
  });

  it("never breaks the run when the tracer throws", async () => {
    const throwing = {
      startSpan: () => {
        throw new Error("exporter misconfigured");
      },
      startActiveSpan: () => {
        throw new Error("no");
      },
    } as unknown as api.Tracer;
    const session = await agentLoop(twoToolRun(), [lookup, broken], initSession("system", "go"), {
      onEvent: otelObserver({ tracer: throwing }),
    });
    expect(session.messages.at(-1)).toMatchObject({ role: "assistant", content: "done" });
  });

  it("records the response as gen_ai.output.messages and the conversation id, content only when asked", async () => {
    const { exporter, tracer } = setup();
    await agentLoop(twoToolRun(), [lookup, broken], initSession("system", "go"), {
      onEvent: otelObserver({ tracer, conversationId: "conv-1", recordContent: true }),
    });
    let chats = ofOperation(exporter.getFinishedSpans(), "chat");
    expect(JSON.parse(chats[0]!.attributes["gen_ai.output.messages"] as string)).toStrictEqual([
      {
        role: "assistant",
        parts: [
          { type: "tool_call", id: "call-1", name: "lookup", arguments: { q: "a" } },
          { type: "tool_call", id: "call-2", name: "broken", arguments: {} },
        ],
        finish_reason: "tool_call",
      },
    ]);
    expect(JSON.parse(chats[1]!.attributes["gen_ai.output.messages"] as string)).toStrictEqual([
      { role: "assistant", parts: [{ type: "text", content: "done" }], finish_reason: "stop" },
    ]);
    for (const span of [...chats, ...ofOperation(exporter.getFinishedSpans(), "invoke_agent")]) {
      expect(span.attributes["gen_ai.conversation.id"]).toBe("conv-1");
    }

    exporter.reset();
    await agentLoop(twoToolRun(), [lookup, broken], initSession("system", "go"), { onEvent: otelObserver({ tracer }) });
    chats = ofOperation(exporter.getFinishedSpans(), "chat");
    expect(chats.every((span) => span.attributes["gen_ai.output.messages"] === undefined)).toBe(true);
  });

  it("is a no-op, and importing it does not throw, when @opentelemetry/api is not installed", async () => {
    vi.resetModules();
    vi.doMock("@opentelemetry/api", () => {
      throw new Error("Cannot find package '@opentelemetry/api'");
    });
    try {
      const { otelObserver: observerWithoutApi } = await import("simple-agent-loop/otel");
      const observer = observerWithoutApi({ model: "m" });
      const session = await agentLoop(twoToolRun(), [lookup, broken], initSession("system", "go"), {
        onEvent: observer,
      });
      expect(session.messages.at(-1)).toMatchObject({ role: "assistant", content: "done" });
      expect(observer.name).toBe("noop");
    } finally {
      vi.doUnmock("@opentelemetry/api");
      vi.resetModules();
    }
  });
});

describe("otelObserver: who answered", () => {
  it("sets gen_ai.response.model and gen_ai.response.id from the model and responseId the adapter recorded", async () => {
    const { exporter, tracer } = setup();
    const observer = otelObserver({ tracer, model: "asked-model", provider: "scripted" });
    const model = scriptedModel([
      [
        {
          role: "assistant",
          content: "hi",
          model: "answered-model-2025",
          responseId: "resp_123",
          stopReason: "end_turn",
        },
      ],
    ]);
    await agentLoop(model, [], initSession("system", "go"), { onEvent: observer });
    const chat = exporter.getFinishedSpans().find((span) => span.attributes["gen_ai.operation.name"] === "chat")!;
    expect(chat.attributes).toMatchObject({
      "gen_ai.request.model": "asked-model",
      "gen_ai.response.model": "answered-model-2025",
      "gen_ai.response.id": "resp_123",
    });
  });
});
