import { describe, expect, it } from "vitest";
import {
  agentLoop,
  codeModeName,
  initSession,
  pendingApprovalEntries,
  resolveApproval,
  tool,
  type AgentEvent,
  type Session,
  type ToolResultMessage,
} from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import { expectEveryCallAnsweredOnce } from "../helpers.ts";

// Fresh tool objects each time: a resumed run gets new ones, as a new process would.
function tools(runs: string[]) {
  return [
    tool({
      name: "lookup",
      description: "Looks up.",
      inputSchema: { type: "object", properties: { key: { type: "string" } }, required: ["key"] },
      handler: (input) => (runs.push(`lookup ${String(input.key)}`), `value of ${String(input.key)}`),
    }),
    tool({
      name: "deploy",
      description: "Deploys.",
      inputSchema: { type: "object", properties: { service: { type: "string" } }, required: ["service"] },
      requireApproval: true,
      handler: (input) => (runs.push(`deploy ${String(input.service)}`), `deployed ${String(input.service)}`),
    }),
  ];
}

const program = [
  "const a = await tools.lookup({ key: 'a' });",
  "let deployed;",
  "try { deployed = await tools.deploy({ service: 'api' }); } catch (error) { deployed = 'refused: ' + error.message; }",
  "const b = await tools.lookup({ key: 'b' });",
  "return { a, deployed, b, at: Date.now() };",
].join("\n");

function resultOf(session: Session, id: string): ToolResultMessage | undefined {
  return session.messages.find(
    (message): message is ToolResultMessage => "type" in message && message.type === "tool_result" && message.id === id,
  );
}

