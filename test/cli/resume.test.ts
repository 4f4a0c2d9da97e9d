// Sessions live in $SIMPLE_AGENT_LOOP_HOME/sessions and record their workspace: --resume
// continues the latest session of this workspace, --resume <id> that one.
import { mkdirSync, writeFileSync } from "node:fs";
import { execFile } from "node:child_process";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadEntries } from "simple-agent-loop/store";
import { startFakeOpenAI, type FakeOpenAI } from "./fake-openai.ts";
import { cliEnvironment, runCli, tempDirectory } from "./helpers.ts";

let server: FakeOpenAI;
let root: ReturnType<typeof tempDirectory>;
let home: ReturnType<typeof tempDirectory>;

beforeEach(async () => {
  server = await startFakeOpenAI();
  root = tempDirectory("resume-");
  home = tempDirectory("resume-home-");
  mkdirSync(join(root.path, "project"));
  mkdirSync(join(root.path, "other"));
});

afterEach(async () => {
  await server.close();
  root.remove();
  home.remove();
});

async function task(workspace: string, args: string[]): Promise<{ id: string; stdout: string }> {
  const { code, stdout, stderr } = await runCli(["--model", "test-model", ...args], {
    cwd: join(root.path, workspace),
    env: cliEnvironment(home.path, { OPENAI_BASE_URL: server.baseURL }),
  });
  expect(code, stderr).toBe(0);
  return { id: /session (\S+) \(/.exec(stdout)![1]!, stdout };
}

// A command as a user's shell runs it, with `input` on its stdin.
function run(
  command: string,
  args: string[],
  options: { cwd: string; env: Record<string, string>; input?: string },
): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      command,
      args,
      { cwd: options.cwd, env: options.env, timeout: 60_000 },
      (error, stdout, stderr) =>
        error === null ? resolve({ stdout, stderr }) : reject(Object.assign(error, { stdout, stderr })),
    );
    child.stdin?.end(options.input ?? "");
  });
}

const userContents = (request: number): unknown[] => {
  const body = server.bodies()[request]!;
  return body.messages.filter((message) => message.role === "user").map((message) => message.content);
};

