// A code-mode program's call at the CLI's approval prompt, as a user sees it: a real CLI process in
// a pseudo-terminal (--code-mode) against a fake model whose program writes a file.
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ToolResultMessage } from "simple-agent-loop";
import { loadSession } from "simple-agent-loop/store";
import { terminalFixture } from "./terminal-fixture.ts";

const fixture = terminalFixture("cli-code-mode");

describe("the approval prompt for a program's call", () => {
  it(
    "names the program the call comes from (its code call and first line); approved, the program goes on",
    {
      timeout: 90_000,
    },
    async () => {
      const code = [
        "// write the greeting",
        "const written = await tools.write({ path: 'hello.txt', content: 'hi\\n' });",
        "return { written: true };",
      ].join("\n");
      fixture
        .server()
        .enqueue({ toolCalls: [{ name: "run_code", id: "prog_1", arguments: { code } }] }, { text: "program done" });
      const terminal = fixture.start(["--code-mode"]);
      await terminal.waitFor("> ");
      terminal.type("write hello\r");
      await terminal.waitFor("Allow write?");
      expect(terminal.screen()).toContain("↳ called by the program of prog_1: // write the greeting");
      terminal.type("y");
      await terminal.waitFor("program done");
      expect(existsSync(join(fixture.workspace(), "hello.txt"))).toBe(true);
      terminal.type("/exit\r");
      expect(await terminal.exited).toBe(0);
      const sessions = join(fixture.home(), "sessions");
      const file = readdirSync(sessions).find((name) => name.endsWith(".jsonl"))!;
      const session = await loadSession(join(sessions, file));
      const result = session.messages.find(
        (message): message is ToolResultMessage =>
          "type" in message && message.type === "tool_result" && message.id === "prog_1",
      );
      expect(result?.output).toStrictEqual({ written: true });
      expect(result?.programCalls?.map((call) => [call.id, call.name, call.isError === true])).toStrictEqual([
        ["prog_1.1", "write", false],
      ]);
    },
  );
});
