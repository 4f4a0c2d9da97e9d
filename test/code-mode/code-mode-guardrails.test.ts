// A toolOutput guardrail's verdict on a program's call is what the program gets: the program
// cannot read (and pass on, reshaped past the check of the code call's own output) what the
// guardrail blocked or redacted, and neither `programCalls` nor a paused program's record (in
// memory, in the store's log, after a resume elsewhere) holds it.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  agentLoop,
  codeModeName,
  initSession,
  resolveApproval,
  tool,
  type Session,
  type ToolResultMessage,
} from "simple-agent-loop";
import { closeSession, loadSession, openSession } from "simple-agent-loop/store";
import { scriptedModel } from "simple-agent-loop/testing";
import { expectEveryCallAnsweredOnce } from "../helpers.ts";
import { tempDir } from "../store/helpers.ts";
import { passwordGuardrails } from "../guardrails/password-guardrails.ts";

function tools() {
  return [
    tool({
      name: "deploy",
      description: "Deploys.",
      inputSchema: { type: "object" },
      requireApproval: true,
      handler: () => "deployed",
    }),
    tool({
      name: "read_env",
      description: "Env.",
      inputSchema: { type: "object" },
      handler: () => "DB_PASSWORD=hunter2",
    }),
  ];
}

// The program reverses what it read: a check of run_code's own output alone would let it through.
const reads = "let e; try { e = String(await tools.read_env({})); } catch (error) { e = 'refused: ' + error.message; }";
const reversed = "return e.split('').reverse().join('');";

function resultOf(session: Session, id: string): ToolResultMessage | undefined {
  return session.messages.find(
    (message): message is ToolResultMessage => "type" in message && message.type === "tool_result" && message.id === id,
  );
}

function holdsSecret(text: string): boolean {
  return text.includes("hunter2") || text.includes("2retnuh");
}

describe("code mode: a toolOutput guardrail's verdict on a program's call", () => {
  for (const action of ["block", "redact"] as const)
    it(`(${action}) is what the program gets and what programCalls records`, async () => {
      const session = initSession("s", "go");
      const model = scriptedModel([
        [{ type: "tool_call", id: "c", name: codeModeName, input: { code: `${reads}\n${reversed}` } }],
        [{ role: "assistant", content: "done" }],
      ]);
      await agentLoop(model, tools(), session, { codeMode: true, guardrails: passwordGuardrails(action) });
      expectEveryCallAnsweredOnce(session);
      expect(holdsSecret(JSON.stringify(session))).toBe(false);
      const result = resultOf(session, "c")!;
      expect(result.programCalls?.[0]).toMatchObject(
        action === "block"
          ? { id: "c.1", isError: true, output: expect.stringContaining("holds a password") }
          : { id: "c.1", output: "DB_PASSWORD=[secret]" },
      );
      const got = (result.output as string).split("").reverse().join("");
      if (action === "block") expect(got).toMatch(/^refused: .*holds a password/);
      else expect(got).toBe("DB_PASSWORD=[secret]");
    });

  it("holds across an approval inside the program: the paused record, the log and the resumed run never see it", async () => {
    const path = join(tempDir(), "program-held.jsonl");
    const first = await openSession(path);
    first.messages.push(...initSession("s", "ship it").messages);
    const program = `${reads}\nawait tools.deploy({});\n${reversed}`;
    const firstModel = scriptedModel([[{ type: "tool_call", id: "c", name: codeModeName, input: { code: program } }]]);
    await agentLoop(firstModel, tools(), first, { codeMode: true, guardrails: passwordGuardrails("block") });
    await closeSession(first);
    expect(first.messages.at(-1)).toMatchObject({ id: "c", approval: { status: "pending" } });
    expect(holdsSecret(JSON.stringify(first))).toBe(false);
    expect(holdsSecret(readFileSync(path, "utf8"))).toBe(false);

    // Another process: new objects, the session from the file, no guardrails given.
    const resumed = await openSession(path);
    resolveApproval(resumed, "c.2", { approved: true });
    const model = scriptedModel([[{ role: "assistant", content: "done" }]]);
    await agentLoop(model, tools(), resumed, { codeMode: true });
    await closeSession(resumed);
    expectEveryCallAnsweredOnce(resumed);
    expect(holdsSecret(JSON.stringify(resumed))).toBe(false);
    expect(holdsSecret(JSON.stringify(model.calls))).toBe(false);
    expect(holdsSecret(readFileSync(path, "utf8"))).toBe(false);
    expect(resultOf(resumed, "c")?.programCalls?.map((call) => call.isError === true)).toStrictEqual([true, false]);
    expect(await loadSession(path)).toStrictEqual(resumed);
  });
});
