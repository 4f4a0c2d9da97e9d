// wait_task gives a task's outcome as its own result, and a session holds at most one message
// that gives it (`deliversTask`): two waits in one response deliver it once, and a program, whose
// calls' results are no session messages, cannot take it (the outcome comes as a message, once,
// in this run and in a reloaded copy).
import { describe, expect, it } from "vitest";
import {
  agentLoop,
  backgroundTasks,
  codeModeName,
  initSession,
  taskTools,
  tool,
  type Message,
  type Session,
} from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import { expectEveryCallAnsweredOnce } from "./helpers.ts";
import { gate } from "./task-fixtures.ts";

const deliveries = (session: Session, id: string): Message[] =>
  session.messages.filter((message) => (message as { deliversTask?: string }).deliversTask === id);

function backgroundBuild(done: Promise<string>) {
  return tool({
    name: "build",
    description: "Builds.",
    inputSchema: { type: "object" },
    background: true,
    handler: () => done,
  });
}

const taskOf = (session: Session): string => backgroundTasks(session)[0]!.id;
const answer = (content: string) => [{ role: "assistant" as const, content }];

describe("wait_task delivers a task's outcome once", () => {
  it("two wait_task calls for one task in one response: one result carries the outcome, the other says it was given", async () => {
    const built = gate();
    const model = scriptedModel([
      [{ type: "tool_call", id: "b", name: "build", input: {} }],
      (session) => {
        setTimeout(() => built.resolve("built"), 50);
        const id = taskOf(session);
        return [
          { type: "tool_call", id: "w1", name: "wait_task", input: { id } },
          { type: "tool_call", id: "w2", name: "wait_task", input: { id } },
        ];
      },
      answer("done"),
      answer("done again"),
    ]);
    const session = await agentLoop(model, [backgroundBuild(built.promise), ...taskTools()], initSession("s", "u"));
    const id = taskOf(session);
    expect(deliveries(session, id)).toHaveLength(1);
    expect(backgroundTasks(session)[0]).toMatchObject({ status: "completed", delivered: true });
    expectEveryCallAnsweredOnce(session);
  });

  it("a program cannot take the outcome with wait_task: it comes as a message, once, here and in a reloaded copy", async () => {
    const built = gate();
    const model = scriptedModel([
      [{ type: "tool_call", id: "b", name: "build", input: {} }],
      (session) => {
        setTimeout(() => built.resolve("built"), 50);
        const code = `try { await tools.wait_task({ id: ${JSON.stringify(taskOf(session))} }); return "waited"; } catch (error) { return String(error); }`;
        return [{ type: "tool_call", id: "c", name: codeModeName, input: { code } }];
      },
      answer("done"),
      answer("done again"),
      answer("done a third time"),
    ]);
    const tools = [backgroundBuild(built.promise), ...taskTools()];
    const session = await agentLoop(model, tools, initSession("s", "u"), { codeMode: true });
    const id = taskOf(session);
    expect(deliveries(session, id)).toHaveLength(1);
    const copy = JSON.parse(JSON.stringify(session)) as Session;
    expect(backgroundTasks(copy)[0]).toMatchObject({ status: "completed", delivered: true });
    const again = await agentLoop(scriptedModel([answer("ok")]), tools, copy, { codeMode: true });
    expect(deliveries(again, id)).toHaveLength(1);
    expectEveryCallAnsweredOnce(again);
  });
});
