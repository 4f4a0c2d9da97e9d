// --record and --replay: a CLI session recorded against the fake OpenAI-compatible server, then
// rerun offline from its cassette: no request reaches the server and no tool runs again.
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "./fake-openai.ts";
import { cliEnvironment, runCli, tempDirectory } from "./helpers.ts";

let server: FakeOpenAI;
let workspace: ReturnType<typeof tempDirectory>;
let home: ReturnType<typeof tempDirectory>;

beforeEach(async () => {
  server = await startFakeOpenAI();
  workspace = tempDirectory("cassette-ws-");
  home = tempDirectory("cassette-home-");
});

afterEach(async () => {
  await server.close();
  workspace.remove();
  home.remove();
});

const run = (args: string[]) =>
  runCli(["--model", "test-model", "--json", ...args], {
    cwd: workspace.path,
    env: cliEnvironment(home.path, { OPENAI_BASE_URL: server.baseURL }),
  });

it(
  "--record writes a cassette; --replay reruns the session offline without running the tools again",
  { timeout: 180_000 },
  async () => {
    server.enqueue(
      { toolCalls: [{ name: "write", arguments: { path: "notes.txt", content: "recorded\n" } }] },
      { text: "Wrote notes.txt." },
    );
    const cassettePath = join(home.path, "session.jsonl");
    const recorded = await run(["--allow", "write", "--record", cassettePath, "write the notes"]);
    expect(recorded.code, recorded.stderr).toBe(0);
    expect(readFileSync(join(workspace.path, "notes.txt"), "utf8")).toBe("recorded\n");
    const kinds = readFileSync(cassettePath, "utf8")
      .trim()
      .split("\n")
      .map((line) => (JSON.parse(line) as { kind: string }).kind);
    expect(kinds).toStrictEqual(["model", "tool", "model"]);
    expect(server.requests).toHaveLength(2);

    rmSync(join(workspace.path, "notes.txt"));
    const replayed = await run(["--allow", "write", "--replay", cassettePath, "write the notes"]);
    expect(replayed.code, replayed.stderr).toBe(0);
    expect(server.requests).toHaveLength(2);
    expect(existsSync(join(workspace.path, "notes.txt"))).toBe(false);
    expect(replayed.stdout).toContain("Wrote notes.txt.");

    // Another task: refused before anything starts, so no session is made and no resume hint printed.
    const sessions = (): string[] => readdirSync(join(home.path, "sessions")).filter((name) => name.endsWith(".jsonl"));
    const before = sessions();
    const changed = await run(["--allow", "write", "--replay", cassettePath, "write other notes"]);
    expect(changed.code).toBe(1);
    expect(changed.stderr).toContain('recorded the task "write the notes", not "write other notes"; nothing was run');
    expect(sessions()).toStrictEqual(before);
    const plain = await runCli(["--model", "test-model", "--replay", cassettePath, "write other notes"], {
      cwd: workspace.path,
      env: cliEnvironment(home.path, { OPENAI_BASE_URL: server.baseURL }),
    });
    expect(plain.code).toBe(1);
    expect(plain.stdout).not.toContain("To go on with this session");
    expect(sessions()).toStrictEqual(before);
    expect((await run(["--record", cassettePath, "--replay", cassettePath, "x"])).code).toBe(2);
  },
);
