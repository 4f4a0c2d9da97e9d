// Tool results with images and files on the OTel spans: recorded as the GenAI conventions' message
// parts when recordContent is on (the bytes left out unless recordMediaData keeps them), nothing when off.
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { describe, expect, it } from "vitest";
import { agentLoop, filePart, imagePart, initSession, tool, toolContent } from "simple-agent-loop";
import { otelObserver, type OtelObserverOptions } from "simple-agent-loop/otel";
import { scriptedModel } from "simple-agent-loop/testing";

const screenshotBytes = new Uint8Array(300 * 1024).fill(7);
const screenshot = imagePart(screenshotBytes, "image/png");
const report = filePart(new Uint8Array(2048).fill(1), "application/pdf", "report.pdf");
const browse = tool({
  name: "browse",
  description: "Screenshots a page.",
  inputSchema: { type: "object" },
  handler: () =>
    toolContent([
      { type: "text", text: "screenshot of /" },
      screenshot,
      report,
      { type: "image", url: "https://example.com/a.png", mediaType: "image/png" },
    ]),
});

async function toolSpanAttributes(options: Omit<OtelObserverOptions, "tracer">): Promise<Record<string, unknown>> {
  const exporter = new InMemorySpanExporter();
  const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer("test");
  const model = scriptedModel([
    [{ type: "tool_call", id: "c1", name: "browse", input: {} }],
    { role: "assistant", content: "done" },
  ]);
  await agentLoop(model, [browse], initSession("system", "go"), { onEvent: otelObserver({ tracer, ...options }) });
  const span = exporter.getFinishedSpans().find((each) => each.attributes["gen_ai.operation.name"] === "execute_tool");
  expect(span).toBeDefined();
  return span!.attributes;
}

describe("OTel and content parts", () => {
  it("records a result's parts as text, blob and uri parts, the bytes replaced by their size", async () => {
    const attributes = await toolSpanAttributes({ recordContent: true });
    const recorded = attributes["gen_ai.tool.call.result"] as string;
    expect(JSON.parse(recorded)).toStrictEqual([
      { type: "text", content: "screenshot of /" },
      { type: "blob", modality: "image", mime_type: "image/png", content: "", size: 300 * 1024 },
      { type: "blob", modality: "document", mime_type: "application/pdf", content: "", size: 2048 },
      { type: "uri", modality: "image", mime_type: "image/png", uri: "https://example.com/a.png" },
    ]);
    // No base64 anywhere on the span.
    for (const value of Object.values(attributes)) expect(String(value)).not.toContain(screenshot.data.slice(0, 40));
    expect(recorded.length).toBeLessThan(1000);
  });

  it("keeps the base64 with recordMediaData", async () => {
    const recorded = JSON.parse(
      (await toolSpanAttributes({ recordContent: true, recordMediaData: true }))["gen_ai.tool.call.result"] as string,
    ) as { content?: string }[];
    expect(recorded[1]).toStrictEqual({
      type: "blob",
      modality: "image",
      mime_type: "image/png",
      content: screenshot.data,
    });
    expect(recorded[2]!.content).toBe(report.data);
  });

  it("records nothing of the content when recordContent is off, recordMediaData or not", async () => {
    for (const attributes of [await toolSpanAttributes({}), await toolSpanAttributes({ recordMediaData: true })]) {
      expect(attributes["gen_ai.tool.call.result"]).toBeUndefined();
      expect(attributes["gen_ai.tool.call.arguments"]).toBeUndefined();
      expect(JSON.stringify(attributes)).not.toContain("screenshot of /");
    }
  });

  it("refuses a recordMediaData that is not a boolean", () => {
    expect(() => otelObserver({ recordMediaData: "yes" as unknown as boolean })).toThrow(/recordMediaData/);
  });
});
