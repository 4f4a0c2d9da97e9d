import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  agentLoop,
  extendSession,
  pendingApprovals,
  resolveApproval,
  response,
  send,
  subagentTool,
  tool,
  type Message,
  type ModelMessage,
  type Session,
} from "simple-agent-loop";
import { closeSession, loadEntries, loadSession, openSession, type UpdateEntry } from "simple-agent-loop/store";
import { scriptedModel } from "simple-agent-loop/testing";
import { expectEveryCallAnsweredOnce } from "../helpers.ts";
import { tempDir } from "./helpers.ts";

const reasoning = (topic: string): string => `${topic}: ${"let me think about this, ".repeat(20)}`;

function start(session: Session): Session {
  extendSession(session, { role: "system", content: "You add numbers." });
  return send(session, "Add them all up.");
}

function adder(sessionPath: string) {
  const ran: string[] = [];
  const add = tool({
    name: "add",
    description: "Add two integers.",
    inputSchema: {
      type: "object",
      properties: { a: { type: "integer" }, b: { type: "integer" } },
      required: ["a", "b"],
    },
    handler: (input, { id }) => {
      // The call is in the file before its tool runs.
      const logged = readFileSync(sessionPath, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { message?: Message });
      if (
        !logged.some(
          ({ message }) =>
            message !== undefined && "id" in message && message.type === "tool_call" && message.id === id,
        )
      ) {
        throw new Error(`tool_call ${id} is not in the log while its tool runs`);
      }
      ran.push(id);
      return (input.a as number) + (input.b as number);
    },
  });
  return { add, ran };
}

// Each model call first checks that the file already holds exactly the session it is called with.
function checkedModel(sessionPath: string, turns: readonly ModelMessage[][]) {
  return scriptedModel(
    turns.map((messages) => async (session: Session) => {
      expect(await loadSession(sessionPath)).toStrictEqual(session);
      return messages;
    }),
  );
}

