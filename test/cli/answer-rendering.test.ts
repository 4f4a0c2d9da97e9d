// A Markdown answer as the user sees it: rendered on a colour terminal, raw in --json.
import { describe, expect, it } from "vitest";
import { runCli } from "./helpers.ts";
import { terminalFixture } from "./terminal-fixture.ts";

const fixture = terminalFixture("answer");

const answer =
  "## Result\n\nRun **the tests** with `npm test`:\n\n```sh\nnpm test -- **not bold**\n```\n\n- first point\n- second point\n";

describe("a Markdown answer", () => {
  it(
    "is rendered on the terminal as it streams: no markers, bullets, code blocks kept as they are",
    { timeout: 90_000 },
    async () => {
      fixture.server().enqueue({ text: answer });
      const cli = fixture.start(["explain"]);
      expect(await cli.exited).toBe(0);
      const screen = await cli.waitFor(/tokens [\d,]+ in/);
      expect(screen).toContain(
        "\nResult\n\nRun the tests with npm test:\n\n```sh\nnpm test -- **not bold**\n```\n\n• first point\n• second point\n",
      );
      expect(screen).not.toContain("## Result");
    },
  );

  it("is raw Markdown in --json", { timeout: 60_000 }, async () => {
    fixture.server().enqueue({ text: answer });
    const { code, stdout } = await runCli(["--model", "test-model", "--json", "explain"], {
      cwd: fixture.workspace(),
      env: fixture.environment(),
    });
    expect(code).toBe(0);
    const lines = stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string; delta?: string; answer?: string });
    expect(lines.at(-1)).toMatchObject({ type: "done", answer });
    expect(
      lines
        .filter((line) => line.type === "text-delta")
        .map((line) => line.delta)
        .join(""),
    ).toBe(answer);
  });
});
