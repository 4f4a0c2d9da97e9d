// The bash tool: runs in the workspace, reports failures with their output, cuts long output
// in the middle, and on a timeout or an abort kills the whole process group, grandchildren too.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runCommand } from "../../src/cli/tools/bash.ts";
import { isAlive, tempDirectory } from "./helpers.ts";
import { toolsIn } from "./tool-calls.ts";

let workspace: ReturnType<typeof tempDirectory>;

beforeEach(() => {
  workspace = tempDirectory("bash-ws-");
});

afterEach(() => {
  workspace.remove();
});

async function waitForFile(path: string): Promise<string> {
  await expect
    .poll(
      () => {
        try {
          return readFileSync(path, "utf8").trim();
        } catch {
          return "";
        }
      },
      { timeout: 15_000 },
    )
    .not.toBe("");
  return readFileSync(path, "utf8").trim();
}

describe("bash", () => {
  it("runs the command in the workspace with stdout and stderr together", async () => {
    const result = await toolsIn(workspace.path).call("bash", { command: "pwd; echo oops >&2" });
    expect(result).toStrictEqual({ type: "tool_result", id: result.id, output: `${workspace.path}\noops\n` });
  });

  it("removes colour codes, titles and hyperlinks from the output", async () => {
    const result = await toolsIn(workspace.path).call("bash", {
      command: String.raw`printf '\e[31mred\e[0m \e]0;title\e]8;;http://x\e\link\e]8;;\e\ ok
'`,
    });
    expect(result.output).toBe("red link ok\n");
  });

  it("makes a non-zero exit an error result that carries the output", async () => {
    const result = await toolsIn(workspace.path).call("bash", { command: "echo before; exit 3" });
    expect(result).toMatchObject({ isError: true, output: "Error: exit code 3\nbefore\n" });
  });

  it("keeps the head and tail of long output, with a note of what was cut", async () => {
    const run = await runCommand("seq 1 100000", {
      cwd: workspace.path,
      timeoutMs: 30_000,
      headBytes: 100,
      tailBytes: 100,
    });
    expect(run.exitCode).toBe(0);
    const [head, note, tail] = [
      run.output.slice(0, run.output.indexOf("[")),
      /\[… .* …\]/.exec(run.output)?.[0],
      run.output.slice(run.output.indexOf("]\n") + 2),
    ];
    expect(head.startsWith("1\n2\n3\n")).toBe(true);
    expect(tail.endsWith("99999\n100000\n")).toBe(true);
    expect(note).toMatch(/^\[… \d+ bytes \(\d+ lines\) of output cut here; 588895 bytes in all\./);
    expect(run.output.length).toBeLessThan(400);
  });

  it("cuts output without line breaks between whole characters, the note on a line of its own", async () => {
    const run = await runCommand("for i in $(seq 300); do printf 'é'; done", {
      cwd: workspace.path,
      timeoutMs: 30_000,
      headBytes: 101,
      tailBytes: 101,
    });
    const [head, note, tail] = run.output.split("\n");
    expect(head).toBe("é".repeat(50));
    expect(note).toBe(
      "[… 400 bytes (0 lines) of output cut here; 600 bytes in all. Redirect to a file and read or grep it to see more …]",
    );
    expect(tail).toBe("é".repeat(50));
  });

  it("kills the whole process group on timeout, grandchildren included", async () => {
    const pidFile = join(workspace.path, "grandchild.pid");
    const pending = toolsIn(workspace.path).call("bash", {
      command: `sleep 60 & echo $! > ${pidFile}; echo started; wait`,
      timeout: 3,
    });
    const grandchild = Number(await waitForFile(pidFile));
    const result = await pending;
    expect(result).toMatchObject({
      isError: true,
      output: expect.stringMatching(
        /^Error: timed out after 3 s; the command and the processes it started were killed\nstarted\n/,
      ),
    });
    await expect.poll(() => isAlive(grandchild), { timeout: 10_000 }).toBe(false);
  });

  it("does not wait for a background process that keeps the output open: it is killed shortly after the command exits", async () => {
    const pidFile = join(workspace.path, "background.pid");
    const result = await toolsIn(workspace.path).call("bash", {
      command: `sleep 60 & echo $! > ${pidFile}; echo done`,
    });
    expect(result.output).toBe("done\n");
    const background = Number(readFileSync(pidFile, "utf8"));
    await expect.poll(() => isAlive(background), { timeout: 10_000 }).toBe(false);
  });

  it("kills the whole process group when the run is aborted", async () => {
    const pidFile = join(workspace.path, "grandchild.pid");
    const controller = new AbortController();
    const running = runCommand(`sleep 60 & echo $! > ${pidFile}; wait`, {
      cwd: workspace.path,
      timeoutMs: 60_000,
      signal: controller.signal,
      killGraceMs: 500,
    });
    const grandchild = Number(await waitForFile(pidFile));
    expect(isAlive(grandchild)).toBe(true);
    controller.abort();
    expect(await running).toMatchObject({ aborted: true });
    await expect.poll(() => isAlive(grandchild), { timeout: 10_000 }).toBe(false);
  });
});
