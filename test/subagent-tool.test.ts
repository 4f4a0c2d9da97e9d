import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  agentLoop,
  initSession,
  pendingApprovals,
  resolveApproval,
  response,
  subagentTool,
  tool,
  type AgentEvent,
  type Session,
} from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import { expectEveryCallAnsweredOnce, withoutTs } from "./helpers.ts";

describe("subagentTool", () => {
  it("runs a fresh session per call, in parallel, forwards its events tagged with the parent call, returns the final text", async () => {
    let running = 0;
    let peak = 0;
    // Each subagent's model call holds until both run at once (a sleep would race the scheduler); a
    // fallback lets one that runs alone end, with the peak then failing.
    let bothRunning = (): void => undefined;
    const together = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 5_000);
      bothRunning = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    const inner = scriptedModel(
      [0, 1].map(() => async (session: Session) => {
        running++;
        peak = Math.max(peak, running);
        if (running === 2) bothRunning();
        await together;
        running--;
        return [
          { role: "assistant" as const, content: `summary of ${(session.messages[1] as { content: string }).content}` },
        ];
      }),
    );
    const summarize = subagentTool({
      name: "summarize",
      description: "Summarize.",
      systemPrompt: "Summarize.",
      invokeModel: inner,
      maxIterations: 1,
    });
    const outer = scriptedModel([
      [
        { type: "tool_call", id: "p1", name: "summarize", input: { prompt: "alpha" } },
        { type: "tool_call", id: "p2", name: "summarize", input: { prompt: "beta" } },
      ],
      [{ role: "assistant", content: "done" }],
    ]);
    const events: AgentEvent[] = [];
    const session = await agentLoop(outer, [summarize], initSession("s", "u"), {
      onEvent: (event) => events.push(event),
    });
    expect(withoutTs(session).slice(4, 6)).toStrictEqual([
      { type: "tool_result", id: "p1", output: "summary of alpha" },
      { type: "tool_result", id: "p2", output: "summary of beta" },
    ]);
    expect(peak).toBe(2);
    expect(inner.calls.map((call) => call.messages.length)).toStrictEqual([2, 2]);
    const forwarded = events.filter((event) => event.type === "tool-execution-update");
    expect(
      forwarded.filter((event) => event.id === "p1").map((event) => (event.progress as { type: string }).type),
    ).toContain("run-end");
  });

  it("returns structured output when given an output schema", async () => {
    const inner = scriptedModel([[{ role: "assistant", content: '{"score": 92}' }]]);
    const judge = subagentTool({
      name: "judge",
      description: "Judge.",
      systemPrompt: "Judge.",
      invokeModel: inner,
      output: z.object({ score: z.number() }),
    });
    const outer = scriptedModel([
      [{ type: "tool_call", id: "j", name: "judge", input: { prompt: "rate this" } }],
      [{ role: "assistant", content: "ok" }],
    ]);
    const session = await agentLoop(outer, [judge], initSession("s", "u"));
    expect(withoutTs(session)[3]).toStrictEqual({ type: "tool_result", id: "j", output: { score: 92 } });
  });

  it("a paused subagent pauses the parent; decisions go through the parent; the resume runs each tool once", async () => {
    const deployed: string[] = [];
    const deploy = tool({
      name: "deploy",
      description: "Deploy.",
      inputSchema: { type: "object", properties: { service: { type: "string" } } },
      requireApproval: true,
      handler: (input) => {
        deployed.push(String(input.service));
        return "deployed";
      },
    });
    const innerModel = scriptedModel([
      [{ type: "tool_call", id: "d1", name: "deploy", input: { service: "api" } }],
      [{ role: "assistant", content: "api is live" }],
    ]);
    const ops = subagentTool({
      name: "ops",
      description: "Operations.",
      systemPrompt: "You deploy.",
      invokeModel: innerModel,
      tools: [deploy],
    });
    const outerModel = scriptedModel([
      [{ type: "tool_call", id: "o1", name: "ops", input: { prompt: "deploy api" } }],
      [{ role: "assistant", content: "ops says: api is live" }],
    ]);
    const events: AgentEvent[] = [];
    const paused = await agentLoop(outerModel, [ops], initSession("s", "u"), {
      onEvent: (event) => events.push(event),
    });
    expect(events.at(-1)).toMatchObject({ type: "run-end", outcome: "paused", pending: [{ id: "o1", name: "ops" }] });
    expect(deployed).toStrictEqual([]);
    expect(pendingApprovals(paused).map((call) => [call.id, call.name])).toStrictEqual([["d1", "deploy"]]);

    const saved = JSON.parse(JSON.stringify(paused)) as Session;
    resolveApproval(saved, "d1", { approved: true });
    await agentLoop(outerModel, [ops], saved);
    expect(deployed).toStrictEqual(["api"]);
    expect(response(saved)?.content).toBe("ops says: api is live");
    expect(withoutTs(saved)[3]).toStrictEqual({ type: "tool_result", id: "o1", output: "api is live" });
    expect(outerModel.callCount).toBe(2);
    expectEveryCallAnsweredOnce(saved);

    await agentLoop(scriptedModel([[{ role: "assistant", content: "still fine" }]]), [ops], saved);
    expect(deployed).toStrictEqual(["api"]);
  });
});
