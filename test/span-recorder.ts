// The tracer the OpenTelemetry tests read spans from.
import type { Tracer } from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type SpanProcessor,
} from "@opentelemetry/sdk-trace-base";

/**
 * A tracer whose finished spans land in `exporter`, and the id of every span it started, in order
 * (`started`: a span started and never ended is one missing from the exporter). `processors` run
 * after the one that records `started`, before the exporter's.
 */
export function spanRecorder(processors: readonly SpanProcessor[] = []): {
  exporter: InMemorySpanExporter;
  started: string[];
  tracer: Tracer;
} {
  const exporter = new InMemorySpanExporter();
  const started: string[] = [];
  const provider = new BasicTracerProvider({
    spanProcessors: [
      {
        onStart: (span) => void started.push(span.spanContext().spanId),
        onEnd: () => undefined,
        forceFlush: async () => undefined,
        shutdown: async () => undefined,
      },
      ...processors,
      new SimpleSpanProcessor(exporter),
    ],
  });
  return { exporter, started, tracer: provider.getTracer("test") };
}