describe("a file-backed session round-trips through loadSession", () => {
  it("records a run with tool calls and compaction as it goes: loadSession equals the session in memory", async () => {
    const path = join(tempDir(), "run.jsonl");
    const session = start(await openSession(path));
    const { add, ran } = adder(path);
    const model = checkedModel(path, [
      [
        { type: "thinking", content: reasoning("first") },
        { type: "tool_call", id: "1", name: "add", input: { a: 1, b: 2 } },
        { type: "tool_call", id: "2", name: "add", input: { a: 3, b: 4 } },
      ],
      [
        { type: "thinking", content: reasoning("second") },
        { type: "tool_call", id: "3", name: "add", input: { a: 3, b: 7 } },
      ],
      [
        { type: "thinking", content: reasoning("third") },
        { type: "tool_call", id: "4", name: "add", input: { a: 10, b: 0 } },
      ],
      [{ role: "assistant", content: "10", stopReason: "end_turn", usage: { inputTokens: 120, outputTokens: 3 } }],
    ]);
    await agentLoop(model, [add], session, { compaction: { keepTurns: 1, batch: 1 } });
    expect(ran).toStrictEqual(["1", "2", "3", "4"]);
    expect(model.callCount).toBe(4);
    // Compaction cut the older thinking while the run went on.
    expect(
      session.messages.filter((message) => "compacted" in message && message.compacted === true).length,
    ).toBeGreaterThanOrEqual(2);
    expect(await loadSession(path)).toStrictEqual(session);
    await closeSession(session);
    expect(await loadSession(path)).toStrictEqual(session);

    // Each replacement records its index, the new message and the one it replaced.
    const entries = await loadEntries(path);
    const replacements = entries.filter((entry) => entry.type === "replace");
    expect(replacements.length).toBeGreaterThanOrEqual(2);
    const appended = entries.flatMap((entry) => (entry.type === "message" ? [entry.message as Message] : []));
    for (const entry of replacements) {
      expect(entry).toStrictEqual({
        type: "replace",
        index: expect.any(Number),
        reason: "compaction",
        ts: expect.any(String),
        message: expect.anything(),
        previous: expect.anything(),
      });
      const { index, message, previous } = entry as { index: number; message: Message; previous: Message };
      expect(message).toStrictEqual(session.messages[index]);
      expect(previous).toStrictEqual(appended[index]);
      expect(previous).toMatchObject({ type: "thinking", content: expect.stringMatching(/^(first|second): /) });
    }
  });

  it("records a paused approval; a second openSession resumes it from the file after resolveApproval", async () => {
    const path = join(tempDir(), "approval.jsonl");
    const deployed: string[] = [];
    const tools = [
      tool({
        name: "deploy",
        description: "Deploy a service.",
        inputSchema: { type: "object", properties: { service: { type: "string" } }, required: ["service"] },
        requireApproval: true,
        handler: (input) => {
          deployed.push(String(input.service));
          return `deployed ${String(input.service)}`;
        },
      }),
      tool({ name: "status", description: "Status.", inputSchema: { type: "object" }, handler: () => "all green" }),
    ];
    const first = start(await openSession(path));
    await agentLoop(
      scriptedModel([
        [
          { type: "thinking", content: reasoning("deploy") },
          { type: "tool_call", id: "s", name: "status", input: {} },
          { type: "tool_call", id: "d1", name: "deploy", input: { service: "api" } },
          { type: "tool_call", id: "d2", name: "deploy", input: { service: "web" } },
        ],
      ]),
      tools,
      first,
    );
    expect(pendingApprovals(first).map((call) => call.id)).toStrictEqual(["d1", "d2"]);
    // The pause marks are in the file the moment the run pauses: the process may exit now.
    expect(await loadSession(path)).toStrictEqual(first);
    await closeSession(first);

    // Later, elsewhere: a reviewer decides.
    const reviewed = await openSession(path);
    expect(reviewed).toStrictEqual(first);
    resolveApproval(reviewed, [
      { id: "d1", approved: true },
      { id: "d2", approved: false, reason: "web is frozen" },
    ]);
    expect(await loadSession(path)).toStrictEqual(reviewed);
    await closeSession(reviewed);

    // Later still: the run resumes from the file alone.
    const resumed = await openSession(path);
    const model = checkedModel(path, [[{ role: "assistant", content: "api deployed, web rejected" }]]);
    await agentLoop(model, tools, resumed);
    await closeSession(resumed);
    expect(deployed).toStrictEqual(["api"]);
    expect(model.callCount).toBe(1);
    expect(response(resumed)?.content).toBe("api deployed, web rejected");
    expectEveryCallAnsweredOnce(resumed);
    expect(await loadSession(path)).toStrictEqual(resumed);
    const updates = (await loadEntries(path)).filter((entry): entry is UpdateEntry => entry.type === "update");
    // A tool's requireApproval is an ask rule, consulted before the human who decided.
    const asked = [{ by: "rule", rule: "requireApproval", action: "ask" }];
    const at = expect.stringMatching(/^\d{4}-\d\d-\d\dT/);
    expect(updates.map((entry) => [entry.index, (entry.message as { approval?: unknown }).approval])).toStrictEqual([
      [4, { status: "pending", consulted: asked }],
      [5, { status: "pending", consulted: asked }],
      [
        5,
        {
          status: "denied",
          reason: "web is frozen",
          input: { service: "web" },
          decidedBy: { by: "human", reason: "web is frozen" },
          consulted: asked,
          at,
        },
      ],
      [4, { status: "approved", input: { service: "api" }, decidedBy: { by: "human" }, consulted: asked, at }],
    ]);
  });

  it("records results held behind a paused call (heldResult): on resume from the file they enter in call order, never rerun", async () => {
    const path = join(tempDir(), "held.jsonl");
    const statusRuns: string[] = [];
    const tools = [
      tool({
        name: "deploy",
        description: "Deploy.",
        inputSchema: { type: "object" },
        requireApproval: true,
        handler: () => "deployed",
      }),
      tool({
        name: "status",
        description: "Status.",
        inputSchema: { type: "object" },
        handler: (_input, { id }) => (statusRuns.push(id), "all green"),
      }),
    ];
    const first = start(await openSession(path));
    await agentLoop(
      scriptedModel([
        [
          { type: "tool_call", id: "d", name: "deploy", input: {} },
          { type: "tool_call", id: "s", name: "status", input: {} },
        ],
      ]),
      tools,
      first,
    );
    await closeSession(first);
    const paused = await loadSession(path);
    expect(paused).toStrictEqual(first);
    expect(paused.messages.at(-1)).toMatchObject({ type: "tool_call", id: "s", heldResult: { output: "all green" } });

    const resumed = await openSession(path);
    resolveApproval(resumed, "d", { approved: true });
    await agentLoop(scriptedModel([[{ role: "assistant", content: "done" }]]), tools, resumed);
    await closeSession(resumed);
    expect(statusRuns).toStrictEqual(["s"]);
    expect(
      resumed.messages
        .slice(-3)
        .map((message) => ("role" in message ? message.role : `${message.type} ${"id" in message ? message.id : ""}`)),
    ).toStrictEqual(["tool_result d", "tool_result s", "assistant"]);
    expect(await loadSession(path)).toStrictEqual(resumed);
  });

  it("opening an existing file and running again continues in the same file, after what was there", async () => {
    const path = join(tempDir(), "follow-up.jsonl");
    const { add } = adder(path);
    const first = start(await openSession(path));
    await agentLoop(
      scriptedModel([
        [{ type: "tool_call", id: "1", name: "add", input: { a: 1, b: 1 } }],
        [{ role: "assistant", content: "2" }],
      ]),
      [add],
      first,
    );
    await closeSession(first);
    const before = readFileSync(path);

    const second = await openSession(path);
    expect(second).toStrictEqual(first);
    send(second, "And plus 3?");
    const model = checkedModel(path, [
      [{ type: "tool_call", id: "2", name: "add", input: { a: 2, b: 3 } }],
      [{ role: "assistant", content: "5" }],
    ]);
    await agentLoop(model, [add], second);
    await closeSession(second);
    const after = readFileSync(path);
    expect(after.subarray(0, before.length).equals(before)).toBe(true);
    expect(await loadSession(path)).toStrictEqual(second);
    expect(second.messages.length).toBe(first.messages.length + 4);
  });

  // A resumed subagent works on a copy of the session kept in its parent call's `approval.nested`,
  // so the parent's record changes only through reported updates, and the file stays exact.
  it("records a subagent paused for approval and resumed", async () => {
    const path = join(tempDir(), "nested.jsonl");
    const deploy = tool({
      name: "deploy",
      description: "Deploy.",
      inputSchema: { type: "object" },
      requireApproval: true,
      handler: () => "deployed",
    });
    const ops = subagentTool({
      name: "ops",
      description: "Runs operations.",
      systemPrompt: "You run operations.",
      invokeModel: scriptedModel([
        [{ type: "tool_call", id: "inner", name: "deploy", input: {} }],
        [{ role: "assistant", content: "deployed it" }],
      ]),
      tools: [deploy],
    });
    const model = scriptedModel([
      [{ type: "tool_call", id: "outer", name: "ops", input: { prompt: "deploy" } }],
      [{ role: "assistant", content: "done" }],
    ]);
    const session = start(await openSession(path));
    await agentLoop(model, [ops], session);
    resolveApproval(session, "inner", { approved: true });
    await agentLoop(model, [ops], session);
    await closeSession(session);
    expect(await loadSession(path)).toStrictEqual(session);
  });
});
