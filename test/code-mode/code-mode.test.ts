import { describe, expect, it } from "vitest";
import {
  agentLoop,
  codeModeDeclarations,
  codeModeName,
  initSession,
  isAgentError,
  sessionMetrics,
  tool,
  type AgentEvent,
  type Session,
  type ToolResultMessage,
} from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import { expectEveryCallAnsweredOnce } from "../helpers.ts";

function lookupTool(calls: string[] = []) {
  return tool({
    name: "lookup",
    description: "Looks a record up by key.",
    inputSchema: {
      type: "object",
      properties: { key: { type: "string", description: "The record's key." } },
      required: ["key"],
    },
    handler: (input) => {
      calls.push(String(input.key));
      return { key: input.key, size: String(input.key).length };
    },
  });
}

function codeCall(code: string, id = "call_7") {
  return { type: "tool_call" as const, id, name: codeModeName, input: { code } };
}

function resultOf(session: Session, id: string): ToolResultMessage {
  const found = session.messages.find(
    (message): message is ToolResultMessage => "type" in message && message.type === "tool_result" && message.id === id,
  );
  if (found === undefined) throw new Error(`no result ${id}`);
  return found;
}

describe("code mode", () => {
  it("offers run_code after the run's own tools, with the tools' declarations in its description", async () => {
    const model = scriptedModel([[{ role: "assistant", content: "hi" }]]);
    await agentLoop(model, [lookupTool()], initSession("s", "u"), { codeMode: true });
    const names = model.toolsSeen[0]!.map((schema) => schema.name);
    expect(names).toStrictEqual(["lookup", "run_code"]);
    const runCode = model.toolsSeen[0]![1]!;
    expect(runCode.description).toContain(codeModeDeclarations([lookupTool()]));
    expect(runCode.input_schema).toMatchObject({ properties: { code: { type: "string" } }, required: ["code"] });
  });

  it("runs a program whose calls go through the tools, and only its result enters the session", async () => {
    const calls: string[] = [];
    const model = scriptedModel([
      [
        codeCall(
          "const keys = ['a', 'bb', 'ccc'];\nconst found = await Promise.all(keys.map((key) => tools.lookup({ key })));\nconsole.log('looked up', found.length);\nreturn found.filter((r) => r.size > 1).map((r) => r.key);",
        ),
      ],
      [{ role: "assistant", content: "bb and ccc" }],
    ]);
    const session = await agentLoop(model, [lookupTool(calls)], initSession("s", "u"), { codeMode: true });
    expect(calls).toStrictEqual(["a", "bb", "ccc"]);
    const result = resultOf(session, "call_7");
    expect(result.output).toStrictEqual(["bb", "ccc"]);
    expect(result.logs).toStrictEqual(["looked up 3"]);
    expect(result.programCalls).toStrictEqual([
      { id: "call_7.1", name: "lookup", input: { key: "a" }, output: { key: "a", size: 1 } },
      { id: "call_7.2", name: "lookup", input: { key: "bb" }, output: { key: "bb", size: 2 } },
      { id: "call_7.3", name: "lookup", input: { key: "ccc" }, output: { key: "ccc", size: 3 } },
    ]);
    // The model saw the output only: no program call of its own, no record.
    const sent = model.calls[1]!.messages.at(-1) as ToolResultMessage;
    expect(sent.output).toStrictEqual(["bb", "ccc"]);
    expectEveryCallAnsweredOnce(session);
    expect(JSON.parse(JSON.stringify(session))).toStrictEqual(session);
  });

  it("reports each program call's events with caller", async () => {
    const events: AgentEvent[] = [];
    const model = scriptedModel([
      [codeCall("return await tools.lookup({ key: 'k' })")],
      [{ role: "assistant", content: "ok" }],
    ]);
    await agentLoop(model, [lookupTool()], initSession("s", "u"), {
      codeMode: true,
      onEvent: (event) => events.push(event),
    });
    const toolEvents = events
      .filter((event) => event.type === "tool-execution-start" || event.type === "tool-execution-end")
      .map((event) => [event.type, event.id, "caller" in event ? event.caller : undefined]);
    expect(toolEvents).toStrictEqual([
      ["tool-execution-start", "call_7", undefined],
      ["tool-execution-start", "call_7.1", "call_7"],
      ["tool-execution-end", "call_7.1", "call_7"],
      ["tool-execution-end", "call_7", undefined],
    ]);
  });

  it("gives a program's error as the code call's error result, ending with its console output; the run goes on", async () => {
    const model = scriptedModel([
      [
        codeCall(
          "console.log('step 1');\nconst r = await tools.lookup({ key: 'x' });\nthrow new TypeError('bad ' + r.key);",
        ),
      ],
      [{ role: "assistant", content: "sorry" }],
    ]);
    const session = await agentLoop(model, [lookupTool()], initSession("s", "u"), { codeMode: true });
    const result = resultOf(session, "call_7");
    expect(result.isError).toBe(true);
    expect(result.output).toBe("Error: TypeError: bad x (line 3)\n\nconsole output:\nstep 1");
    expect(result.programCalls).toHaveLength(1);
  });

  it("exclusive: the tools are no longer offered, a direct call is an unknown tool, a program still calls them", async () => {
    const calls: string[] = [];
    const model = scriptedModel([
      [
        { type: "tool_call", id: "d", name: "lookup", input: { key: "direct" } },
        codeCall("return tools.lookup({ key: 'p' })"),
      ],
      [{ role: "assistant", content: "ok" }],
    ]);
    const session = await agentLoop(model, [lookupTool(calls)], initSession("s", "u"), {
      codeMode: { exclusive: true },
    });
    expect(model.toolsSeen[0]!.map((schema) => schema.name)).toStrictEqual(["run_code"]);
    expect(resultOf(session, "d")).toMatchObject({
      isError: true,
      output: expect.stringMatching(/unknown tool|not a tool|no tool/i),
    });
    expect(calls).toStrictEqual(["p"]);
  });

  it("refuses a bad option before the first model call, naming it", async () => {
    for (const [option, text] of [
      [{ tools: ["nope"] }, 'codeMode.tools: no tool "nope"'],
      [{ timeoutMs: -1 }, "codeMode.timeoutMs"],
      [{ memoryMb: 8 }, "codeMode.memoryMb"],
      [{ maxCalls: 1.5 }, "codeMode.maxCalls"],
      [{ exclusive: "yes" }, "codeMode.exclusive"],
      [{ colour: 1 }, "codeMode.colour"],
      ["on", "codeMode must be"],
    ] as const) {
      const model = scriptedModel([[{ role: "assistant", content: "never" }]]);
      const error = await agentLoop(model, [lookupTool()], initSession("s", "u"), {
        codeMode: option as never,
      }).catch((thrown: unknown) => thrown);
      expect(isAgentError(error), JSON.stringify(option)).toBe(true);
      expect((error as Error).message).toContain(text);
      expect(model.callCount).toBe(0);
    }
  });

  it("counts the program's calls in sessionMetrics and in run-end", async () => {
    let runEnd: AgentEvent | undefined;
    const model = scriptedModel([
      [codeCall("for (const key of ['a', 'b']) await tools.lookup({ key }); return 1")],
      [{ role: "assistant", content: "ok" }],
    ]);
    const session = await agentLoop(model, [lookupTool()], initSession("s", "u"), {
      codeMode: true,
      onEvent: (event) => {
        if (event.type === "run-end") runEnd = event;
      },
    });
    const { tools } = sessionMetrics(session);
    expect([tools.lookup?.calls, tools.run_code?.calls]).toStrictEqual([2, 1]);
    const live = runEnd?.type === "run-end" ? runEnd.metrics?.tools : undefined;
    expect([live?.lookup?.calls, live?.run_code?.calls]).toStrictEqual([2, 1]);
  });

  it("gives the program the time its code call entered the session as Date.now(), however late it starts", async () => {
    const slow = tool({
      name: "slow",
      description: "Takes a while.",
      inputSchema: { type: "object" },
      handler: () => new Promise((resolve) => setTimeout(() => resolve("late"), 50)),
    });
    const model = scriptedModel([
      [
        { type: "tool_call", id: "call_1", name: "slow", input: {} },
        codeCall("await tools.slow({}); return [Date.now(), new Date().toISOString()];"),
      ],
      [{ role: "assistant", content: "ok" }],
    ]);
    // One slot: the program starts only once the direct call is done, 50 ms or more later.
    const session = await agentLoop(model, [slow], initSession("s", "u"), { codeMode: true, maxParallelTools: 1 });
    const call = session.messages.find(
      (message) => "type" in message && message.type === "tool_call" && message.id === "call_7",
    )!;
    expect(resultOf(session, "call_7").output).toStrictEqual([Date.parse(call.ts!), call.ts]);
  });
});
