// What the user sees of a bash command's output: the last lines when it succeeds, all of them
// (up to a cap) when it fails, never its control characters.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { commandOutputLines } from "../../src/cli/command-output.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./fake-openai.ts";
import { cliEnvironment, runCli, tempDirectory } from "./helpers.ts";

let server: FakeOpenAI;
let workspace: ReturnType<typeof tempDirectory>;
let home: ReturnType<typeof tempDirectory>;

beforeEach(async () => {
  server = await startFakeOpenAI();
  workspace = tempDirectory("command-output-ws-");
  home = tempDirectory("command-output-home-");
});

afterEach(async () => {
  await server.close();
  workspace.remove();
  home.remove();
});

async function runBash(command: string): Promise<string> {
  server.enqueue({ toolCalls: [{ name: "bash", arguments: { command } }] }, { text: "Ran it." });
  // What the terminal shows, whether or not bwrap can run here: the sandbox is not the point.
  const { code, stdout, stderr } = await runCli(
    ["--model", "test-model", "--allow", "bash", "--sandbox", "off", "run it"],
    {
      cwd: workspace.path,
      env: cliEnvironment(home.path, { OPENAI_BASE_URL: server.baseURL }),
    },
  );
  expect(code, stderr).toBe(0);
  return stdout;
}

describe("bash output on the terminal", () => {
  it("shows the last lines of a command that succeeded, with how many came before", { timeout: 60_000 }, async () => {
    const stdout = await runBash("seq 1 20");
    expect(stdout).toContain(
      "✓ bash seq 1 20 (20 lines of output)\n  │ … 15 earlier lines\n  │ 16\n  │ 17\n  │ 18\n  │ 19\n  │ 20\nRan it.",
    );
  });

  it(
    "shows every line of a command that failed, up to a cap, and never the status line twice",
    { timeout: 60_000 },
    async () => {
      const failed = await runBash("echo first; echo second; echo 'no such thing' >&2; exit 3");
      expect(failed).toContain("✗ bash echo first; echo second; echo 'no such thing' >&2; exit 3: exit code 3\n  │ ");
      // stdout and stderr come through two pipes: their order is the order they were read in.
      expect(failed).toContain("  │ first\n  │ second\n");
      expect(failed).toMatch(/ {2}│ no such thing\n(?: {2}│ .*\n)*Ran it\./);
      const long = await runBash("seq 1 100; exit 1");
      expect(long).toContain(": exit code 1\n  │ … 60 earlier lines\n  │ 61\n");
      expect(long).toContain("  │ 100\nRan it.");
      expect(long).not.toContain("  │ 60\n");
    },
  );

  it("shows control characters of the output as visible escapes", { timeout: 60_000 }, async () => {
    const stdout = await runBash("printf 'bell\\a here\\rover\\n'");
    expect(stdout).toContain("  │ bell^G here^Mover\n");
    expect(stdout).not.toContain("\x07");
  });

  it("shows nothing under a call that never ran", () => {
    const denied = {
      type: "tool_result",
      id: "c",
      output: "Denied: the user denied this call",
      isError: true,
    } as const;
    expect(commandOutputLines(denied, 80)).toStrictEqual([]);
    expect(
      commandOutputLines({ ...denied, output: 'Error: invalid input for tool "bash": command: required\nmore' }, 80),
    ).toStrictEqual([]);
    expect(commandOutputLines({ ...denied, isError: false, output: "(no output)" }, 80)).toStrictEqual([]);
    expect(
      commandOutputLines(
        {
          ...denied,
          output: "Error: timed out after 2 s; the command and the processes it started were killed\npartial",
        },
        80,
      ),
    ).toStrictEqual(["partial"]);
    expect(commandOutputLines({ ...denied, isError: false, output: "x".repeat(100) }, 10)).toStrictEqual([
      `${"x".repeat(9)}…`,
    ]);
  });
});