describe("--resume", () => {
  // Six runs of the CLI, each a process start: seconds apiece on a loaded machine.
  it("continues the latest session of this workspace, or the one named", { timeout: 180_000 }, async () => {
    server.enqueue(
      { text: "First answer." },
      { text: "Elsewhere." },
      { text: "Second answer." },
      { text: "Newer answer." },
      { text: "Latest again." },
      { text: "Third answer." },
    );
    const first = await task("project", ["first task"]);
    const elsewhere = await task("other", ["another project"]);
    expect(elsewhere.id).not.toBe(first.id);

    const resumed = await task("project", ["--resume", "--", "second task"]);
    expect(resumed.id).toBe(first.id);
    expect(resumed.stdout).toMatch(/\(resumed, 3 messages; last task: "first task"\)/);
    expect(userContents(2)).toStrictEqual(["first task", "second task"]);
    expect(server.bodies()[2]!.messages.some((message) => message.content === "First answer.")).toBe(true);

    const newer = await task("project", ["a newer task"]);
    expect((await task("project", ["go on", "--resume"])).id).toBe(newer.id);
    expect(userContents(4)).toStrictEqual(["a newer task", "go on"]);

    const byId = await task("other", ["--resume", first.id, "third task"]);
    expect(byId.id).toBe(first.id);
    expect(userContents(5)).toStrictEqual(["first task", "second task", "third task"]);

    // It was used from another workspace: that is where it works now.
    const entries = await loadEntries(join(home.path, "sessions", `${first.id}.jsonl`));
    const workspaces = entries
      .filter((entry) => entry.type === "custom")
      .map((entry) => (entry as { data?: { workspace?: string } }).data?.workspace);
    expect(workspaces).toStrictEqual([join(root.path, "project"), join(root.path, "other")]);
  });

  it("a one-task run ends by saying how to go on with its session; a workspace's name in it is escaped", async () => {
    server.enqueue({ text: "First answer." }, { text: "Second answer." });
    const first = await task("project", ["first task"]);
    // Not on this PATH (a checkout, an app's local install): npx finds it.
    expect(first.stdout).toContain(`To go on with this session: npx simple-agent-loop --resume ${first.id}\n`);
    // A directory named to retitle the terminal and hide text: shown, never obeyed.
    const hostile = join(root.path, "evil\u001b]0;pwned\u0007\u001b[8m");
    mkdirSync(hostile);
    const run = await runCli(["--model", "test-model", "-C", hostile, "second task"], {
      cwd: join(root.path, "project"),
      env: cliEnvironment(home.path, { OPENAI_BASE_URL: server.baseURL }),
    });
    expect(run.code, run.stderr).toBe(0);
    const hint = run.stdout.split("\n").find((text) => text.includes("To go on with this session"))!;
    expect(hint).toContain("-C '");
    expect(hint).toContain("evil^[]0;pwned^G^[[8m");
    for (const raw of ["\u001b]", "\u0007", "\u001b[8m"]) expect(run.stdout).not.toContain(raw);
  });

  it("prints the command as the user can run it, and that command, run as printed, goes on with the same session", async () => {
    server.enqueue({ text: "First answer." }, { text: "Second answer." });
    // The CLI on the user's PATH, as a global install or npm link puts it there.
    const bin = join(root.path, "bin");
    mkdirSync(bin);
    const main = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url));
    writeFileSync(
      join(bin, "simple-agent-loop"),
      `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} --conditions=simple-agent-loop-source ${JSON.stringify(main)} "$@"\n`,
      { mode: 0o755 },
    );
    const environment = cliEnvironment(home.path, {
      OPENAI_BASE_URL: server.baseURL,
      PATH: `${bin}${delimiter}${process.env.PATH ?? ""}`,
    });
    const project = join(root.path, "project");
    const first = await run("simple-agent-loop", ["--model", "test-model", "first task"], {
      cwd: project,
      env: environment,
    });
    const hint = /To go on with this session: (.+)\n/.exec(first.stdout)![1]!;
    const id = /session (\S+) \(/.exec(first.stdout)![1]!;
    expect(hint).toBe(`simple-agent-loop --resume ${id}`);
    // As printed, in a shell, with the next task on stdin (no terminal: the prompt reads it from there).
    const second = await run("/bin/sh", ["-c", hint], { cwd: project, env: environment, input: "second task" });
    expect(second.stdout).toContain(`session ${id} (resumed`);
    expect(second.stdout).toContain(`To go on with this session: simple-agent-loop --resume ${id}\n`);
    expect(userContents(1)).toStrictEqual(["first task", "second task"]);
  });

  it("says so when there is nothing to resume", async () => {
    const none = await runCli(["--model", "m", "go on", "--resume"], {
      cwd: join(root.path, "project"),
      env: cliEnvironment(home.path, { OPENAI_BASE_URL: server.baseURL }),
    });
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/no session of .*project to resume/);
    const unknown = await runCli(["--model", "m", "--resume", "20250102-030405-a1b2c3", "go on"], {
      cwd: join(root.path, "project"),
      env: cliEnvironment(home.path, { OPENAI_BASE_URL: server.baseURL }),
    });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/no session 20250102-030405-a1b2c3 \(there is no .*20250102-030405-a1b2c3\.jsonl\)/);
    expect(unknown.stderr).toContain("list the sessions with: npx simple-agent-loop view");
  });

  it(
    "refuses a mistyped id by name (exit 1), instead of resuming the latest session with the typo as the task",
    { timeout: 180_000 },
    async () => {
      server.enqueue({ text: "First answer." });
      const first = await task("project", ["first task"]);
      // The value after --resume is the id, whatever its shape, in every spelling.
      const spellings = [
        ...[first.id.slice(0, -1), `${first.id}x`, first.id.replace(/-/, "")].map((typo) => ({
          typo,
          args: ["--resume", typo, "go on"],
        })),
        ...["nosuchid", "nope-123"].flatMap((typo) => [
          { typo, args: ["--resume", typo, "go on"] },
          { typo, args: ["-r", typo, "go on"] },
          { typo, args: [`--resume=${typo}`, "go on"] },
        ]),
      ];
      for (const { typo, args } of spellings) {
        const run = await runCli(["--model", "m", ...args], {
          cwd: join(root.path, "project"),
          env: cliEnvironment(home.path, { OPENAI_BASE_URL: server.baseURL }),
        });
        expect(run.code, args.join(" ")).toBe(1);
        expect(run.stderr).toContain(`no session ${typo}`);
        expect(run.stderr).toContain("list the sessions with: npx simple-agent-loop view");
      }
      // Nothing reached the model but the first task.
      expect(server.bodies()).toHaveLength(1);
    },
  );

  it("--resume <id> from another workspace works there, and the model is told so: tools and prompt agree", async () => {
    writeFileSync(join(root.path, "project", "where.txt"), "in project\n");
    writeFileSync(join(root.path, "other", "where.txt"), "in other\n");
    server.enqueue(
      { text: "First answer." },
      { toolCalls: [{ name: "read", arguments: { path: "where.txt" } }] },
      { text: "It says in other." },
    );
    const first = await task("project", ["first task"]);
    const moved = await task("other", ["--resume", first.id, "where are we?"]);
    expect(moved.stdout).toContain(
      `workspace ${join(root.path, "other")} (the session worked in ${join(root.path, "project")} until now)`,
    );
    const request = server.bodies()[1]!;
    const system = request.messages
      .filter((message) => message.role === "system")
      .map((message) => String(message.content));
    // The last word on the workspace is the one the tools work in.
    expect(system.at(-1)).toContain(
      `from now on you work in ${join(root.path, "other")}, no longer in ${join(root.path, "project")}`,
    );
    const result = server.bodies()[2]!.messages.find((message) => message.role === "tool");
    expect(String(result?.content)).toContain("in other");
    // Resumed again from there, nothing more is added.
    server.enqueue({ text: "Still here." });
    await task("other", ["--resume", first.id, "and now?"]);
    expect(server.bodies()[3]!.messages.filter((message) => message.role === "system")).toHaveLength(2);
  });
});
