// A toolOutput guardrail's verdict holds across a pause for approval: a result held behind a call
// waiting for a decision is checked before it is held, so what is held (in memory, in the store's
// log) is what may enter, and a resume elsewhere (fresh objects, loaded from the file) never sees
// or sends the raw output.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  agentLoop,
  defineAgent,
  initSession,
  resolveApproval,
  runAgent,
  subagentTool,
  tool,
  type Session,
  type ToolDefinition,
} from "simple-agent-loop";
import { closeSession, loadSession, openSession } from "simple-agent-loop/store";
import { scriptedModel } from "simple-agent-loop/testing";
import { expectEveryCallAnsweredOnce } from "../helpers.ts";
import { tempDir } from "../store/helpers.ts";
import { passwordGuardrails } from "./password-guardrails.ts";

const secret = "DB_PASSWORD=hunter2";

function tools(): ToolDefinition[] {
  return [
    tool({
      name: "deploy",
      description: "Deploy.",
      inputSchema: { type: "object" },
      requireApproval: true,
      handler: () => "deployed",
    }),
    tool({ name: "read_env", description: "Env.", inputSchema: { type: "object" }, handler: () => secret }),
  ];
}

const turn = [
  { type: "tool_call" as const, id: "d", name: "deploy", input: {} },
  { type: "tool_call" as const, id: "r", name: "read_env", input: {} },
];

function sentToModel(model: ReturnType<typeof scriptedModel>): string {
  return JSON.stringify(model.calls);
}

describe("a guardrail's verdict holds across a pause", () => {
  for (const action of ["block", "redact"] as const)
    it(`agentLoop (${action}): the held result is the guarded one, in memory, in the log and after a resume from the file`, async () => {
      const path = join(tempDir(), `held-${action}.jsonl`);
      const first = await openSession(path);
      first.messages.push(...initSession("s", "ship it").messages);
      const firstModel = scriptedModel([turn]);
      await agentLoop(firstModel, tools(), first, { guardrails: passwordGuardrails(action) });
      await closeSession(first);
      expect(JSON.stringify(first)).not.toContain("hunter2");
      expect(readFileSync(path, "utf8")).not.toContain("hunter2");
      expect(first.messages.at(-1)).toMatchObject({
        type: "tool_call",
        id: "r",
        heldResult: { guardrail: { name: "secrets", action } },
      });

      // Another process: new objects all round, the session from the file, no guardrails given.
      const resumed = await openSession(path);
      resolveApproval(resumed, "d", { approved: true });
      const model = scriptedModel([[{ role: "assistant", content: "done" }]]);
      await agentLoop(model, tools(), resumed);
      await closeSession(resumed);
      expectEveryCallAnsweredOnce(resumed);
      expect(sentToModel(model)).not.toContain("hunter2");
      expect(readFileSync(path, "utf8")).not.toContain("hunter2");
      const result = resumed.messages.find(
        (message) => "type" in message && message.type === "tool_result" && message.id === "r",
      );
      expect(result).toMatchObject({ guardrail: { name: "secrets", action } });
      expect(await loadSession(path)).toStrictEqual(resumed);
    });

  it("runAgent: the same for an agent's own guardrails", async () => {
    const agent = defineAgent({
      name: "ops",
      systemPrompt: "o",
      invokeModel: scriptedModel([turn, [{ role: "assistant", content: "done" }]]),
      tools: tools(),
      guardrails: passwordGuardrails("block"),
    });
    const session = initSession("s", "ship it");
    await runAgent(agent, session);
    expect(JSON.stringify(session)).not.toContain("hunter2");
    const copy = JSON.parse(JSON.stringify(session)) as Session;
    resolveApproval(copy, "d", { approved: true });
    await runAgent(agent, copy);
    expectEveryCallAnsweredOnce(copy);
    expect(JSON.stringify(copy)).not.toContain("hunter2");
  });

  it("a subagent's pause holds its own guarded result in the nested session", async () => {
    const inner = scriptedModel([turn, [{ role: "assistant", content: "inner done" }]]);
    const worker = subagentTool({
      name: "worker",
      description: "Works.",
      systemPrompt: "w",
      invokeModel: inner,
      tools: tools(),
      loopOptions: { guardrails: passwordGuardrails("block") },
    });
    const outer = scriptedModel([
      [{ type: "tool_call", id: "w1", name: "worker", input: { prompt: "ship" } }],
      [{ role: "assistant", content: "all done" }],
    ]);
    const session = await agentLoop(outer, [worker], initSession("s", "go"));
    expect(JSON.stringify(session)).not.toContain("hunter2");
    const copy = JSON.parse(JSON.stringify(session)) as Session;
    resolveApproval(copy, "d", { approved: true });
    await agentLoop(outer, [worker], copy);
    expectEveryCallAnsweredOnce(copy);
    expect(JSON.stringify(copy)).not.toContain("hunter2");
    expect(sentToModel(inner)).not.toContain("hunter2");
    expect(sentToModel(outer)).not.toContain("hunter2");
  });
});
