// The file tools against a workspace that changes under them: another process (a bash call the
// model made, say) swaps symbolic links in and out while the tools run, and hard links name files
// outside. Never a byte of an outside file is read, written or created.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, linkSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { tempDirectory } from "./helpers.ts";
import { text, toolsIn } from "./tool-calls.ts";

let workspace: ReturnType<typeof tempDirectory>;
let outside: ReturnType<typeof tempDirectory>;
let swapper: ChildProcess | undefined;

beforeEach(() => {
  workspace = tempDirectory("race-ws-");
  outside = tempDirectory("race-out-");
  writeFileSync(join(outside.path, "secret.txt"), "secret\n");
  writeFileSync(join(outside.path, "f.txt"), "secret\n");
});

afterEach(() => {
  swapper?.kill("SIGKILL");
  swapper = undefined;
  workspace.remove();
  outside.remove();
});

// Swaps, as fast as it can: `t.txt` between a regular file and a link to the secret, and `d`
// between a directory and a link to the outside directory (a parent swapped, not the file).
const swapScript = String.raw`
const { renameSync, symlinkSync, writeFileSync, mkdirSync, rmSync } = require("node:fs");
const [ws, out] = process.argv.slice(1);
const quiet = (action) => { try { action(); } catch {} };
for (;;) {
  quiet(() => symlinkSync(out + "/secret.txt", ws + "/link.tmp"));
  quiet(() => renameSync(ws + "/link.tmp", ws + "/t.txt"));
  quiet(() => writeFileSync(ws + "/file.tmp", "inside\n"));
  quiet(() => renameSync(ws + "/file.tmp", ws + "/t.txt"));
  quiet(() => renameSync(ws + "/d", ws + "/d.away"));
  quiet(() => symlinkSync(out, ws + "/d"));
  quiet(() => rmSync(ws + "/d"));
  quiet(() => renameSync(ws + "/d.away", ws + "/d"));
}
`;

function startSwapping(): void {
  mkdirSync(join(workspace.path, "d"));
  writeFileSync(join(workspace.path, "d", "f.txt"), "inside\n");
  writeFileSync(join(workspace.path, "t.txt"), "inside\n");
  swapper = spawn(process.execPath, ["-e", swapScript, workspace.path, outside.path], { stdio: "ignore" });
}

function outsideUntouched(): void {
  expect(readdirSync(outside.path).sort()).toStrictEqual(["f.txt", "secret.txt"]);
  expect(readFileSync(join(outside.path, "secret.txt"), "utf8")).toBe("secret\n");
  expect(readFileSync(join(outside.path, "f.txt"), "utf8")).toBe("secret\n");
}

describe("file tools racing a process that swaps symbolic links", () => {
  it("read, grep and list never return a byte of a file outside, nor its name", async () => {
    startSwapping();
    const { call } = toolsIn(workspace.path);
    let succeeded = 0;
    for (let round = 0; round < 150; round++) {
      for (const [name, input] of [
        ["read", { path: "t.txt" }],
        ["read", { path: "d/f.txt" }],
        ["grep", { pattern: "secret|inside", path: "d" }],
        ["grep", { pattern: "secret|inside", path: "t.txt" }],
        ["list", { path: "d" }],
      ] as const) {
        const result = await call(name, input);
        expect(text(result)).not.toContain("secret\n");
        expect(text(result)).not.toMatch(/:1: secret/);
        // Not even the names of the files outside (an error may name the link's target).
        if (result.isError !== true) expect(text(result)).not.toContain("secret.txt");
        if (result.isError !== true && text(result).includes("inside")) succeeded++;
      }
    }
    // The race is real: the tools worked on the files inside most of the time.
    expect(succeeded).toBeGreaterThan(0);
  }, 120_000);

  it("write and edit never change or create a file outside", async () => {
    startSwapping();
    const { call } = toolsIn(workspace.path);
    for (let round = 0; round < 150; round++) {
      await call("write", { path: "t.txt", content: `written ${round}\n` });
      await call("write", { path: "d/f.txt", content: `written ${round}\n` });
      await call("write", { path: `d/new-${round}.txt`, content: "new\n" });
      await call("write", { path: `d/sub-${round}/deep.txt`, content: "new\n" });
      await call("read", { path: "d/f.txt" });
      await call("edit", { path: "d/f.txt", oldText: "inside", newText: "edited" });
      await call("edit", { path: "d/f.txt", oldText: "secret", newText: "edited" });
    }
    outsideUntouched();
  }, 120_000);
});

describe("hard links", () => {
  it("a file with several links is neither read, searched nor written: another name may be outside", async () => {
    linkSync(join(outside.path, "secret.txt"), join(workspace.path, "hard.txt"));
    const { call } = toolsIn(workspace.path);
    const read = await call("read", { path: "hard.txt" });
    expect(read).toMatchObject({ isError: true, output: expect.stringMatching(/^Error: hard\.txt has 2 hard links/) });
    expect(text(await call("grep", { pattern: "secret" }))).toMatch(
      /^No matches\.\n\[skipped 1 file with several hard links: hard\.txt\]$/,
    );
    expect(await call("write", { path: "hard.txt", content: "overwritten\n" })).toMatchObject({
      isError: true,
      output: expect.stringMatching(/hard links/),
    });
    expect(await call("edit", { path: "hard.txt", oldText: "secret", newText: "x" })).toMatchObject({ isError: true });
    outsideUntouched();
    expect(existsSync(join(workspace.path, "hard.txt"))).toBe(true);
  });
});
