// One CLI test against a fresh fake OpenAI server, workspace and home, torn down after each test:
// the setup every pseudo-terminal test of the prompts shares.
import { afterEach, beforeEach } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "./fake-openai.ts";
import { cliEnvironment, tempDirectory } from "./helpers.ts";
import { startCliTerminal, type CliTerminal } from "./terminal.ts";

export type TerminalFixture = {
  server: () => FakeOpenAI;
  /** The workspace directory (a real path), the CLI's working directory. */
  workspace: () => string;
  /** The CLI's home (`SIMPLE_AGENT_LOOP_HOME`). */
  home: () => string;
  /** The environment the CLI runs with: the fake server, the home, and `extra`. */
  environment: (extra?: Record<string, string>) => Record<string, string>;
  /** Starts the CLI in a pseudo-terminal with `--model test-model` and `args`; killed after the test. */
  start: (args?: string[], extra?: Record<string, string>) => CliTerminal;
};

/** Registers `beforeEach`/`afterEach` hooks in the calling test file (or `describe`). */
export function terminalFixture(prefix: string): TerminalFixture {
  let server: FakeOpenAI | undefined;
  let workspace: ReturnType<typeof tempDirectory> | undefined;
  let home: ReturnType<typeof tempDirectory> | undefined;
  let cli: CliTerminal | undefined;
  beforeEach(async () => {
    server = await startFakeOpenAI();
    workspace = tempDirectory(`${prefix}-ws-`);
    home = tempDirectory(`${prefix}-home-`);
  });
  afterEach(async () => {
    cli?.kill();
    cli = undefined;
    await server?.close();
    workspace?.remove();
    home?.remove();
  });
  const environment = (extra: Record<string, string> = {}): Record<string, string> =>
    cliEnvironment(home!.path, { OPENAI_BASE_URL: server!.baseURL, ...extra });
  return {
    server: () => server!,
    workspace: () => workspace!.path,
    home: () => home!.path,
    environment,
    start: (args = [], extra = {}) => {
      cli = startCliTerminal(["--model", "test-model", ...args], { cwd: workspace!.path, env: environment(extra) });
      return cli;
    },
  };
}
