import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { agentLoop, initSession, sessionMetrics, tool, type ToolResultMessage } from "simple-agent-loop";
import { loadSession } from "simple-agent-loop/store";
import { tempDir } from "./helpers.ts";

const line = (message: unknown): string => JSON.stringify({ type: "message", message });
const call = (fields: Record<string, unknown> = {}) => ({
  type: "tool_call",
  id: "c1",
  name: "deploy",
  input: {},
  ...fields,
});
const pending = (fields: Record<string, unknown> = {}) => call({ approval: { status: "pending", ...fields } });

async function loadLines(messages: readonly unknown[]) {
  const path = join(tempDir(), "log.jsonl");
  writeFileSync(
    path,
    [{ role: "system", content: "s" }, { role: "user", content: "u" }, ...messages].map(line).join("\n") + "\n",
  );
  return { path, load: () => loadSession(path) };
}

describe("loadSession checks every field the loop later trusts, naming the line and field", () => {
  const refused: [string, unknown[], RegExp][] = [
    ["two unanswered calls with one id", [call(), call({ name: "other" })], /line|second|c1/],
    ["approval.nested a number", [pending({ nested: 5 })], /nested/],
    ["approval.nested a string", [pending({ nested: "x" })], /nested/],
    ["approval.nested [null]", [pending({ nested: [null] })], /nested/],
    ["approval.nested.messages holding null", [pending({ nested: { messages: [null] } })], /nested/],
    [
      "approval.nested holding two unanswered calls with one id",
      [pending({ nested: { messages: [{ role: "user", content: "u" }, call(), call()] } })],
      /nested/,
    ],
    ["approval not an object", [call({ approval: "approved" })], /approval/],
    ["approval with an unknown status", [call({ approval: { status: "granted" } })], /approval/],
    ["approval.reason not a string", [pending({ reason: 5 })], /reason/],
    [
      "heldResult carrying its own id",
      [call({ heldResult: { id: "c2", output: "x" } }), call({ id: "c2" })],
      /heldResult/,
    ],
    ["heldResult without an output", [call({ heldResult: { isError: true } })], /heldResult/],
    ["heldResult.isError not a boolean", [call({ heldResult: { output: "x", isError: "yes" } })], /isError/],
    ["a call's wireId not a string", [call({ wireId: 5 })], /wireId/],
    ["a call's inputError not a string", [call({ inputError: {} })], /inputError/],
    ["a tool result's waitMs negative", [call(), { type: "tool_result", id: "c1", output: "x", waitMs: -1 }], /waitMs/],
    [
      "usage counts as text",
      [{ role: "assistant", content: "a", usage: { inputTokens: "012", outputTokens: 1 } }],
      /usage/,
    ],
    ["a stopReason not a string", [{ role: "assistant", content: "a", stopReason: 5 }], /stopReason/],
    [
      "a turn's model not a string (prices are looked up by it)",
      [{ role: "assistant", content: "a", model: 5 }],
      /model/,
    ],
    ["a responseId not a string", [{ role: "assistant", content: "a", responseId: {} }], /responseId/],
    ["an answerFrom not a string", [{ role: "assistant", content: "a", answerFrom: ["c1"] }], /answerFrom/],
    ...(
      [
        ["a string", "over"],
        ["without spent", { budget: { tokens: 1 } }],
        ["spent.tokens as text", { budget: { tokens: 1 }, spent: { tokens: "5" } }],
        ["a negative spent.usd", { budget: { usd: 1 }, spent: { tokens: 5, usd: -2 } }],
      ] as const
    ).map(([what, overrun]): [string, unknown[], RegExp] => [
      `budgetExceeded as ${what} (the next run compares its budget with it)`,
      [{ role: "assistant", content: "a", budgetExceeded: overrun }],
      /budgetExceeded/,
    ]),
    ["an agent not a string", [{ role: "user", content: "u", agent: ["triage"] }], /agent/],
    ["a ts not a string", [{ role: "user", content: "u", ts: { at: 1 } }], /ts/],
    ["kept neither cleared nor offloaded", [call(), { type: "tool_result", id: "c1", output: "x", kept: 42 }], /kept/],
    ...(
      [
        ["a string", "abc"],
        ["an object", {}],
        ["calls as text", [{ calls: "5", usage: { inputTokens: 1, outputTokens: 1 } }]],
        ["usage counts as text", [{ calls: 1, usage: { inputTokens: "012", outputTokens: 1 } }]],
        ["negative usage", [{ calls: 1, usage: { inputTokens: -5, outputTokens: 1 } }]],
        ["no usage", [{ calls: 1 }]],
        ["a model not a string", [{ model: 5, calls: 1, usage: { inputTokens: 1, outputTokens: 1 } }]],
      ] as const
    ).map(([what, spent]): [string, unknown[], RegExp] => [
      `subagentUsage as ${what} (summed into the metrics and cost)`,
      [call(), { type: "tool_result", id: "c1", output: "x", subagentUsage: spent }],
      /subagentUsage/,
    ]),
    // A part is checked wherever a session holds one: a task's outcome and a program's calls too.
    ...(
      [
        ["with a blob reference", { type: "image", mediaType: "image/png", blob: "a".repeat(64) }],
        ["with base64 that is not canonical", { type: "image", mediaType: "image/png", data: "iVBORw0KGgp=" }],
        ["with a field no part has", { type: "text", text: "t", secret: "x" }],
      ] as const
    ).flatMap(([what, part]): [string, unknown[], RegExp][] => {
      const task = {
        id: "task_1",
        status: "completed",
        onRestart: "lost",
        attempt: 1,
        startedAt: "t",
        content: [part],
      };
      return [
        [
          `a task record's content part ${what}`,
          [call(), { type: "tool_result", id: "c1", output: "x", task }],
          /task|blob|base64|field/,
        ],
        [
          `a held task record's content part ${what}`,
          [pending(), call({ id: "c2", heldResult: { output: "x", task } })],
          /task|blob|base64|field/,
        ],
        [
          `a program call's content part ${what}`,
          [
            call(),
            {
              type: "tool_result",
              id: "c1",
              output: "x",
              programCalls: [{ id: "c1.1", name: "t", input: {}, output: "x", content: [part] }],
            },
          ],
          /programCalls|blob|base64|field/,
        ],
      ];
    }),
    [
      "a task record that is not one",
      [call(), { type: "tool_result", id: "c1", output: "x", task: "running" }],
      /task/,
    ],
    [
      "a task record with an unknown status",
      [
        call(),
        {
          type: "tool_result",
          id: "c1",
          output: "x",
          task: { id: "t", status: "paused", onRestart: "lost", attempt: 1, startedAt: "t" },
        },
      ],
      /status/,
    ],
  ];
  for (const [name, messages, mentions] of refused) {
    it(`refuses ${name}`, async () => {
      const { path, load } = await loadLines(messages);
      const error = await load().then(
        () => undefined,
        (failure: unknown) => failure,
      );
      expect(error).toMatchObject({ code: "malformed", path, line: expect.any(Number) as number });
      expect(String((error as Error).message)).toMatch(mentions);
      expect(String((error as Error).message)).toContain(`${path}:`);
    });
  }

  it("accepts what the loop writes: an id used again after its call was answered, a valid nested session, a held result", async () => {
    const { load } = await loadLines([
      call(),
      { type: "tool_result", id: "c1", output: "x", waitMs: 3 },
      { role: "assistant", content: "a", usage: { inputTokens: 1, outputTokens: 2 }, stopReason: "tool_use" },
      pending({
        nested: {
          messages: [{ role: "user", content: "u" }, call({ id: "n1", approval: { status: "pending" } })],
        },
      }),
      call({ id: "c2", heldResult: { output: "held", isError: false } }),
    ]);
    await expect(load()).resolves.toMatchObject({ messages: expect.any(Array) as unknown[] });
  });

  it("accepts the metadata the loop writes, and the metrics read it back as numbers", async () => {
    const { load } = await loadLines([
      call({ agent: "triage", model: "claude-sonnet-4-5" }),
      {
        type: "tool_result",
        id: "c1",
        output: "x",
        kept: "cleared",
        agent: "triage",
        subagentUsage: [{ model: "claude-haiku-4-5", calls: 2, usage: { inputTokens: 10, outputTokens: 4 } }],
      },
      { role: "assistant", content: "a", model: "claude-sonnet-4-5", responseId: "msg_1", agent: "billing" },
    ]);
    const session = await load();
    expect(sessionMetrics(session).subagents).toStrictEqual({
      modelCalls: 2,
      usage: { inputTokens: 10, outputTokens: 4, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
    });
  });
});

describe("ToolContext.spend holds a tool's counts to a model's usage rules", () => {
  const spends: [string, unknown, RegExp][] = [
    ["counts as text", { usage: { inputTokens: "012", outputTokens: 1 } }, /usage\.inputTokens/],
    ["a negative count", { usage: { inputTokens: 1, outputTokens: -1 } }, /usage\.outputTokens/],
    ["no output count", { usage: { inputTokens: 1 } }, /outputTokens/],
    ["calls not a count", { usage: { inputTokens: 1, outputTokens: 1 }, calls: 1.5 }, /calls/],
    ["a model not a string", { usage: { inputTokens: 1, outputTokens: 1 }, model: 5 }, /model/],
  ];
  for (const [name, spent, mentions] of spends)
    it(`refuses ${name}: the call's result is the error, nothing is counted`, async () => {
      let turn = 0;
      const session = await agentLoop(
        () =>
          turn++ === 0
            ? [{ type: "tool_call", id: "c1", name: "ask", input: {} }]
            : [{ role: "assistant", content: "done" }],
        [
          tool({
            name: "ask",
            description: "asks another model",
            inputSchema: { type: "object" },
            handler: (_input, context) => {
              context.spend?.(spent as never);
              return "answered";
            },
          }),
        ],
        initSession("s", "u"),
        { budget: { tokens: 1_000 } },
      );
      const result = session.messages.find(
        (message): message is ToolResultMessage => "type" in message && message.type === "tool_result",
      )!;
      expect(result.isError).toBe(true);
      expect(JSON.stringify(result.output)).toMatch(mentions);
      expect(result.subagentUsage).toBeUndefined();
      expect(sessionMetrics(session).subagents).toBeUndefined();
    });
});
