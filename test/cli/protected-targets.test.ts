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

  it("finds where git reads hooks and config beyond .git: core.hooksPath, a .git file's gitdir, a worktree's commondir, core.fsmonitor, the user's config and its includes", async () => {
    const at = (...parts: string[]): string => join(workspace.path, ...parts);
    const user = { home: at("user-home") };
    mkdirSync(at("user-home"));
    // The repository's own config names a hooks directory (relative to the work tree) and a program.
    writeFileSync(
      at(".git", "config"),
      '[core]\n\trepositoryformatversion = 0\n\thooksPath = ".githooks" ; where the team keeps hooks\n[core]\n\tfsmonitor = tools/watch.sh\n',
    );
    // A nested work tree whose .git is a file naming its git directory elsewhere in the workspace,
    // a linked worktree whose commondir holds the hooks, and the user's config through an include.
    mkdirSync(at("nested"));
    writeFileSync(at("nested", ".git"), "gitdir: ../gitstore\n");
    for (const directory of ["hooks", "objects", "refs"]) mkdirSync(at("gitstore", directory), { recursive: true });
    writeFileSync(at("gitstore", "HEAD"), "ref: refs/heads/main\n");
    writeFileSync(at("gitstore", "config"), "[core]\n\thooksPath = .my-hooks\n");
    mkdirSync(at("linked"));
    writeFileSync(at("linked", ".git"), `gitdir: ${at("bare-repo", "worktrees", "linked")}\n`);
    mkdirSync(at("bare-repo", "worktrees", "linked"), { recursive: true });
    writeFileSync(at("bare-repo", "worktrees", "linked", "commondir"), "../..\n");
    writeFileSync(at("bare-repo", "worktrees", "linked", "HEAD"), "ref: refs/heads/linked\n");
    for (const directory of ["objects", "refs"]) mkdirSync(at("bare-repo", directory));
    writeFileSync(at("bare-repo", "HEAD"), "ref: refs/heads/main\n");
    writeFileSync(at("bare-repo", "config"), "[core]\n\tbare = true\n\thooksPath = team-hooks\n");
    writeFileSync(at("user-home", ".gitconfig"), "[include]\n\tpath = more.cfg\n");
    writeFileSync(at("user-home", "more.cfg"), `[core]\n\thooksPath = ${at("shared-hooks")}\n`);
    const check = protectedTargets({ workspace: workspace.path, home: at("cli-home"), user });
    const cases: [string, RegExp][] = [
      [".githooks/pre-commit", /core\.hooksPath in .*\.git\/config/],
      [".GitHooks/pre-push", /core\.hooksPath/],
      ["tools/watch.sh", /core\.fsmonitor/],
      ["gitstore/hooks/post-checkout", /a git directory/],
      ["gitstore/config", /a git directory/],
      ["bare-repo/config", /a git directory/],
      ["bare-repo/hooks/pre-commit", /a git directory/],
      ["linked/team-hooks/pre-commit", /core\.hooksPath in .*bare-repo\/config/],
      ["shared-hooks/pre-commit", /core\.hooksPath in .*more\.cfg/],
      ["nested/.my-hooks/pre-commit", /core\.hooksPath in .*gitstore\/config/],
    ];
    for (const [path, why] of cases) {
      const reason = await check({ name: "write", input: { path, content: "#!/bin/sh" } });
      expect(`${path}: ${reason}`).toMatch(/changes where git reads hooks, config or programs/);
      expect(reason, path).toMatch(why);
    }
    for (const path of [
      "src/index.ts",
      "githooks/readme.md",
      "tools/other.sh",
      "nested/src/a.ts",
      "nested/.githooks/x",
    ])
      expect(await check({ name: "write", input: { path, content: "x" } }), path).toBeUndefined();
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
