// Where a file write turns into code execution later: such writes are asked about every time.
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { protectedTargets } from "../../src/cli/protected-targets.ts";
import { tempDirectory } from "./helpers.ts";

let workspace: ReturnType<typeof tempDirectory>;
beforeEach(() => {
  workspace = tempDirectory("protected-ws-");
  mkdirSync(join(workspace.path, ".git", "hooks"), { recursive: true });
  mkdirSync(join(workspace.path, "src"));
  mkdirSync(join(workspace.path, "tools"));
  writeFileSync(join(workspace.path, "tools", "server.js"), "");
});
afterEach(() => workspace.remove());

describe("protectedTargets", () => {
  it("finds .git however the path reaches it: directly, through .., in another case, through a symbolic link, nested", async () => {
    symlinkSync(join(workspace.path, ".git"), join(workspace.path, "innocent"));
    const check = protectedTargets({ workspace: workspace.path, home: join(workspace.path, "elsewhere-home") });
    for (const path of [
      ".git/config",
      ".git/hooks/pre-commit",
      "src/../.git/config",
      ".GIT/hooks/post-checkout",
      "innocent/hooks/pre-push",
      "vendor/lib/.git/config",
      ".git",
      `${workspace.path}/.git/config`,
    ]) {
      expect(await check({ name: "write", input: { path, content: "x" } }), path).toMatch(
        /\.git, whose config and hooks run commands/,
      );
      expect(await check({ name: "edit", input: { path, oldText: "a", newText: "b" } }), path).toMatch(/\.git/);
    }
  });

  it("finds the workspace's .simple-agent-loop, the CLI's home inside the workspace and the files an MCP config runs", async () => {
    const check = protectedTargets({
      workspace: workspace.path,
      home: join(workspace.path, "home"),
      runs: [join(workspace.path, "tools", "server.js")],
    });
    expect(await check({ name: "write", input: { path: ".simple-agent-loop/mcp.json" } })).toMatch(
      /\.simple-agent-loop, whose mcp\.json starts commands/,
    );
    expect(await check({ name: "write", input: { path: "home/trusted-mcp.json" } })).toMatch(/the CLI's own home/);
    expect(await check({ name: "write", input: { path: "./HOME/trusted-mcp.json" } })).toMatch(/the CLI's own home/);
    expect(await check({ name: "edit", input: { path: "src/../tools/server.js" } })).toMatch(
      /a file an MCP server in use runs/,
    );
  });

  it("leaves ordinary files, other tools and paths the tools refuse anyway alone", async () => {
    const check = protectedTargets({ workspace: workspace.path, home: join(workspace.path, "home") });
    expect(await check({ name: "write", input: { path: "src/.gitignore" } })).toBeUndefined();
    expect(await check({ name: "write", input: { path: "src/git/config" } })).toBeUndefined();
    expect(await check({ name: "write", input: { path: "tools/server.js" } })).toBeUndefined();
    expect(await check({ name: "read", input: { path: ".git/config" } })).toBeUndefined();
    expect(await check({ name: "write", input: { path: "../outside/.git/config" } })).toBeUndefined();
    expect(await check({ name: "write", input: {} })).toBeUndefined();
  });
});
