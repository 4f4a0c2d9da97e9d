import { describe, expect, it } from "vitest";
import {
  defineAgent,
  initSession,
  runAgent,
  streamAgent,
  waitForTask,
  type AgentRunEvent,
  type Message,
} from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import { buildTool, deliveries, gate, taskIdOf } from "./task-fixtures.ts";
import { expectEveryCallAnsweredOnce } from "./helpers.ts";

describe("background tasks under runAgent and streamAgent", () => {
  it("whenIdle end: the call's one run-end carries runningTasks, the next call delivers the outcome once", async () => {
    const done = gate();
    const seen: Message[][] = [];
    const builder = defineAgent({
      name: "builder",
      systemPrompt: "b",
      invokeModel: scriptedModel([
        [{ type: "tool_call", id: "c1", name: "build", input: {} }],
        [{ role: "assistant", content: "Building." }],
        (session) => {
          seen.push(structuredClone(session.messages));
          return [{ role: "assistant", content: "Built." }];
        },
      ]),
      tools: [buildTool(() => done.promise)],
    });
    const session = initSession("s", "build it");
    const events: AgentRunEvent[] = [];
    for await (const event of streamAgent(builder, session, { backgroundTasks: { whenIdle: "end" } }))
      events.push(event);
    const id = taskIdOf(session);
    const ends = events.filter((event) => event.type === "run-end");
    expect(ends).toHaveLength(1);
    expect(ends[0]).toMatchObject({ type: "run-end", outcome: "done", runningTasks: [id] });

    done.resolve("green");
    await waitForTask(session, id);
    const later: AgentRunEvent[] = [];
    await runAgent(builder, session, { onEvent: (event) => later.push(event) });
    expect(seen[0]!.at(-1)).toMatchObject({ role: "user", deliversTask: id, agent: "builder" });
    expect(deliveries(session)).toHaveLength(1);
    const end = later.at(-1);
    expect(end).toMatchObject({ type: "run-end", outcome: "done" });
    expect(end !== undefined && "runningTasks" in end ? end.runningTasks : undefined).toBeUndefined();
  });

  it("a handoff while a task runs: the task goes on, the agent handed to gets its outcome, once; events reach the call", async () => {
    const done = gate();
    const billingSaw: Message[][] = [];
    const billing = defineAgent({
      name: "billing",
      systemPrompt: "b",
      invokeModel: scriptedModel([
        (session) => {
          billingSaw.push(structuredClone(session.messages));
          setTimeout(() => done.resolve("invoice built"), 20);
          return [{ role: "assistant", content: "The build runs; I will wait for it." }];
        },
        (session) => {
          billingSaw.push(structuredClone(session.messages));
          return [{ role: "assistant", content: "The invoice is built." }];
        },
      ]),
    });
    let triageCalls = 0;
    const triage = defineAgent({
      name: "triage",
      systemPrompt: "t",
      invokeModel: scriptedModel([
        () => {
          triageCalls++;
          return [
            { type: "tool_call", id: "c1", name: "build", input: {} },
            { type: "tool_call", id: "h1", name: "transfer_to_billing", input: {} },
          ];
        },
      ]),
      tools: [buildTool(() => done.promise)],
      handoffs: [billing],
    });
    const session = initSession("s", "bill me");
    const events: AgentRunEvent[] = [];
    await runAgent(triage, session, { onEvent: (event) => events.push(event) });
    const id = taskIdOf(session);

    expect(triageCalls).toBe(1);
    expect(events.filter((event) => event.type === "handoff")).toMatchObject([{ from: "triage", to: "billing" }]);
    // Started by triage's call, delivered to billing, whose next call got it: once.
    const delivered = deliveries(session);
    expect(delivered).toHaveLength(1);
    expect(delivered[0]).toMatchObject({
      role: "user",
      deliversTask: id,
      agent: "billing",
      content: expect.stringContaining("completed]\ninvoice built"),
    });
    expect(billingSaw[0]!.some((message) => "deliversTask" in message)).toBe(false);
    expect(billingSaw[1]!.at(-1)).toMatchObject({ deliversTask: id });
    expect(session.messages.at(-1)).toMatchObject({ content: "The invoice is built.", agent: "billing" });
    expect(events.filter((event) => event.type.startsWith("task-"))).toMatchObject([
      { type: "task-start", id },
      { type: "task-settled", id, status: "completed" },
    ]);
    const end = events.at(-1);
    expect(end).toMatchObject({ type: "run-end", outcome: "done" });
    expect(end !== undefined && "runningTasks" in end ? end.runningTasks : undefined).toBeUndefined();
    expectEveryCallAnsweredOnce(session);
  });
});
