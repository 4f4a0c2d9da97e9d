import { describe, expect, it } from "vitest";
import {
  agentLoop,
  defineAgent,
  initSession,
  runAgent,
  subagentTool,
  tool,
  type AgentEvent,
  type AgentRunEvent,
  type InvokeModel,
  type ModelMessage,
} from "simple-agent-loop";
import { expectEveryCallAnsweredOnce } from "./helpers.ts";

const wait = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    });
  });

// A model that takes `ms` to answer with `answer`.
function slowModel(ms: number, answer: () => ModelMessage[]): InvokeModel {
  return async (_tools, _session, context) => {
    await wait(ms, context.signal);
    return answer();
  };
}

const step = tool({
  name: "step",
  description: "One step.",
  inputSchema: { type: "object", properties: { n: { type: "number" } } },
  handler: () => "ok",
});

describe("timeouts.runMs bounds the whole call", () => {
  it("runAgent: one deadline for the agents of a handoff chain, not a fresh runMs per agent", async () => {
    let billingAnswered = false;
    const billing = defineAgent({
      name: "billing",
      systemPrompt: "b",
      invokeModel: slowModel(500, () => {
        billingAnswered = true;
        return [{ role: "assistant", content: "done in billing" }];
      }),
    });
    const triage = defineAgent({
      name: "triage",
      systemPrompt: "t",
      invokeModel: slowModel(500, () => [{ type: "tool_call", id: "h1", name: "transfer_to_billing", input: {} }]),
      handoffs: [billing],
    });
    const session = initSession("s", "pay");
    const events: AgentRunEvent[] = [];
    const started = performance.now();
    await runAgent(triage, session, { timeouts: { runMs: 800 }, onEvent: (event) => events.push(event) });
    const took = performance.now() - started;
    // Each agent alone fits in 800 ms; the two together do not.
    expect(billingAnswered).toBe(false);
    expect(events.filter((event) => event.type === "run-end")).toMatchObject([
      { type: "run-end", outcome: "timeout", errorType: "TimeoutError" },
    ]);
    expect(took).toBeLessThan(5_000);
    expectEveryCallAnsweredOnce(session);
    expect(session.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "aborted" });
  });

  it("a subagent cannot outlive its parent's deadline, however long its own", async () => {
    let innerCalls = 0;
    const worker = subagentTool({
      name: "worker",
      description: "Works.",
      systemPrompt: "w",
      invokeModel: slowModel(100, () => [
        { type: "tool_call", id: `w${++innerCalls}`, name: "step", input: { n: innerCalls } },
      ]),
      tools: [step],
      loopOptions: { timeouts: { runMs: 60_000 } },
    });
    const events: AgentEvent[] = [];
    const session = await agentLoop(
      slowModel(10, () => [{ type: "tool_call", id: "p1", name: "worker", input: { prompt: "go" } }]),
      [worker],
      initSession("s", "go"),
      { timeouts: { runMs: 600 }, onEvent: (event) => events.push(event) },
    );
    expect(events.at(-1)).toMatchObject({ type: "run-end", outcome: "timeout" });
    expectEveryCallAnsweredOnce(session);
    const callsAtEnd = innerCalls;
    await wait(400);
    expect(innerCalls).toBe(callsAtEnd);
  });

  it("runAgent's subagents share the call's deadline too", async () => {
    let innerCalls = 0;
    const inner = defineAgent({
      name: "inner",
      systemPrompt: "i",
      invokeModel: slowModel(100, () => [
        { type: "tool_call", id: `i${++innerCalls}`, name: "step", input: { n: innerCalls } },
      ]),
      tools: [step],
    });
    const outer = defineAgent({
      name: "outer",
      systemPrompt: "o",
      invokeModel: slowModel(10, () => [{ type: "tool_call", id: "o1", name: "inner", input: { prompt: "go" } }]),
      tools: [subagentTool(inner)],
    });
    const events: AgentRunEvent[] = [];
    await runAgent(outer, initSession("s", "go"), {
      timeouts: { runMs: 600 },
      onEvent: (event) => events.push(event),
    });
    expect(events.at(-1)).toMatchObject({ type: "run-end", outcome: "timeout" });
    const callsAtEnd = innerCalls;
    await wait(400);
    expect(innerCalls).toBe(callsAtEnd);
  });
});
