import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
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
});
