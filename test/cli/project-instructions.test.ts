// AGENTS.md and CLAUDE.md from the workspace up to the repository's root: which files are read,
// in which order, how a large one is cut, and that the model receives them (through the CLI in a
// pseudo-terminal, asserting on the request the fake server got).
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  instructionsPrompt,
  maxInstructionBytes,
  readProjectInstructions,
} from "../../src/cli/project-instructions.ts";
import { tempDirectory } from "./helpers.ts";
import { terminalFixture } from "./terminal-fixture.ts";

describe("readProjectInstructions", () => {
  let root: ReturnType<typeof tempDirectory>;
  beforeEach(() => (root = tempDirectory("instructions-")));
  afterEach(() => root.remove());

  it("reads the workspace and its parents up to the directory holding .git, outermost first", () => {
    const repository = join(root.path, "outside", "repo");
    const workspace = join(repository, "packages", "app");
    mkdirSync(join(repository, ".git"), { recursive: true });
    mkdirSync(workspace, { recursive: true });
    writeFileSync(join(root.path, "outside", "AGENTS.md"), "above the repository: never read\n");
    writeFileSync(join(repository, "AGENTS.md"), "repository rules\n");
    writeFileSync(join(repository, "packages", "CLAUDE.md"), "packages rules\n");
    writeFileSync(join(workspace, "AGENTS.md"), "app rules\n");
    writeFileSync(join(workspace, "CLAUDE.md"), "app claude rules\n");
    expect(readProjectInstructions(workspace)).toStrictEqual([
      { shown: "../../AGENTS.md", text: "repository rules\n" },
      { shown: "../CLAUDE.md", text: "packages rules\n" },
      { shown: "AGENTS.md", text: "app rules\n" },
      { shown: "CLAUDE.md", text: "app claude rules\n" },
    ]);
  });

  it("outside a repository reads the workspace's files only", () => {
    const workspace = join(root.path, "plain");
    mkdirSync(workspace);
    writeFileSync(join(root.path, "AGENTS.md"), "parent rules\n");
    writeFileSync(join(workspace, "AGENTS.md"), "own rules\n");
    expect(readProjectInstructions(workspace)).toStrictEqual([{ shown: "AGENTS.md", text: "own rules\n" }]);
    expect(readProjectInstructions(root.path).map((file) => file.shown)).toStrictEqual(["AGENTS.md"]);
  });

  it("reads a CLAUDE.md linked to the AGENTS.md beside it once, and never a link leading out", () => {
    const workspace = join(root.path, "ws");
    mkdirSync(join(workspace, ".git"), { recursive: true });
    writeFileSync(join(root.path, "secret.txt"), "do not send\n");
    writeFileSync(join(workspace, "AGENTS.md"), "the rules\n");
    symlinkSync("AGENTS.md", join(workspace, "CLAUDE.md"));
    expect(readProjectInstructions(workspace)).toStrictEqual([{ shown: "AGENTS.md", text: "the rules\n" }]);
    const other = join(root.path, "other");
    mkdirSync(join(other, ".git"), { recursive: true });
    symlinkSync(join(root.path, "secret.txt"), join(other, "AGENTS.md"));
    mkdirSync(join(other, "CLAUDE.md"));
    expect(readProjectInstructions(other)).toStrictEqual([]);
  });

  it(`cuts past ${maxInstructionBytes} bytes in all, saying so in the text the model gets`, () => {
    const workspace = join(root.path, "big");
    mkdirSync(join(workspace, "inner"), { recursive: true });
    mkdirSync(join(workspace, ".git"));
    writeFileSync(join(workspace, "AGENTS.md"), "a".repeat(maxInstructionBytes - 10));
    writeFileSync(join(workspace, "inner", "AGENTS.md"), `${"é".repeat(100)}\n`);
    const files = readProjectInstructions(join(workspace, "inner"));
    expect(files.map((file) => [file.shown, file.cutFrom])).toStrictEqual([
      ["../AGENTS.md", undefined],
      ["AGENTS.md", 201],
    ]);
    // 10 bytes are left: five whole characters of two bytes, none cut in half.
    expect(files[1]!.text).toBe(
      `${"é".repeat(5)}\n[AGENTS.md is cut here: it has 201 bytes, and the instructions are limited to 32,768 bytes in all]`,
    );
    expect(instructionsPrompt(files)).toContain('<instructions file="AGENTS.md">\néééééé'.slice(0, -1));
    expect(instructionsPrompt([])).toBe("");
  });
});

describe("project instructions in the CLI", () => {
  const fixture = terminalFixture("cli-instructions");

  it("names the files at start and sends them to the model in the system prompt", { timeout: 90_000 }, async () => {
    mkdirSync(join(fixture.workspace(), ".git"));
    writeFileSync(join(fixture.workspace(), "AGENTS.md"), "Always answer in French.\n");
    writeFileSync(join(fixture.workspace(), "CLAUDE.md"), "Run npm test before you finish.\n");
    fixture.server().enqueue({ text: "Bonjour." });
    const terminal = fixture.start();
    await terminal.waitFor("instructions AGENTS.md, CLAUDE.md");
    await terminal.waitFor("> ");
    terminal.type("hello\r");
    await terminal.waitFor("Bonjour.");
    const system = fixture.server().bodies()[0]!.messages[0]!;
    expect(system.role).toBe("system");
    expect(system.content).toContain('<instructions file="AGENTS.md">\nAlways answer in French.\n</instructions>');
    expect(system.content).toContain(
      '<instructions file="CLAUDE.md">\nRun npm test before you finish.\n</instructions>',
    );
  });

  it("warns at start when a file is cut", { timeout: 90_000 }, async () => {
    writeFileSync(join(fixture.workspace(), "AGENTS.md"), "x".repeat(maxInstructionBytes + 5));
    const terminal = fixture.start();
    await terminal.waitFor("⚠ AGENTS.md is cut: 32,773 bytes, and the instructions are limited to 32,768 bytes in all");
    await terminal.waitFor("> ");
    terminal.type("/exit\r");
    expect(await terminal.exited).toBe(0);
  });
});
