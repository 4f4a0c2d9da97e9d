// The file tools reach only the workspace: every way out (.., absolute paths, symbolic links to
// files or directories outside, new files under a linked directory, dangling links) is refused
// with an error result, and nothing outside is read or written.
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { tempDirectory } from "./helpers.ts";
import { text, toolsIn } from "./tool-calls.ts";

let workspace: ReturnType<typeof tempDirectory>;
let outside: ReturnType<typeof tempDirectory>;

beforeEach(() => {
  workspace = tempDirectory("confine-ws-");
  outside = tempDirectory("confine-out-");
  writeFileSync(join(outside.path, "secret.txt"), "secret\n");
  writeFileSync(join(workspace.path, "inside.txt"), "inside\n");
  mkdirSync(join(workspace.path, "sub"));
});

afterEach(() => {
  workspace.remove();
  outside.remove();
});

describe("workspace confinement", () => {
  const refusals: [string, () => [string, Record<string, string>]][] = [
    ["a relative path with ..", () => ["read", { path: "../secret.txt" }]],
    ["a path that climbs out from a subdirectory", () => ["read", { path: "sub/../../secret.txt" }]],
    ["an absolute path outside", () => ["read", { path: join(outside.path, "secret.txt") }]],
    ["a write through ..", () => ["write", { path: "../new.txt", content: "x" }]],
    ["a list of the parent", () => ["list", { path: ".." }]],
    ["a grep of an absolute directory outside", () => ["grep", { pattern: "secret", path: outside.path }]],
  ];
  for (const [name, call] of refusals) {
    it(`refuses ${name}`, async () => {
      const [tool, input] = call();
      const result = await toolsIn(workspace.path).call(tool, input);
      expect(result.isError).toBe(true);
      expect(text(result)).toMatch(/outside the workspace/);
    });
  }

  it("refuses ~ (never expanded) instead of creating a directory named ~", async () => {
    const { call } = toolsIn(workspace.path);
    const write = await call("write", { path: "~/notes.txt", content: "x" });
    expect(write).toMatchObject({
      isError: true,
      output: expect.stringContaining("~ is not expanded, paths are relative to the workspace"),
    });
    expect((await call("read", { path: "~" })).isError).toBe(true);
    expect(existsSync(join(workspace.path, "~"))).toBe(false);
    expect((await call("write", { path: "./~/notes.txt", content: "x" })).isError).toBeUndefined();
  });

  it("refuses a trailing slash on a file, and a write to a path ending with /", async () => {
    const { call } = toolsIn(workspace.path);
    expect(await call("read", { path: "inside.txt/" })).toMatchObject({
      isError: true,
      output: "Error: inside.txt is a file, not a directory (the path ends with /)",
    });
    expect(await call("write", { path: "newdir/", content: "x" })).toMatchObject({
      isError: true,
      output: "Error: newdir/ ends with /: give the path of a file",
    });
    expect(existsSync(join(workspace.path, "newdir"))).toBe(false);
    expect((await call("list", { path: "sub/" })).isError).toBeUndefined();
  });

  it("allows an absolute path inside, and .. that stays inside", async () => {
    const { call } = toolsIn(workspace.path);
    expect((await call("read", { path: join(workspace.path, "inside.txt") })).output).toContain("inside");
    expect((await call("read", { path: "sub/../inside.txt" })).output).toContain("inside");
  });

  it("refuses a symbolic link to a file outside, for reading and writing", async () => {
    symlinkSync(join(outside.path, "secret.txt"), join(workspace.path, "link.txt"));
    const { call } = toolsIn(workspace.path);
    const read = await call("read", { path: "link.txt" });
    expect(read).toMatchObject({
      isError: true,
      output: expect.stringMatching(/through a symbolic link, outside the workspace/),
    });
    const write = await call("write", { path: "link.txt", content: "overwritten" });
    expect(write.isError).toBe(true);
    expect(readFileSync(join(outside.path, "secret.txt"), "utf8")).toBe("secret\n");
  });

  it("refuses a file under a symbolic link to a directory outside, existing or not yet", async () => {
    symlinkSync(outside.path, join(workspace.path, "linked-dir"));
    const { call } = toolsIn(workspace.path);
    expect((await call("read", { path: "linked-dir/secret.txt" })).isError).toBe(true);
    const created = await call("write", { path: "linked-dir/new/deep.txt", content: "x" });
    expect(created).toMatchObject({ isError: true, output: expect.stringMatching(/outside the workspace/) });
    expect(existsSync(join(outside.path, "new"))).toBe(false);
    const edited = await call("edit", { path: "linked-dir/secret.txt", oldText: "secret", newText: "x" });
    expect(edited.isError).toBe(true);
    expect(readFileSync(join(outside.path, "secret.txt"), "utf8")).toBe("secret\n");
  });

  it("refuses a dangling symbolic link, which a write would follow to wherever it points", async () => {
    symlinkSync(join(outside.path, "not-yet.txt"), join(workspace.path, "dangling.txt"));
    const result = await toolsIn(workspace.path).call("write", { path: "dangling.txt", content: "x" });
    expect(result).toMatchObject({
      isError: true,
      output: expect.stringMatching(/symbolic link to a target that does not exist/),
    });
    expect(existsSync(join(outside.path, "not-yet.txt"))).toBe(false);
  });

  it("follows a symbolic link that stays inside", async () => {
    symlinkSync(join(workspace.path, "inside.txt"), join(workspace.path, "alias.txt"));
    expect((await toolsIn(workspace.path).call("read", { path: "alias.txt" })).output).toContain("inside");
  });

  it("does not follow symbolic links when listing or searching", async () => {
    symlinkSync(outside.path, join(workspace.path, "linked-dir"));
    const { call } = toolsIn(workspace.path);
    expect(text(await call("grep", { pattern: "secret" }))).toBe("No matches.");
    const listing = text(await call("list", { depth: 3 }));
    expect(listing).toContain("linked-dir@");
    expect(listing).not.toContain("secret.txt");
  });
});
