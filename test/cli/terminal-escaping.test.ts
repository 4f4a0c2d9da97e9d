// What reaches the terminal from a model, a tool or a workspace file is shown, never obeyed:
// control characters and Unicode format characters appear as visible escapes, in the streamed
// answer, the permission prompt, the tool call lines and the errors. Driven in a pseudo-terminal.
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { terminalFixture } from "./terminal-fixture.ts";

const fixture = terminalFixture("cli-escape");

describe("untrusted text on the terminal", () => {
  it("a command hidden behind backspaces is shown whole in the permission prompt", { timeout: 90_000 }, async () => {
    const command = `touch PWNED #${"\b".repeat(13)}ls -la`;
    fixture.server().enqueue({ toolCalls: [{ name: "bash", arguments: { command } }] }, { text: "ok" });
    const terminal = fixture.start();
    await terminal.waitFor("> ");
    terminal.type("list the files\r");
    const screen = await terminal.waitFor("Allow bash?");
    expect(screen).toContain(`$ touch PWNED #${"^H".repeat(13)}ls -la`);
    expect(screen).not.toMatch(/^\s*\$ ls -la\s*$/m);
    terminal.type("n");
    await terminal.waitFor("Why?");
    terminal.type("\r");
    await terminal.waitFor("ok");
    expect(existsSync(join(fixture.workspace(), "PWNED"))).toBe(false);
  });

  it(
    "streamed text cannot clear the screen, retitle it, rewrite a line or reorder it",
    { timeout: 90_000 },
    async () => {
      fixture.server().enqueue({ text: "first line\nSAFE\rEVIL \x1b[2J\x1b]0;title\x07 abc\u202Edef\ttab\nlast" });
      const terminal = fixture.start();
      await terminal.waitFor("> ");
      terminal.type("hello\r");
      const screen = await terminal.waitFor("last");
      expect(screen).toContain("first line\nSAFE^MEVIL ^[[2J^[]0;title^G abc<U+202E>def");
      expect(screen).toMatch(/def\s+tab\nlast/);
      // The header is still there: nothing cleared the screen.
      expect(screen).toContain("simple-agent-loop");
    },
  );

  it(
    "a path with a bidi override and an escape sequence is shown escaped in the prompt and the call line",
    { timeout: 90_000 },
    async () => {
      const path = "notes\u202Etxt.sh\x1b[1A";
      fixture
        .server()
        .enqueue(
          { toolCalls: [{ name: "write", arguments: { path, content: "echo \x1b[31mred\n" } }] },
          { text: "written" },
        );
      const terminal = fixture.start();
      await terminal.waitFor("> ");
      terminal.type("write it\r");
      const screen = await terminal.waitFor("Allow write?");
      expect(screen).toContain("● write notes<U+202E>txt.sh^[[1A");
      expect(screen).toContain("│ echo ^[[31mred");
      terminal.type("y");
      const after = await terminal.waitFor("written");
      expect(after).toContain("✓ write notes<U+202E>txt.sh^[[1A (1 line)");
    },
  );

  it("an error result and a provider's error message are shown escaped", { timeout: 90_000 }, async () => {
    writeFileSync(join(fixture.workspace(), "a.txt"), "a\n");
    fixture
      .server()
      .enqueue(
        { toolCalls: [{ name: "read", arguments: { path: "missing\x1b[2K\r.txt" } }] },
        { status: 400, message: "bad \x1b[31mrequest\r\u202Eoops" },
      );
    const terminal = fixture.start();
    await terminal.waitFor("> ");
    terminal.type("go\r");
    const screen = await terminal.waitFor("Error:");
    expect(screen).toContain("✗ read missing^[[2K^M.txt");
    await terminal.waitFor("oops");
    expect(terminal.screen()).toContain("bad ^[[31mrequest^M<U+202E>oops");
  });
});
