import type { InMemorySpanExporter, ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { describe, expect, it } from "vitest";
import { agentLoop, codeModeName, initSession, resolveApproval, subagentTool, tool } from "simple-agent-loop";
import { otelObserver } from "simple-agent-loop/otel";
import { scriptedModel } from "simple-agent-loop/testing";
import { spanRecorder } from "./span-recorder.ts";

function setup(): { exporter: InMemorySpanExporter; started: string[]; observer: ReturnType<typeof otelObserver> } {
  const { exporter, started, tracer } = spanRecorder();
  return { exporter, started, observer: otelObserver({ tracer }) };
}

const lookup = tool({
  name: "lookup",
  description: "Looks up.",
  inputSchema: { type: "object", properties: { key: { type: "string" } }, required: ["key"] },
  handler: (input) => `value of ${String(input.key)}`,
});

const deploy = tool({
  name: "deploy",
  description: "Deploys.",
  inputSchema: { type: "object", properties: { service: { type: "string" } }, required: ["service"] },
  requireApproval: true,
  handler: (input) => `deployed ${String(input.service)}`,
});

function byId(spans: readonly ReadableSpan[], id: string): ReadableSpan {
  const found = spans.find((span) => span.attributes["gen_ai.tool.call.id"] === id);
  if (found === undefined) throw new Error(`no span for call ${id}`);
  return found;
}

function parentOf(span: ReadableSpan): string | undefined {
  return span.parentSpanContext?.spanId;
}

function codeCall(code: string) {
  return { type: "tool_call" as const, id: "call_7", name: codeModeName, input: { code } };
}

describe("otelObserver: code mode", () => {
  it("makes each of a program's calls a child span of its code call's span", async () => {
    const { exporter, started, observer } = setup();
    const model = scriptedModel([
      [
        { type: "tool_call", id: "call_1", name: "lookup", input: { key: "direct" } },
        codeCall(
          "const a = await tools.lookup({ key: 'a' }); const b = await tools.lookup({ key: 'b' }); return [a, b];",
        ),
      ],
      { role: "assistant", content: "done" },
    ]);
    await agentLoop(model, [lookup], initSession("s", "u"), { codeMode: true, onEvent: observer });

    const spans = exporter.getFinishedSpans();
    const run = spans.find((span) => span.name === "invoke_agent")!;
    const code = byId(spans, "call_7");
    expect(code.name).toBe("execute_tool run_code");
    expect(parentOf(code)).toBe(run.spanContext().spanId);
    expect(parentOf(byId(spans, "call_1"))).toBe(run.spanContext().spanId);
    for (const id of ["call_7.1", "call_7.2"]) {
      const call = byId(spans, id);
      expect(call.name).toBe("execute_tool lookup");
      expect(parentOf(call)).toBe(code.spanContext().spanId);
      expect(call.spanContext().traceId).toBe(run.spanContext().traceId);
    }
    const ended = new Set(spans.map((span) => span.spanContext().spanId));
    expect(started.filter((id) => !ended.has(id))).toStrictEqual([]);
  });

  it("nests a subagent a program calls under the program call's span", async () => {
    const { exporter, observer } = setup();
    const helper = subagentTool({
      name: "helper",
      description: "Helps.",
      systemPrompt: "h",
      invokeModel: scriptedModel([{ role: "assistant", content: "helped" }]),
    });
    const model = scriptedModel([
      [codeCall("return await tools.helper({ prompt: 'x' });")],
      { role: "assistant", content: "done" },
    ]);
    await agentLoop(model, [helper], initSession("s", "u"), { codeMode: true, onEvent: observer });

    const spans = exporter.getFinishedSpans();
    const programCall = byId(spans, "call_7.1");
    expect(parentOf(programCall)).toBe(byId(spans, "call_7").spanContext().spanId);
    const subRun = spans.find((span) => span.name === "invoke_agent helper")!;
    expect(parentOf(subRun)).toBe(programCall.spanContext().spanId);
  });

  it("ends a code call paused for one of its calls as paused, and nests the approved call under it when it resumes", async () => {
    const { exporter, started, observer } = setup();
    const program = "const a = await tools.lookup({ key: 'a' }); return [a, await tools.deploy({ service: 'api' })];";
    const session = initSession("s", "u");
    await agentLoop(scriptedModel([[codeCall(program)]]), [lookup, deploy], session, {
      codeMode: true,
      onEvent: observer,
    });
    let spans = exporter.getFinishedSpans();
    // The waiting call never started (as a direct call waiting at its gate); its code call ends paused.
    expect(byId(spans, "call_7").attributes["simple_agent_loop.tool.approval"]).toBe("pending");
    expect(parentOf(byId(spans, "call_7.1"))).toBe(byId(spans, "call_7").spanContext().spanId);
    expect(spans.some((span) => span.attributes["gen_ai.tool.call.id"] === "call_7.2")).toBe(false);
    let ended = new Set(spans.map((span) => span.spanContext().spanId));
    expect(started.filter((id) => !ended.has(id))).toStrictEqual([]);

    exporter.reset();
    started.length = 0;
    resolveApproval(session, "call_7.2", { approved: true });
    await agentLoop(scriptedModel([{ role: "assistant", content: "done" }]), [lookup, deploy], session, {
      codeMode: true,
      onEvent: observer,
    });
    spans = exporter.getFinishedSpans();
    // The recorded call is answered from the record (no span); the approved one runs under the code call.
    expect(spans.some((span) => span.attributes["gen_ai.tool.call.id"] === "call_7.1")).toBe(false);
    expect(parentOf(byId(spans, "call_7.2"))).toBe(byId(spans, "call_7").spanContext().spanId);
    ended = new Set(spans.map((span) => span.spanContext().spanId));
    expect(started.filter((id) => !ended.has(id))).toStrictEqual([]);
  });
});
