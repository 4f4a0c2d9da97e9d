// `simple-agent-loop view`: serves the session viewer, prints its URL, stops on Ctrl-C (SIGINT).
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cliEnvironment, runCli, tempDirectory } from "./helpers.ts";
import { repositoryRoot } from "./terminal.ts";

let home: ReturnType<typeof tempDirectory>;

beforeEach(() => {
  home = tempDirectory("view-home-");
});

afterEach(() => {
  home.remove();
});

function startView(args: string[]) {
  const child = spawn(
    process.execPath,
    ["--conditions=simple-agent-loop-source", `${repositoryRoot}src/cli/main.ts`, "view", ...args],
    {
      cwd: home.path,
      env: cliEnvironment(home.path),
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, exited, output: () => ({ stdout, stderr }) };
}

describe("view", () => {
  it("serves a session file, prints a URL with its token that answers, and stops on SIGINT with exit code 0", async () => {
    const file = join(home.path, "s.jsonl");
    writeFileSync(file, `${JSON.stringify({ type: "message", message: { role: "user", content: "hi" } })}\n`);
    const view = startView([file, "--port", "0"]);
    try {
      const printed = /http:\/\/127\.0\.0\.1:\d+\/#token=([\w-]+)/;
      await expect.poll(() => view.output().stdout, { timeout: 30_000 }).toMatch(printed);
      const [url, token] = printed.exec(view.output().stdout)!;
      expect((await fetch(url)).status).toBe(200);
      // The printed address holds the viewer's secret: without it, no session is served.
      expect((await fetch(new URL("/api/sessions", url))).status).toBe(403);
      expect((await fetch(new URL("/api/sessions", url), { headers: { "x-viewer-token": token! } })).status).toBe(200);
      view.child.kill("SIGINT");
      expect(await view.exited).toBe(0);
    } finally {
      view.child.kill("SIGKILL");
    }
  });

  it("says so when there is nothing to show", async () => {
    const missing = await runCli(["view", join(home.path, "nope.jsonl")], {
      cwd: home.path,
      env: cliEnvironment(home.path),
    });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/nope\.jsonl does not exist/);
  });
});
