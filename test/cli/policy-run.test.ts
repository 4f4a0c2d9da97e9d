// CLI runs under the approval policy, as a user runs them: real CLI processes against a fake model.
// --policy adds rules to the mode's; the terminal's prompt is the human ("always" adds an allow rule
// for the session); without a terminal (--json) the human denies; every decision is on its call.
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Session, ToolCallMessage } from "simple-agent-loop";
import { loadSession } from "simple-agent-loop/store";
import { runCli } from "./helpers.ts";
import { terminalFixture } from "./terminal-fixture.ts";

const fixture = terminalFixture("cli-policy");

const write = (path: string, id: string) => ({ name: "write", id, arguments: { path, content: `${path}\n` } });

function writePolicy(rules: unknown): string {
  const file = join(fixture.home(), "policy.json");
  writeFileSync(file, JSON.stringify({ rules }));
  return file;
}

const notesPolicy = [
  { id: "notes", tool: "write", input: { path: { glob: "notes/**" } }, action: "allow" },
  {
    id: "no-secrets",
    tool: "write",
    input: { path: { glob: "**/*.secret" } },
    action: "deny",
    reason: "secrets stay out",
  },
];

const run = (args: string[]) =>
  runCli(["--model", "test-model", ...args], { cwd: fixture.workspace(), env: fixture.environment() });

