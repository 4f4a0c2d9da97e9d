// Without a terminal, a write where code runs from is denied whatever the flags say, and the
// model is told why; other writes go on as the flags allow.
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "./helpers.ts";
import { terminalFixture } from "./terminal-fixture.ts";

const fixture = terminalFixture("protected-writes");

describe("writes where code runs from, without a terminal", () => {
  it(
    "--yes writes an ordinary file but not a git hook, nor the CLI's trust list inside the workspace",
    { timeout: 60_000 },
    async () => {
      mkdirSync(join(fixture.workspace(), ".git", "hooks"), { recursive: true });
      const home = join(fixture.workspace(), "agent-home");
      fixture.server().enqueue(
        {
          toolCalls: [
            { name: "write", arguments: { path: "notes.txt", content: "fine\n" } },
            {
              name: "write",
              arguments: { path: "./.git/hooks/../hooks/pre-commit", content: "#!/bin/sh\ntouch PWNED\n" },
            },
            { name: "write", arguments: { path: "agent-home/trusted-mcp.json", content: "{}\n" } },
          ],
        },
        { text: "Done." },
      );
      const { code, stdout, stderr } = await runCli(["--model", "test-model", "--yes", "set up"], {
        cwd: fixture.workspace(),
        env: fixture.environment({ SIMPLE_AGENT_LOOP_HOME: home }),
      });
      expect(code, stderr).toBe(0);
      expect(readFileSync(join(fixture.workspace(), "notes.txt"), "utf8")).toBe("fine\n");
      expect(existsSync(join(fixture.workspace(), ".git", "hooks", "pre-commit"))).toBe(false);
      expect(existsSync(join(home, "trusted-mcp.json"))).toBe(false);
      const results = fixture
        .server()
        .bodies()[1]!
        .messages.filter((message) => message.role === "tool")
        .map((message) => String(message.content));
      expect(results[1]).toContain(
        "whose config and hooks run commands: asked every time; there is no terminal to ask on",
      );
      expect(results[2]).toContain("the CLI's own home");
      expect(stdout).toContain("✗ write ./.git/hooks/../hooks/pre-commit: Denied:");
    },
  );
});