describe("approvals mid-program", () => {
  for (const approved of [true, false]) {
    it(`pauses the code call, then ${approved ? "runs" : "rejects"} the call from a JSON copy; no call runs twice`, async () => {
      const runs: string[] = [];
      const first = scriptedModel([
        [{ type: "tool_call", id: "call_7", name: codeModeName, input: { code: program } }],
      ]);
      const paused = await agentLoop(first, tools(runs), initSession("s", "u"), { codeMode: true });
      expect(runs).toStrictEqual(["lookup a"]);
      expect(pendingApprovalEntries(paused).map((entry) => entry.path)).toStrictEqual(["call_7/call_7.2"]);
      expect(resultOf(paused, "call_7")).toBeUndefined();

      const copy = JSON.parse(JSON.stringify(paused)) as Session;
      resolveApproval(copy, "call_7.2", approved ? { approved: true } : { approved: false, reason: "not today" });
      const second = scriptedModel([[{ role: "assistant", content: "done" }]]);
      const done = await agentLoop(second, tools(runs), copy, { codeMode: true });
      expect(runs).toStrictEqual(approved ? ["lookup a", "deploy api", "lookup b"] : ["lookup a", "lookup b"]);
      const result = resultOf(done, "call_7")!;
      const output = result.output as { a: string; deployed: string; b: string; at: number };
      expect(output.a).toBe("value of a");
      expect(output.deployed).toBe(approved ? "deployed api" : "refused: Rejected: not today");
      expect(result.programCalls?.map((call) => call.id)).toStrictEqual(["call_7.1", "call_7.2", "call_7.3"]);
      // The clock of the rerun is the first start's.
      const nested = paused.messages.find(
        (message) => "type" in message && message.type === "tool_call" && message.id === "call_7",
      );
      const startedAt = (nested as { approval?: { nested?: Session } }).approval?.nested?.messages[0]?.ts;
      expect(output.at).toBe(Date.parse(startedAt!));
      expectEveryCallAnsweredOnce(done);
    });
  }

  it("ends the program with an error when the rerun diverges from the record", async () => {
    const runs: string[] = [];
    const first = scriptedModel([[{ type: "tool_call", id: "call_7", name: codeModeName, input: { code: program } }]]);
    const paused = await agentLoop(first, tools(runs), initSession("s", "u"), { codeMode: true });
    const copy = JSON.parse(JSON.stringify(paused)) as Session;
    // The program is edited between the runs: its first call differs.
    const call = copy.messages.find(
      (message) => "type" in message && message.type === "tool_call" && message.id === "call_7",
    ) as unknown as {
      input: { code: string };
    };
    call.input.code = program.replace("key: 'a'", "key: 'z'");
    resolveApproval(copy, "call_7/call_7.2", { approved: true });
    const done = await agentLoop(scriptedModel([[{ role: "assistant", content: "ok" }]]), tools(runs), copy, {
      codeMode: true,
    });
    const result = resultOf(done, "call_7")!;
    expect(result.isError).toBe(true);
    expect(result.output).toMatch(/diverged at call 1/);
    expect(runs).toStrictEqual(["lookup a"]);
  });
  it("keeps a code call's programCalls and logs while an earlier call of its turn waits for approval", async () => {
    const runs: string[] = [];
    const code = "console.log('looking'); return await tools.lookup({ key: 'a' });";
    const first = scriptedModel([
      [
        { type: "tool_call", id: "call_1", name: "deploy", input: { service: "api" } },
        { type: "tool_call", id: "call_2", name: codeModeName, input: { code } },
      ],
    ]);
    const paused = await agentLoop(first, tools(runs), initSession("s", "u"), { codeMode: true });
    expect(runs).toStrictEqual(["lookup a"]);
    const copy = JSON.parse(JSON.stringify(paused)) as Session;
    resolveApproval(copy, "call_1", { approved: true });
    const done = await agentLoop(scriptedModel([[{ role: "assistant", content: "ok" }]]), tools(runs), copy, {
      codeMode: true,
    });
    expect(runs).toStrictEqual(["lookup a", "deploy api"]);
    const result = resultOf(done, "call_2")!;
    expect(result.output).toBe("value of a");
    expect(result.programCalls).toStrictEqual([
      { id: "call_2.1", name: "lookup", input: { key: "a" }, output: "value of a" },
    ]);
    expect(result.logs).toStrictEqual(["looking"]);
    expectEveryCallAnsweredOnce(done);
  });

  it("names the code call as caller to the policy's links, the beforeToolCall hook and the tool-approval event", async () => {
    const runs: string[] = [];
    const asked: (string | undefined)[] = [];
    const hooked: (string | undefined)[] = [];
    const events: AgentEvent[] = [];
    const model = scriptedModel([
      [
        { type: "tool_call", id: "call_1", name: "lookup", input: { key: "direct" } },
        { type: "tool_call", id: "call_7", name: codeModeName, input: { code: program } },
      ],
      [{ role: "assistant", content: "ok" }],
    ]);
    const done = await agentLoop(model, tools(runs), initSession("s", "u"), {
      codeMode: true,
      approvalPolicy: {
        rules: [
          { id: "lookups", tool: "lookup", action: "allow" },
          { id: "programs", tool: codeModeName, action: "allow" },
        ],
        human: async (request) => (asked.push(request.caller), { approved: true }),
      },
      hooks: { beforeToolCall: ({ call, caller }) => void hooked.push(`${call.id} ${caller}`) },
      onEvent: (event) => events.push(event),
    });
    expect(runs).toStrictEqual(["lookup direct", "lookup a", "deploy api", "lookup b"]);
    expect(asked).toStrictEqual(["call_7"]);
    expect(hooked).toStrictEqual([
      "call_1 undefined",
      "call_7 undefined",
      "call_7.1 call_7",
      "call_7.2 call_7",
      "call_7.3 call_7",
    ]);
    const decisions = events.flatMap((event) =>
      event.type === "tool-approval" ? [[event.id, event.status, event.decidedBy.by, event.caller]] : [],
    );
    expect(decisions).toStrictEqual([
      ["call_1", "approved", "rule", undefined],
      ["call_7", "approved", "rule", undefined],
      ["call_7.1", "approved", "rule", "call_7"],
      ["call_7.2", "approved", "human", "call_7"],
      ["call_7.3", "approved", "rule", "call_7"],
    ]);
    expectEveryCallAnsweredOnce(done);
  });
});