function jsonLines(stdout: string): Record<string, unknown>[] {
  return stdout
    .trimEnd()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

const decidedBy = (session: Session, id: string): unknown =>
  session.messages.find(
    (message): message is ToolCallMessage => "type" in message && message.type === "tool_call" && message.id === id,
  )?.approval?.decidedBy;

const resultOf = (session: Session, id: string): unknown =>
  session.messages.find((message) => "type" in message && message.type === "tool_result" && message.id === id);

describe("a CLI run under --policy, without a terminal", () => {
  it(
    "a rule allows, a rule denies (over an allow), no rule: the human is deny; each decision recorded and reported",
    {
      timeout: 90_000,
    },
    async () => {
      const policy = writePolicy(notesPolicy);
      fixture
        .server()
        .enqueue(
          { toolCalls: [write("notes/a.md", "w1"), write("notes/k.secret", "w2"), write("other.txt", "w3")] },
          { text: "done" },
        );
      const { code, stdout, stderr } = await run(["--json", "--policy", policy, "write the notes"]);
      expect(code).toBe(0);
      expect(existsSync(join(fixture.workspace(), "notes/a.md"))).toBe(true);
      expect(existsSync(join(fixture.workspace(), "notes/k.secret"))).toBe(false);
      expect(existsSync(join(fixture.workspace(), "other.txt"))).toBe(false);
      const lines = jsonLines(stdout);
      // Decided in parallel: in any order.
      const approvals = lines.filter((line) => line.type === "tool-approval");
      const reported = approvals.map((line) => [String(line.id), line.status, (line.decidedBy as { by: string }).by]);
      expect(reported.sort((a, b) => String(a[0]).localeCompare(String(b[0])))).toStrictEqual([
        ["w1", "approved", "rule"],
        ["w2", "denied", "rule"],
        ["w3", "denied", "policy"],
      ]);
      expect(stderr).toContain("write was denied: no one is there to approve this call");
      const sessionFile = String(lines[0]!.sessionFile);
      const session = await loadSession(sessionFile);
      expect(decidedBy(session, "w1")).toStrictEqual({ by: "rule", rule: "notes", action: "allow" });
      expect(decidedBy(session, "w2")).toStrictEqual({
        by: "rule",
        rule: "no-secrets",
        action: "deny",
        reason: "secrets stay out",
      });
      expect(resultOf(session, "w2")).toMatchObject({
        isError: true,
        output: 'Denied by rule "no-secrets": secrets stay out',
      });
      expect(decidedBy(session, "w3")).toStrictEqual({
        by: "policy",
        reason: "no one is there to approve this call (no rule allows write)",
      });
      expect(resultOf(session, "w3")).toMatchObject({
        isError: true,
        output: "Denied: no one is there to approve this call (no rule allows write)",
      });

      // --resume goes on under the policy given again; --yes allows the rest, never over a deny.
      fixture.server().enqueue({ toolCalls: [write("other.txt", "w4"), write("b.secret", "w5")] }, { text: "done" });
      const resumed = await run([
        "--json",
        "--yes",
        "--policy",
        policy,
        "--resume",
        String(lines[0]!.sessionId),
        "go on",
      ]);
      expect(resumed.code).toBe(0);
      const after = await loadSession(sessionFile);
      expect(decidedBy(after, "w4")).toStrictEqual({ by: "rule", rule: "--yes", action: "allow" });
      expect(decidedBy(after, "w5")).toMatchObject({ by: "rule", rule: "no-secrets", action: "deny" });
      expect(existsSync(join(fixture.workspace(), "other.txt"))).toBe(true);
      expect(existsSync(join(fixture.workspace(), "b.secret"))).toBe(false);
    },
  );

  it("a --code-mode program's calls are each decided by the policy and recorded", { timeout: 90_000 }, async () => {
    const policy = writePolicy(notesPolicy);
    const code = [
      'const kept = await tools.write({ path: "notes/p.md", content: "p" });',
      'let refused = "";',
      'try { await tools.write({ path: "loose.txt", content: "x" }); } catch (error) { refused = String(error); }',
      "return { kept, refused };",
    ].join("\n");
    fixture.server().enqueue({ toolCalls: [{ name: "run_code", id: "r1", arguments: { code } }] }, { text: "done" });
    const { code: exit, stdout } = await run(["--json", "--code-mode", "--policy", policy, "write by program"]);
    expect(exit).toBe(0);
    expect(existsSync(join(fixture.workspace(), "notes/p.md"))).toBe(true);
    expect(existsSync(join(fixture.workspace(), "loose.txt"))).toBe(false);
    const approvals = jsonLines(stdout).filter((line) => line.type === "tool-approval");
    const byName = approvals.map((line) => [line.name, line.status, (line.decidedBy as { rule?: string }).rule ?? ""]);
    expect(byName).toContainEqual(["run_code", "approved", "read-only"]);
    expect(byName).toContainEqual(["write", "approved", "notes"]);
    expect(byName).toContainEqual(["write", "denied", ""]);
    const session = await loadSession(String(jsonLines(stdout)[0]!.sessionFile));
    expect(JSON.stringify(resultOf(session, "r1"))).toContain("no one is there to approve this call");
  });

  it(
    "a malformed policy file ends the run before it starts: exit 1, naming the file, the rule and the field",
    {
      timeout: 60_000,
    },
    async () => {
      const bad = writePolicy([{ id: "x", tool: "write", action: "perhaps" }]);
      const failed = await run(["--json", "--policy", bad, "write"]);
      expect(failed.code).toBe(1);
      expect(failed.stderr).toContain(`--policy ${bad}: policy.rules[0] ("x").action must be "allow", "deny" or "ask"`);
      expect(jsonLines(failed.stdout).at(-1)).toMatchObject({ type: "error", outcome: "error" });
      const clash = writePolicy([{ id: "read-only", tool: "write", action: "allow" }]);
      const clashed = await run(["--policy", clash, "write"]);
      expect(clashed.code).toBe(1);
      expect(clashed.stderr).toContain('two rules have the id "read-only"');
      const missing = await run(["--policy", join(fixture.home(), "none.json"), "write"]);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toMatch(/--policy .*none\.json: .*ENOENT/);
      expect(fixture.server().bodies()).toHaveLength(0);
    },
  );
});

describe("the prompt as the policy's human", () => {
  it(
    "'always' allows the tool for the rest of the session: the second call is allowed by that rule, unasked",
    {
      timeout: 90_000,
    },
    async () => {
      fixture
        .server()
        .enqueue(
          { toolCalls: [write("a.txt", "w1")] },
          { toolCalls: [write("b.txt", "w2")] },
          { text: "both written" },
        );
      const terminal = fixture.start();
      await terminal.waitFor("> ");
      terminal.type("write two files\r");
      await terminal.waitFor("Allow write?");
      terminal.type("a");
      await terminal.waitFor("both written");
      expect(terminal.screen().split("Allow write?")).toHaveLength(2);
      expect(existsSync(join(fixture.workspace(), "b.txt"))).toBe(true);
      terminal.type("/exit\r");
      expect(await terminal.exited).toBe(0);
      const sessions = join(fixture.home(), "sessions");
      const file = readdirSync(sessions).find((name) => name.endsWith(".jsonl"))!;
      const session = await loadSession(join(sessions, file));
      expect(decidedBy(session, "w1")).toMatchObject({
        by: "human",
        reason: '"always": write is allowed for the rest of the session',
      });
      expect(decidedBy(session, "w2")).toStrictEqual({
        by: "rule",
        rule: "always:write",
        action: "allow",
        reason: 'the user answered "always" for write in this session',
      });
    },
  );

  it(
    "'always' holds for its session: after /clear or /resume of another the tool is asked about again",
    { timeout: 90_000 },
    async () => {
      fixture
        .server()
        .enqueue(
          { toolCalls: [write("a.txt", "w1")] },
          { text: "first written" },
          { toolCalls: [write("b.txt", "w2")] },
          { text: "second written" },
          { toolCalls: [write("c.txt", "w3")] },
          { text: "third written" },
        );
      const terminal = fixture.start();
      await terminal.waitFor("> ");
      terminal.type("write one\r");
      await terminal.waitFor("Allow write?");
      terminal.type("a");
      await terminal.waitFor("first written");
      terminal.type("/clear\r");
      const cleared = await terminal.waitFor(/is kept: \/resume (\S+)\)/);
      const first = /is kept: \/resume (\S+)\)/.exec(cleared)![1]!;
      terminal.type("write another\r");
      await terminal.waitFor(/is kept[^]*Allow write\?/);
      terminal.type("a");
      await terminal.waitFor("second written");
      terminal.type(`/resume ${first}\r`);
      await terminal.waitFor(/second written[^]*resumed/);
      terminal.type("and a third\r");
      await terminal.waitFor(/second written[^]*Allow write\?/);
      terminal.type("y");
      await terminal.waitFor("third written");
      expect(terminal.screen().split("Allow write?")).toHaveLength(4);
      expect(existsSync(join(fixture.workspace(), "c.txt"))).toBe(true);
    },
  );
});
