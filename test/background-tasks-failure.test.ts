import { describe, expect, it } from "vitest";
import {
  agentStream,
  backgroundTasks,
  defineAgent,
  initSession,
  isMaxIterationsError,
  isProviderError,
  ProviderError,
  resolveApproval,
  runAgent,
  tool,
  waitForTask,
  type AgentEvent,
  type Message,
} from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import { buildTool, deliveries, gate, taskIdOf } from "./task-fixtures.ts";
import { expectEveryCallAnsweredOnce } from "./helpers.ts";

// A run that ends badly (a model error, a limit) or pauses for approval while a background task
// runs, in process (agentStream, then runAgent on the same session): the task goes on, its record
// is written when it settles, every call keeps one result, and the outcome is delivered once.

async function drain(events: AsyncIterable<AgentEvent>): Promise<AgentEvent[]> {
  const seen: AgentEvent[] = [];
  for await (const event of events) seen.push(event);
  return seen;
}

const ping = tool({
  name: "ping",
  description: "Pings.",
  inputSchema: { type: "object", properties: {} },
  handler: () => "pong",
});

const ship = tool({
  name: "ship",
  description: "Ships.",
  inputSchema: { type: "object", properties: {} },
  requireApproval: true,
  handler: () => "shipped",
});

// The agent of the later run: answers, once per call.
const closer = defineAgent({
  name: "closer",
  systemPrompt: "c",
  invokeModel: async () => [{ role: "assistant", content: "Closed." }],
  tools: [buildTool(() => Promise.resolve("unused")), ping],
});

describe("background tasks when a run fails", () => {
  for (const failure of ["a model error", "maxIterations"] as const) {
    it(`${failure} while a task runs: the run fails, the task goes on and settles into the session; the next run delivers it once`, async () => {
      const done = gate();
      const session = initSession("s", "build it");
      const turns =
        failure === "a model error"
          ? [
              [{ type: "tool_call" as const, id: "c1", name: "build", input: {} }],
              { error: new ProviderError("bad request", { provider: "script", status: 400 }) },
            ]
          : [
              [{ type: "tool_call" as const, id: "c1", name: "build", input: {} }],
              [{ type: "tool_call" as const, id: "c2", name: "ping", input: {} }],
            ];
      const failed = await drain(
        agentStream(scriptedModel(turns), [buildTool(() => done.promise), ping], session, { maxIterations: 2 }),
      ).catch((error: unknown) => error);
      expect(failure === "a model error" ? isProviderError(failed) : isMaxIterationsError(failed)).toBe(true);
      expectEveryCallAnsweredOnce(session);
      const id = taskIdOf(session);
      expect(backgroundTasks(session)).toMatchObject([{ id, status: "running", delivered: false }]);
      // Still plain JSON, and valid to resume.
      expect(JSON.parse(JSON.stringify(session))).toStrictEqual(session);

      done.resolve("green");
      expect(await waitForTask(session, id, { timeoutMs: 10_000 })).toMatchObject({ status: "completed" });
      await runAgent(closer, session, { maxIterations: 5 });
      await runAgent(closer, session, { maxIterations: 5 });
      expectEveryCallAnsweredOnce(session);
      const delivered = deliveries(session);
      expect(delivered).toHaveLength(1);
      expect(delivered[0]).toMatchObject({ deliversTask: id, content: expect.stringContaining("completed]\ngreen") });
      expect(backgroundTasks(session)).toMatchObject([{ id, status: "completed", delivered: true, attempt: 1 }]);
    });
  }
});

describe("background tasks across an approval pause", () => {
  it("a task that settles while the run is paused is delivered once by the run that resumes it, after the approved call", async () => {
    const done = gate();
    const session = initSession("s", "build and ship");
    const seen: Message[][] = [];
    const model = scriptedModel([
      [{ type: "tool_call", id: "c1", name: "build", input: {} }],
      [{ type: "tool_call", id: "c2", name: "ship", input: {} }],
      (view) => {
        seen.push(structuredClone(view.messages));
        return [{ role: "assistant", content: "Shipped; waiting for the build." }];
      },
    ]);
    const tools = [buildTool(() => done.promise), ship];
    const first = await drain(agentStream(model, tools, session));
    expect(first.at(-1)).toMatchObject({ type: "run-end", outcome: "paused" });
    expect(session.messages.at(-1)).toMatchObject({ id: "c2", approval: { status: "pending" } });
    const id = taskIdOf(session);
    done.resolve("green");
    // Settled during the pause: the record is written, nothing is delivered yet.
    expect(await waitForTask(session, id, { timeoutMs: 10_000 })).toMatchObject({
      status: "completed",
      delivered: false,
    });
    expect(deliveries(session)).toHaveLength(0);

    resolveApproval(session, "c2", { approved: true });
    const second = await drain(agentStream(model, tools, session));
    expect(second.at(-1)).toMatchObject({ type: "run-end", outcome: "done" });
    expectEveryCallAnsweredOnce(session);
    expect(
      session.messages.find((message) => "type" in message && message.type === "tool_result" && message.id === "c2"),
    ).toMatchObject({ output: "shipped" });
    const delivered = deliveries(session);
    expect(delivered).toHaveLength(1);
    expect(delivered[0]).toMatchObject({ deliversTask: id, content: expect.stringContaining("completed]\ngreen") });
    // The model got the outcome once, after the approved call's result.
    expect(seen[0]!.at(-1)).toMatchObject({ deliversTask: id });
    expect(second.filter((event) => event.type === "task-settled")).toHaveLength(0);
  });
});
