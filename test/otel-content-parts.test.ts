// Tool results with images and files on the OTel spans: recorded as the GenAI conventions' message
// parts when recordContent is on (the bytes left out unless recordMediaData keeps them), nothing when off.
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { describe, expect, it } from "vitest";
import {
  agentLoop,
  agentStream,
  filePart,
  imagePart,
  initSession,
  send,
  tool,
  toolContent,
  type ContentPart,
} from "simple-agent-loop";
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

  describe("user messages with parts", () => {
    const userParts: ContentPart[] = [{ type: "text", text: "what is on this page?" }, screenshot, report];

    async function spans(options: Omit<OtelObserverOptions, "tracer">) {
      const exporter = new InMemorySpanExporter();
      const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer("t");
      const session = send({ messages: [{ role: "system", content: "system" }] }, userParts);
      const model = scriptedModel([
        [{ type: "tool_call", id: "c1", name: "browse", input: {} }],
        { role: "assistant", content: "a page" },
        { role: "assistant", content: "the follow-up answered" },
      ]);
      const run = agentStream(model, [browse], session, { onEvent: otelObserver({ tracer, ...options }) });
      run.followUp({
        role: "user",
        content: [{ type: "text", text: "and this one?" }, imagePart(new Uint8Array(10), "image/gif")],
      });
      await run.result;
      const finished = exporter.getFinishedSpans();
      const chats = finished.filter((span) => span.attributes["gen_ai.operation.name"] === "chat");
      const agent = finished.find((span) => span.attributes["gen_ai.operation.name"] === "invoke_agent");
      return { chats: chats.map((span) => span.attributes), agent: agent!.attributes };
    }

    it("records the run's input on the agent span and each call's new user input on its chat span, as parts without bytes", async () => {
      const { chats, agent } = await spans({ recordContent: true });
      const expected = [
        {
          role: "user",
          parts: [
            { type: "text", content: "what is on this page?" },
            { type: "blob", modality: "image", mime_type: "image/png", content: "", size: 300 * 1024 },
            { type: "blob", modality: "document", mime_type: "application/pdf", content: "", size: 2048 },
          ],
        },
      ];
      expect(JSON.parse(agent["gen_ai.input.messages"] as string)).toStrictEqual(expected);
      expect(chats).toHaveLength(3);
      expect(JSON.parse(chats[0]!["gen_ai.input.messages"] as string)).toStrictEqual(expected);
      // The second call sees only the tool result new (on the tool's span), the third the follow-up.
      expect(chats[1]!["gen_ai.input.messages"]).toBeUndefined();
      expect(JSON.parse(chats[2]!["gen_ai.input.messages"] as string)).toStrictEqual([
        {
          role: "user",
          parts: [
            { type: "text", content: "and this one?" },
            { type: "blob", modality: "image", mime_type: "image/gif", content: "", size: 10 },
          ],
        },
      ]);
      for (const attributes of [agent, ...chats])
        for (const value of Object.values(attributes))
          expect(String(value)).not.toContain(screenshot.data.slice(0, 40));
    });

    it("keeps the bytes with recordMediaData, and records nothing without recordContent", async () => {
      const kept = await spans({ recordContent: true, recordMediaData: true });
      const parts = (
        JSON.parse(kept.agent["gen_ai.input.messages"] as string) as { parts: { content: string }[] }[]
      )[0]!.parts;
      expect(parts[1]!.content).toBe(screenshot.data);
      expect(parts[2]!.content).toBe(report.data);
      const off = await spans({ recordMediaData: true });
      for (const attributes of [off.agent, ...off.chats]) {
        expect(attributes["gen_ai.input.messages"]).toBeUndefined();
        expect(JSON.stringify(attributes)).not.toContain("what is on this page?");
      }
    });

    it("a plain text input is one text part; the run-start event's input stays out of its JSON", async () => {
      const exporter = new InMemorySpanExporter();
      const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer("t");
      const events: unknown[] = [];
      const observer = otelObserver({ tracer, recordContent: true });
      await agentLoop(scriptedModel([{ role: "assistant", content: "hi" }]), [], initSession("system", "hello"), {
        onEvent: (event) => {
          events.push(JSON.parse(JSON.stringify(event)));
          observer(event);
        },
      });
      const agent = exporter
        .getFinishedSpans()
        .find((span) => span.attributes["gen_ai.operation.name"] === "invoke_agent");
      expect(JSON.parse(agent!.attributes["gen_ai.input.messages"] as string)).toStrictEqual([
        { role: "user", parts: [{ type: "text", content: "hello" }] },
      ]);
      expect(events[0]).toStrictEqual({ type: "run-start" });
    });
  });
});
