// A Markdown answer as the user sees it: rendered on a colour terminal, raw in --json.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "./fake-openai.ts";
import { cliEnvironment, runCli, tempDirectory } from "./helpers.ts";
import { startCliTerminal, type CliTerminal } from "./terminal.ts";

let server: FakeOpenAI;
let workspace: ReturnType<typeof tempDirectory>;
let home: ReturnType<typeof tempDirectory>;
let cli: CliTerminal | undefined;

beforeEach(async () => {
  server = await startFakeOpenAI();
  workspace = tempDirectory("answer-ws-");
  home = tempDirectory("answer-home-");
});

afterEach(async () => {
  cli?.kill();
  cli = undefined;
  await server.close();
  workspace.remove();
  home.remove();
});

const answer = "## Result\n\nRun **the tests** with `npm test`:\n\n```sh\nnpm test -- **not bold**\n```\n\n- first point\n- second point\n";

describe("a Markdown answer", () => {
  it("is rendered on the terminal as it streams: no markers, bullets, code blocks kept as they are", { timeout: 90_000 }, async () => {
    server.enqueue({ text: answer });
    cli = startCliTerminal(["--model", "test-model", "explain"], { cwd: workspace.path, env: cliEnvironment(home.path, { OPENAI_BASE_URL: server.baseURL }) });
    expect(await cli.exited).toBe(0);
    const screen = await cli.waitFor(/tokens [\d,]+ in/);
    expect(screen).toContain("\nResult\n\nRun the tests with npm test:\n\n```sh\nnpm test -- **not bold**\n```\n\n• first point\n• second point\n");
    expect(screen).not.toContain("## Result");
  });

  it("is raw Markdown in --json", { timeout: 60_000 }, async () => {
    server.enqueue({ text: answer });
    const { code, stdout } = await runCli(["--model", "test-model", "--json", "explain"], { cwd: workspace.path, env: cliEnvironment(home.path, { OPENAI_BASE_URL: server.baseURL }) });
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split("\n").map((line) => JSON.parse(line) as { type: string; delta?: string; answer?: string });
    expect(lines.at(-1)).toMatchObject({ type: "done", answer });
    expect(lines.filter((line) => line.type === "text-delta").map((line) => line.delta).join("")).toBe(answer);
  });
});
