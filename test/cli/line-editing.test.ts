// Line editing at the prompt, in a pseudo-terminal: Tab completes commands and @paths inside the
// workspace, Up recalls what was typed in an earlier run (kept in a 0600 file), and an input goes
// on over several lines after a trailing backslash, Shift-Enter (each encoding) or Alt-Enter.
import { mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { terminalFixture } from "./terminal-fixture.ts";

const fixture = terminalFixture("cli-lines");

describe("line editing", () => {
  it("Tab completes a command and a workspace @path, never a path outside", { timeout: 90_000 }, async () => {
    writeFileSync(join(fixture.workspace(), "notes.txt"), "n\n");
    mkdirSync(join(fixture.workspace(), "src"));
    writeFileSync(join(fixture.workspace(), "src", "main.ts"), "m\n");
    fixture.server().enqueue({ text: "read it" });
    const terminal = fixture.start();
    await terminal.waitFor(/\n> $/);
    terminal.type("/he\t");
    await terminal.waitFor(/\n> \/help$/);
    terminal.type("\x15/co\t");
    // Ambiguous: the choices are listed at the first Tab, and the line stays as typed.
    await terminal.waitFor(/\n\/compact +\/cost +\/context\s*\n> \/co$/);
    terminal.type("\x15"); // Ctrl-U clears the line
    terminal.type("look at @../\tx @no\t");
    // Nothing from outside the workspace is offered (the Tab is left as typed); the file inside is.
    await terminal.waitFor(/\n> look at @\.\.\/\s*x @notes\.txt$/);
    terminal.type("\x15");
    terminal.type("see @sr\t");
    await terminal.waitFor(/\n> see @src\/$/);
    terminal.type("m\t");
    await terminal.waitFor(/\n> see @src\/main\.ts$/);
    terminal.type("\x15/exit\r");
    expect(await terminal.exited).toBe(0);
  });

  it(
    "Up recalls what was typed in an earlier run of this workspace, kept in a file only the user reads",
    { timeout: 90_000 },
    async () => {
      fixture.server().enqueue({ text: "first answer" });
      const first = fixture.start();
      await first.waitFor(/\n> $/);
      first.type("the first task\r");
      await first.waitFor(/first answer[^]*\n> $/);
      first.type("/exit\r");
      expect(await first.exited).toBe(0);
      const directory = join(fixture.home(), "history");
      const [file] = readdirSync(directory);
      expect(statSync(join(directory, file!)).mode & 0o777).toBe(0o600);
      expect(statSync(directory).mode & 0o777).toBe(0o700);
      const second = fixture.start();
      await second.waitFor(/\n> $/);
      second.type("\x1b[A");
      await second.waitFor(/\n> \/exit$/);
      second.type("\x1b[A");
      await second.waitFor(/\n> the first task$/);
      second.type("\x15/exit\r");
      expect(await second.exited).toBe(0);
    },
  );

  it(
    "goes on over several lines after a trailing backslash, Shift-Enter (kitty, modifyOtherKeys) and Alt-Enter",
    { timeout: 120_000 },
    async () => {
      fixture
        .server()
        .enqueue(
          { text: "got two lines" },
          { text: "got three lines" },
          { text: "got the xterm lines" },
          { text: "got the alt lines" },
        );
      const terminal = fixture.start();
      await terminal.waitFor(/\n> $/);
      terminal.type("line one\\\r");
      await terminal.waitFor(/\n… $/);
      terminal.type("line two\r");
      await terminal.waitFor(/got two lines[^]*\n> $/);
      // The kitty keyboard protocol's Shift-Enter.
      terminal.type("alpha\x1b[13;2u");
      await terminal.waitFor(/\n… $/);
      terminal.type("beta\\\r");
      await terminal.waitFor(/beta\\\n… $/);
      terminal.type("gamma\r");
      await terminal.waitFor(/got three lines[^]*\n> $/);
      // xterm's modifyOtherKeys Shift-Enter, which readline alone would half insert as "13~".
      terminal.type("one\x1b[27;2;13~");
      await terminal.waitFor(/\n… $/);
      terminal.type("two\r");
      await terminal.waitFor(/got the xterm lines[^]*\n> $/);
      // Alt/Option-Enter as most terminals send it (ESC CR).
      terminal.type("first\x1b\r");
      await terminal.waitFor(/\n… $/);
      terminal.type("second\x1b\r");
      await terminal.waitFor(/second\n… $/);
      terminal.type("third\r");
      await terminal.waitFor(/got the alt lines[^]*\n> $/);
      const tasks = fixture
        .server()
        .bodies()
        .map((body) => body.messages.at(-1)!.content);
      expect(tasks).toStrictEqual(["line one\nline two", "alpha\nbeta\ngamma", "one\ntwo", "first\nsecond\nthird"]);
      terminal.type("/exit\r");
      expect(await terminal.exited).toBe(0);
    },
  );
});
