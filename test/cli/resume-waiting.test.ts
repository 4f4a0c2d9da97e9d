// A session a library run paused for approval (human "pause"), resumed in the CLI: the CLI's
// prompt is the human, so the waiting call is asked about there, with what the library's policy
// consulted (its rule's reason), before the new task reaches the model; without a terminal the
// call is denied. Real CLI processes against a fake model.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { agentLoop } from "simple-agent-loop";
import { closeSession, fileStore, loadSession } from "simple-agent-loop/store";
import { scriptedModel } from "simple-agent-loop/testing";
import { toolCallOf } from "../helpers.ts";
import { runCli } from "./helpers.ts";
import { terminalFixture } from "./terminal-fixture.ts";

const fixture = terminalFixture("resume-waiting");

// A CLI session (one task answered), then a library run in it whose write waits for a human:
// the policy's rule asked, and no one was there but "pause".
async function pausedCliSession(): Promise<{ id: string; file: string }> {
  fixture.server().enqueue({ text: "Hello." });
  const first = await runCli(["--model", "test-model", "--json", "hi"], {
    cwd: fixture.workspace(),
    env: fixture.environment(),
  });
  expect(first.code, first.stderr).toBe(0);
  const { sessionId, sessionFile } = JSON.parse(first.stdout.split("\n")[0]!) as {
    sessionId: string;
    sessionFile: string;
  };
  const session = await fileStore(join(fixture.home(), "sessions")).open(sessionId);
  const write = {
    name: "write",
    description: "Writes a file.",
    input_schema: { type: "object" as const },
    handler: () => "not run here",
  };
  await agentLoop(
    scriptedModel([
      [{ type: "tool_call", id: "lib_1", name: "write", input: { path: "paused.txt", content: "from the library\n" } }],
    ]),
    [write],
    session,
    {
      approvalPolicy: {
        rules: [{ id: "writes", tool: "write", action: "ask", reason: "a person checks every write" }],
        human: "pause",
      },
    },
  );
  await closeSession(session);
  expect(toolCallOf(await loadSession(sessionFile), "lib_1")?.approval).toMatchObject({
    status: "pending",
    consulted: [{ by: "rule", rule: "writes" }],
  });
  return { id: sessionId, file: sessionFile };
}

// The messages the model was sent in request `index`: role and the tool call a tool message answers.
function sent(index: number): string[] {
  const body = fixture.server().bodies()[index]!;
  return body.messages.map((message) =>
    message.role === "tool" ? `tool ${message.tool_call_id}` : `${message.role} ${JSON.stringify(message.content)}`,
  );
}

describe("--resume of a call a library run paused for approval", () => {
  it(
    "asks about it at the prompt, with the rule that asked; on y it runs, then the task reaches the model",
    { timeout: 120_000 },
    async () => {
      const { id, file } = await pausedCliSession();
      fixture.server().enqueue({ text: "Written, going on." });
      const terminal = fixture.start(["--resume", id]);
      await terminal.waitFor("> ");
      terminal.type("go on\r");
      await terminal.waitFor("Allow write?");
      const screen = terminal.screen();
      // The stored consulted record reaches the prompt: the rule's reason, and no "always" over a rule's ask.
      expect(screen).toContain("a person checks every write");
      expect(screen).not.toContain("[a] always");
      terminal.type("y");
      await terminal.waitFor("Written, going on.");
      terminal.type("/exit\r");
      expect(await terminal.exited).toBe(0);
      expect(readFileSync(join(fixture.workspace(), "paused.txt"), "utf8")).toBe("from the library\n");
      const session = await loadSession(file);
      expect(toolCallOf(session, "lib_1")?.approval).toMatchObject({
        status: "approved",
        decidedBy: { by: "human" },
        consulted: [{ by: "rule", rule: "writes", action: "ask", reason: "a person checks every write" }],
      });
      // The write's result comes before the new task: the model is never shown a call without its result.
      expect(sent(1).slice(-3)).toStrictEqual(["assistant null", "tool lib_1", 'user "go on"']);
    },
  );

  it("without a terminal the waiting call is denied, and the task still goes on", { timeout: 120_000 }, async () => {
    const { id, file } = await pausedCliSession();
    fixture.server().enqueue({ text: "Understood." });
    const resumed = await runCli(["--model", "test-model", "--json", "--resume", id, "go on"], {
      cwd: fixture.workspace(),
      env: fixture.environment(),
    });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(existsSync(join(fixture.workspace(), "paused.txt"))).toBe(false);
    const session = await loadSession(file);
    expect(toolCallOf(session, "lib_1")?.approval).toMatchObject({
      status: "denied",
      decidedBy: {
        by: "policy",
        reason: 'no one is there to approve this call (rule "writes" asks a human: a person checks every write)',
      },
    });
    expect(sent(1).slice(-2)).toStrictEqual(["tool lib_1", 'user "go on"']);
    expect(resumed.stderr).toContain("write was denied");
  });
});
