// The permission prompt as a user meets it, in a pseudo-terminal: it shows all of what would run
// (or its start and end, with the rest one key away), it takes one key without Enter, and a write
// where code runs from is asked every time, whatever was allowed.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { terminalFixture } from "./terminal-fixture.ts";

const fixture = terminalFixture("cli-prompt");

const numbered = (count: number, line: (index: number) => string): string =>
  Array.from({ length: count }, (_, index) => line(index + 1)).join("\n");

describe("the permission prompt", () => {
  it(
    "shows every line of a 30-line command, the dangerous 28th included, and takes 'y' without Enter",
    { timeout: 90_000 },
    async () => {
      const command = numbered(30, (index) => (index === 28 ? "touch DANGER" : `echo line ${index}`));
      fixture.server().enqueue({ toolCalls: [{ name: "bash", arguments: { command } }] }, { text: "all done" });
      // "always" is offered for a sandboxed bash, or an unconfined one by choice, also where bwrap is missing.
      const terminal = fixture.start(["--sandbox", "off"]);
      await terminal.waitFor("> ");
      terminal.type("run it\r");
      const screen = await terminal.waitFor("Allow bash?");
      expect(screen).toContain("$ touch DANGER");
      expect(screen).toContain("$ echo line 30");
      expect(screen).toMatch(/\[y\] yes once · \[a\] always for bash · \[n\] no \(press a key\)/);
      // The command once: under a heading that names the tool only.
      expect(screen.split("touch DANGER")).toHaveLength(2);
      expect(screen).toMatch(/● bash\n/);
      terminal.type("y");
      await terminal.waitFor("all done");
      expect(existsSync(join(fixture.workspace(), "DANGER"))).toBe(true);
    },
  );

  it(
    "a long command shows its start and its end, and 'v' shows all of it before answering",
    { timeout: 90_000 },
    async () => {
      const command = numbered(200, (index) => (index === 150 ? "touch HIDDEN" : `echo line ${index}`));
      fixture.server().enqueue({ toolCalls: [{ name: "bash", arguments: { command } }] }, { text: "not run" });
      const terminal = fixture.start();
      await terminal.waitFor("> ");
      terminal.type("run it\r");
      const screen = await terminal.waitFor("Allow bash?");
      expect(screen).toContain("$ echo line 1\n");
      expect(screen).toContain("$ echo line 200");
      expect(screen).toContain("160 more lines here: press v to view all");
      expect(screen).not.toContain("touch HIDDEN");
      expect(screen).toContain("[v] view all");
      terminal.type("v");
      await terminal.waitFor("$ touch HIDDEN");
      await terminal.waitFor(/touch HIDDEN[^]*Allow bash\?/);
      terminal.type("n");
      await terminal.waitFor("Why?");
      terminal.type("too long\r");
      await terminal.waitFor("not run");
      expect(existsSync(join(fixture.workspace(), "HIDDEN"))).toBe(false);
    },
  );

  it("shows every line an edit removes and adds", { timeout: 90_000 }, async () => {
    const oldText = numbered(30, (index) => `old ${index}`);
    const newText = numbered(30, (index) => (index === 29 ? "DANGER()" : `new ${index}`));
    writeFileSync(join(fixture.workspace(), "a.txt"), `${oldText}\n`);
    fixture
      .server()
      .enqueue(
        { toolCalls: [{ name: "read", arguments: { path: "a.txt" } }] },
        { toolCalls: [{ name: "edit", arguments: { path: "a.txt", oldText, newText } }] },
        { text: "ok" },
      );
    const terminal = fixture.start();
    await terminal.waitFor("> ");
    terminal.type("edit it\r");
    const screen = await terminal.waitFor("Allow edit?");
    expect(screen).toContain("- old 30");
    expect(screen).toContain("+ DANGER()");
    expect(screen).toContain("+ new 30");
    terminal.type("n\r");
    await terminal.waitFor("Why?");
    terminal.type("\r");
    await terminal.waitFor("ok");
  });

  it("Enter and other keys do not answer; the prompt says which keys do", { timeout: 90_000 }, async () => {
    fixture
      .server()
      .enqueue({ toolCalls: [{ name: "write", arguments: { path: "x.txt", content: "x\n" } }] }, { text: "written" });
    const terminal = fixture.start();
    await terminal.waitFor("> ");
    terminal.type("write\r");
    await terminal.waitFor("Allow write?");
    terminal.type("\r");
    await terminal.waitFor("Press y, a or n.");
    terminal.type("q");
    await terminal.waitFor(/Press y, a or n\.[^]*Press y, a or n\./);
    expect(existsSync(join(fixture.workspace(), "x.txt"))).toBe(false);
    terminal.type("y");
    await terminal.waitFor("written");
    expect(readFileSync(join(fixture.workspace(), "x.txt"), "utf8")).toBe("x\n");
  });

  it(
    "asks every time about a write into .git, even with --allow write, and offers no 'always'",
    { timeout: 90_000 },
    async () => {
      mkdirSync(join(fixture.workspace(), ".git", "hooks"), { recursive: true });
      fixture.server().enqueue(
        { toolCalls: [{ name: "write", arguments: { path: "notes.txt", content: "fine\n" } }] },
        {
          toolCalls: [
            {
              name: "write",
              arguments: { path: "src/../.git/hooks/pre-commit", content: "#!/bin/sh\ntouch PWNED\n" },
            },
          ],
        },
        { text: "hook written" },
      );
      const terminal = fixture.start(["--allow", "write"]);
      await terminal.waitFor("> ");
      terminal.type("set up\r");
      const screen = await terminal.waitFor("Allow write?");
      expect(screen).toContain("✓ write notes.txt");
      expect(screen).toContain("whose config and hooks run commands: asked every time");
      expect(screen).toMatch(/\[y\] yes once · \[n\] no \(press a key\)/);
      terminal.type("a");
      await terminal.waitFor("Press y or n.");
      terminal.type("y");
      await terminal.waitFor("hook written");
      expect(readFileSync(join(fixture.workspace(), ".git", "hooks", "pre-commit"), "utf8")).toContain("touch PWNED");
    },
  );

  it(
    "Ctrl-C at the prompt interrupts the task without running the call; the prompt comes back",
    { timeout: 90_000 },
    async () => {
      fixture.server().enqueue({ toolCalls: [{ name: "bash", arguments: { command: "touch RAN" } }] });
      const terminal = fixture.start();
      await terminal.waitFor("> ");
      terminal.type("run\r");
      await terminal.waitFor("Allow bash?");
      terminal.type("\x03");
      await terminal.waitFor(/Interrupted[^]*\n> $/);
      expect(existsSync(join(fixture.workspace(), "RAN"))).toBe(false);
      terminal.type("\x04");
      expect(await terminal.exited).toBe(0);
    },
  );

  // The edit tool's own pre-check (`check(input)`) is what says a call would fail.
  it(
    "does not ask about an edit whose oldText is not in the file: the model gets the error",
    { timeout: 90_000 },
    async () => {
      writeFileSync(join(fixture.workspace(), "a.txt"), "hello\n");
      fixture
        .server()
        .enqueue(
          { toolCalls: [{ name: "read", arguments: { path: "a.txt" } }] },
          { toolCalls: [{ name: "edit", arguments: { path: "a.txt", oldText: "absent", newText: "x" } }] },
          { text: "I will read it again." },
        );
      const terminal = fixture.start();
      await terminal.waitFor("> ");
      terminal.type("edit\r");
      const screen = await terminal.waitFor("I will read it again.");
      expect(screen).not.toContain("Allow edit?");
      expect(screen).toMatch(/✗ edit a\.txt: .*oldText not found in a\.txt/);
      const toolMessage = fixture
        .server()
        .bodies()[2]!
        .messages.findLast((message) => message.role === "tool");
      expect(String(toolMessage?.content)).toContain("oldText not found in a.txt");
    },
  );

  // Parallel calls for the prompt are checked in their turn: after the ones before were answered and ran.
  it(
    "asks about two parallel edits in turn when the first creates the second's text, and both apply",
    { timeout: 90_000 },
    async () => {
      writeFileSync(join(fixture.workspace(), "a.txt"), "alpha\n");
      fixture.server().enqueue(
        { toolCalls: [{ name: "read", arguments: { path: "a.txt" } }] },
        {
          toolCalls: [
            { name: "edit", arguments: { path: "a.txt", oldText: "alpha", newText: "alpha beta" } },
            { name: "edit", arguments: { path: "a.txt", oldText: "beta", newText: "gamma" } },
          ],
        },
        { text: "both edited" },
      );
      const terminal = fixture.start();
      await terminal.waitFor("> ");
      terminal.type("edit twice\r");
      await terminal.waitFor("+ alpha beta");
      await terminal.waitFor("Allow edit?");
      terminal.type("y");
      await terminal.waitFor("+ gamma");
      await terminal.waitFor(/\+ gamma[^]*Allow edit\?/);
      terminal.type("y");
      await terminal.waitFor("both edited");
      expect(terminal.screen()).not.toContain("would fail");
      expect(readFileSync(join(fixture.workspace(), "a.txt"), "utf8")).toBe("alpha gamma\n");
    },
  );
});
