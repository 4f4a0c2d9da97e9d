import * as api from "@opentelemetry/api";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { describe, expect, it } from "vitest";
import { agentLoop, agentStream, initSession, tool } from "simple-agent-loop";
import { otelObserver } from "simple-agent-loop/otel";
import { scriptedModel } from "simple-agent-loop/testing";

function setup(): { exporter: InMemorySpanExporter; tracer: api.Tracer } {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { exporter, tracer: provider.getTracer("test") };
}

const durationMs = (span: ReadableSpan): number => span.duration[0] * 1000 + span.duration[1] / 1e6;

const lookup = tool({ name: "lookup", description: "Look up.", inputSchema: { type: "object" }, handler: () => "found" });
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
      { type: "tool_call", id: "call-2", name: "broken", input: {}, stopReason: "tool_use", usage: { inputTokens: 100, outputTokens: 20 } },
    ],
    [{ role: "assistant", content: "done", stopReason: "end_turn", usage: { inputTokens: 150, outputTokens: 5, cacheReadTokens: 80 } }],
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
    expect(failed.status.message).toContain("disk on fire");
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
    const model = scriptedModel([{ error: new Error("model unavailable") }]);
    const observer = otelObserver({ tracer });
    await expect(agentLoop(model, [], initSession("system", "go"), { retry: false, onEvent: observer.onEvent })).rejects.toThrow("model unavailable");

    const spans = exporter.getFinishedSpans();
    expect(spans).toHaveLength(2);
    const run = spans.find((span) => span.attributes["gen_ai.operation.name"] === "invoke_agent")!;
    const chat = spans.find((span) => span.attributes["gen_ai.operation.name"] === "chat")!;
    expect(run.name).toBe("invoke_agent");
    expect(run.status.code).toBe(api.SpanStatusCode.ERROR);
    expect(run.status.message).toContain("model unavailable");
    expect(run.attributes["error.type"]).toBe("_OTHER");
    expect(run.attributes["simple_agent_loop.run.outcome"]).toBe("error");
    expect(chat.name).toBe("chat");
    expect(chat.status.code).toBe(api.SpanStatusCode.ERROR);
    expect(chat.attributes["error.type"]).toBe("_OTHER");
    expect(chat.parentSpanContext?.spanId).toBe(run.spanContext().spanId);
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
    const run = spans.find((span) => span.attributes["gen_ai.operation.name"] === "invoke_agent")!;
    expect(run.status.code).not.toBe(api.SpanStatusCode.ERROR);
  });

  it("runs without error on the global API when no tracer provider is registered (no-op spans)", async () => {
    const observer = otelObserver();
    await agentLoop(twoToolRun(), [lookup, broken], initSession("system", "go"), { onEvent: observer });
    expect(typeof observer.onEvent).toBe("function");
  });
});
