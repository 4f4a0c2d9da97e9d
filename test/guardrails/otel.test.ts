import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { expect, it } from "vitest";
import { agentLoop, initSession } from "simple-agent-loop";
import { otelObserver } from "simple-agent-loop/otel";
import { scriptedModel } from "simple-agent-loop/testing";

it("every guardrail verdict is a span under the run span; a blocked run says so", async () => {
  const exporter = new InMemorySpanExporter();
  const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer("test");
  await agentLoop(scriptedModel([{ role: "assistant", content: "the secret" }]), [], initSession("s", "hi"), {
    guardrails: {
      input: [{ name: "polite", check: () => ({ action: "allow" }) }],
      output: [
        {
          name: "leaks",
          check: ({ text }) =>
            text?.includes("secret") === true ? { action: "block", message: "a secret" } : { action: "allow" },
        },
      ],
    },
    onEvent: otelObserver({ tracer }),
  });
  const spans = exporter.getFinishedSpans();
  const run = spans.find((span) => span.name === "invoke_agent")!;
  expect(run.attributes["simple_agent_loop.run.outcome"]).toBe("blocked");
  const guardrails = spans.filter((span) => span.name.startsWith("guardrail "));
  expect(
    guardrails.map((span) => [span.name, span.attributes, span.parentSpanContext?.spanId === run.spanContext().spanId]),
  ).toStrictEqual([
    [
      "guardrail polite",
      {
        "simple_agent_loop.guardrail.name": "polite",
        "simple_agent_loop.guardrail.kind": "input",
        "simple_agent_loop.guardrail.action": "allow",
      },
      true,
    ],
    [
      "guardrail leaks",
      {
        "simple_agent_loop.guardrail.name": "leaks",
        "simple_agent_loop.guardrail.kind": "output",
        "simple_agent_loop.guardrail.action": "block",
        "simple_agent_loop.guardrail.message": "a secret",
      },
      true,
    ],
  ]);
});
