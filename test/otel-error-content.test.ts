import { SpanStatusCode } from "@opentelemetry/api";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { describe, expect, it } from "vitest";
import { agentLoop, initSession, tool, type InvokeModel } from "simple-agent-loop";
import { otelObserver } from "simple-agent-loop/otel";
import { scriptedModel } from "simple-agent-loop/testing";

function setup() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { exporter, tracer: provider.getTracer("test") };
}

const lookup = tool({ name: "lookup", description: "l", inputSchema: { type: "object" }, handler: () => "ok" });

// Every run here fails with an error whose text quotes content the model or a tool produced.
const failingRuns: [string, () => InvokeModel, number][] = [
  [
    "MaxIterationsError quoting the last call's input",
    () => scriptedModel([[{ type: "tool_call", id: "c1", name: "lookup", input: { password: "PW-SECRET-1" } }]]),
    1,
  ],
  [
    "InvalidModelResponseError quoting the model's message",
    () => () => [{ role: "robot", content: "PW-SECRET-2" }] as never,
    5,
  ],
  [
    "a provider error quoting the model call's failure",
    () => () => Promise.reject(new Error("upstream said PW-SECRET-3")),
    5,
  ],
];

describe("otelObserver with recordContent off: an error's description is its type and a fixed text", () => {
  for (const [name, model, maxIterations] of failingRuns) {
    it(name, async () => {
      const { exporter, tracer } = setup();
      await agentLoop(model(), [lookup], initSession("s", "u"), {
        maxIterations,
        retry: false,
        onEvent: otelObserver({ tracer }),
      }).catch(() => undefined);
      const spans = exporter.getFinishedSpans();
      expect(spans.length).toBeGreaterThan(0);
      const exported = JSON.stringify(
        spans.map((span) => ({ status: span.status, attributes: span.attributes, events: span.events })),
      );
      expect(exported).not.toMatch(/PW-SECRET/);
      const failed = spans.filter((span) => span.status.code === SpanStatusCode.ERROR);
      expect(failed.length).toBeGreaterThan(0);
      for (const span of failed) expect(span.status.message).toMatch(/not recorded/);
    });
  }

  it("with recordContent on, the error text is kept", async () => {
    const { exporter, tracer } = setup();
    await agentLoop(failingRuns[0]![1](), [lookup], initSession("s", "u"), {
      maxIterations: 1,
      onEvent: otelObserver({ tracer, recordContent: true }),
    }).catch(() => undefined);
    expect(JSON.stringify(exporter.getFinishedSpans().map((span) => span.status))).toMatch(/PW-SECRET-1/);
  });
});
