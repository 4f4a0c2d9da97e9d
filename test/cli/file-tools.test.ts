// read, edit, write, grep and list as the model uses them: through the loop's tool executor, so
// failures arrive as the error results the model would see.
import { existsSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { checkToolCall } from "../../src/cli/tools/index.ts";
import { tempDirectory } from "./helpers.ts";
import { text, toolsIn } from "./tool-calls.ts";

let workspace: ReturnType<typeof tempDirectory>;
const file = (path: string): string => join(workspace.path, path);

beforeEach(() => {
  workspace = tempDirectory("tools-ws-");
});

afterEach(() => {
  workspace.remove();
});

describe("read", () => {
  it("shows numbered lines, a window with offset and limit, and how to read on", async () => {
    writeFileSync(file("a.txt"), Array.from({ length: 12 }, (_, index) => `line ${index + 1}`).join("\n") + "\n");
    const { call } = toolsIn(workspace.path);
    expect((await call("read", { path: "a.txt", offset: 3, limit: 2 })).output).toBe(
      "     3\tline 3\n     4\tline 4\n\n[lines 3-4 of 12; read on with offset=5]",
    );
    const whole = text(await call("read", { path: "a.txt" }));
    expect(whole.split("\n")).toHaveLength(12);
    expect(whole).toMatch(/^ {5}1\tline 1\n/);
    expect((await call("read", { path: "a.txt", offset: 20 })).output).toBe(
      "Error: offset 20 is past the end of a.txt (12 lines)",
    );
  });

  it("refuses binary files, directories and missing files with errors that say what to do", async () => {
    writeFileSync(file("image.png"), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02]));
    mkdirSync(file("dir"));
    const { call } = toolsIn(workspace.path);
    expect(await call("read", { path: "image.png" })).toMatchObject({
      isError: true,
      output: "Error: image.png is a binary file (7 bytes); read shows text files only",
    });
    expect(await call("read", { path: "dir" })).toMatchObject({
      isError: true,
      output: "Error: dir is a directory; use list to see what is in it",
    });
    expect(await call("read", { path: "nope.txt" })).toMatchObject({
      isError: true,
      output: "Error: nope.txt does not exist",
    });
  });

  it("cuts very long lines", async () => {
    writeFileSync(file("long.txt"), "x".repeat(5000));
    const output = text(await toolsIn(workspace.path).call("read", { path: "long.txt" }));
    expect(output).toContain("… [line cut at 2000 characters]");
    expect(output.length).toBeLessThan(2100);
  });
});

describe("edit", () => {
  it("replaces one exact, unique piece of text in a file it has read", async () => {
    writeFileSync(file("a.ts"), "const a = 1;\nconst b = 2;\n");
    const { call } = toolsIn(workspace.path);
    await call("read", { path: "a.ts" });
    const result = await call("edit", { path: "a.ts", oldText: "const b = 2;", newText: "const b = 3;\nconst c = 4;" });
    expect(result).toMatchObject({ output: "Edited a.ts: replaced 1 line(s) at line 2 with 2 line(s)." });
    expect(result.isError).toBeUndefined();
    expect(readFileSync(file("a.ts"), "utf8")).toBe("const a = 1;\nconst b = 3;\nconst c = 4;\n");
    // Its own edit keeps the file current: a second edit needs no new read.
    expect(
      (await call("edit", { path: "a.ts", oldText: "const a = 1;", newText: "const a = 0;" })).isError,
    ).toBeUndefined();
  });

  it("requires a read first, and a new read after the file changed on disk", async () => {
    writeFileSync(file("a.ts"), "one\n");
    const { call } = toolsIn(workspace.path);
    expect(await call("edit", { path: "a.ts", oldText: "one", newText: "two" })).toMatchObject({
      isError: true,
      output: "Error: read a.ts before editing it, so the edit matches the file as it is",
    });
    await call("read", { path: "a.ts" });
    writeFileSync(file("a.ts"), "one!\n");
    utimesSync(file("a.ts"), new Date(), new Date(Date.now() + 5000));
    expect(await call("edit", { path: "a.ts", oldText: "one", newText: "two" })).toMatchObject({
      isError: true,
      output: "Error: a.ts changed on disk since you last read it; read it again before editing",
    });
    expect(readFileSync(file("a.ts"), "utf8")).toBe("one!\n");
  });

  it("reports no match, with a hint when only whitespace differs, and several matches with their lines", async () => {
    writeFileSync(file("a.ts"), "if (x) {\n    go();\n}\nstop();\nstop();\n");
    const { call } = toolsIn(workspace.path);
    await call("read", { path: "a.ts" });
    const missing = await call("edit", { path: "a.ts", oldText: "run();", newText: "walk();" });
    expect(missing).toMatchObject({
      isError: true,
      output: expect.stringMatching(/^Error: oldText not found in a\.ts; it must match the file exactly/),
    });
    const indented = await call("edit", { path: "a.ts", oldText: "if (x) {\n  go();", newText: "if (y) {\n  go();" });
    expect(text(indented)).toMatch(/different whitespace or indentation/);
    const several = await call("edit", { path: "a.ts", oldText: "stop();", newText: "halt();" });
    expect(several).toMatchObject({
      isError: true,
      output: "Error: oldText matches 2 places in a.ts (lines 4, 5); include more surrounding text to make it unique",
    });
    expect(await call("edit", { path: "a.ts", oldText: "", newText: "x" })).toMatchObject({ isError: true });
    expect(await call("edit", { path: "a.ts", oldText: "go();", newText: "go();" })).toMatchObject({ isError: true });
    expect(readFileSync(file("a.ts"), "utf8")).toBe("if (x) {\n    go();\n}\nstop();\nstop();\n");
  });

  it("keeps CRLF line endings when oldText and newText use plain newlines", async () => {
    writeFileSync(file("w.txt"), "a\r\nb\r\nc\r\n");
    const { call } = toolsIn(workspace.path);
    await call("read", { path: "w.txt" });
    await call("edit", { path: "w.txt", oldText: "a\nb", newText: "a\nB\nb" });
    expect(readFileSync(file("w.txt"), "utf8")).toBe("a\r\nB\r\nb\r\nc\r\n");
  });

  it("does not double a CRLF newText in a CRLF file, and matches a mixed-ending file's LF lines exactly", async () => {
    writeFileSync(file("w.txt"), "a\r\nb\r\n");
    writeFileSync(file("mixed.txt"), "x\r\ny\nz\n");
    const { call } = toolsIn(workspace.path);
    await call("read", { path: "w.txt" });
    await call("read", { path: "mixed.txt" });
    expect((await call("edit", { path: "w.txt", oldText: "b", newText: "b\r\nc" })).isError).toBeUndefined();
    expect(readFileSync(file("w.txt"), "utf8")).toBe("a\r\nb\r\nc\r\n");
    expect((await call("edit", { path: "mixed.txt", oldText: "y\nz", newText: "Y\nZ" })).isError).toBeUndefined();
    expect(readFileSync(file("mixed.txt"), "utf8")).toBe("x\r\nY\nZ\n");
  });

  it("counts overlapping matches as several, and inserts newText literally ($& and $1 included)", async () => {
    writeFileSync(file("b.txt"), "}\n}\n}\n");
    writeFileSync(file("c.txt"), "price\n");
    const { call } = toolsIn(workspace.path);
    await call("read", { path: "b.txt" });
    await call("read", { path: "c.txt" });
    expect(await call("edit", { path: "b.txt", oldText: "}\n}", newText: "}" })).toMatchObject({
      isError: true,
      output: "Error: oldText matches 2 places in b.txt (lines 1, 2); include more surrounding text to make it unique",
    });
    await call("edit", { path: "c.txt", oldText: "price", newText: "$& $1 $$ $` $'" });
    expect(readFileSync(file("c.txt"), "utf8")).toBe("$& $1 $$ $` $'\n");
  });

  it("says before the call whether it would fail (check), changing nothing", async () => {
    writeFileSync(file("a.ts"), "const a = 1;\n");
    const { tools, call } = toolsIn(workspace.path);
    const check = (name: string, input: Record<string, string>): Promise<string | undefined> =>
      checkToolCall(tools, { name, input });
    expect(await check("edit", { path: "a.ts", oldText: "const a = 1;", newText: "x" })).toBe(
      "read a.ts before editing it, so the edit matches the file as it is",
    );
    await call("read", { path: "a.ts" });
    expect(await check("edit", { path: "a.ts", oldText: "const b", newText: "x" })).toMatch(
      /^oldText not found in a\.ts; it must match the file exactly/,
    );
    expect(await check("edit", { path: "gone.ts", oldText: "a", newText: "b" })).toBe(
      "gone.ts does not exist; create it with write",
    );
    expect(await check("edit", { path: "../out.ts", oldText: "a", newText: "b" })).toMatch(/outside the workspace/);
    expect(await check("edit", { path: "a.ts", oldText: "const a = 1;", newText: "const a = 2;" })).toBeUndefined();
    expect(await check("write", { path: "../x.txt", content: "x" })).toMatch(/outside the workspace/);
    expect(await check("write", { path: "new/x.txt", content: "x" })).toBeUndefined();
    expect(await check("read", { path: "../x.txt" })).toBeUndefined();
    expect(readFileSync(file("a.ts"), "utf8")).toBe("const a = 1;\n");
    expect(existsSync(file("new"))).toBe(false);
  });

  it("applies parallel edits of one file one after the other, losing none", async () => {
    writeFileSync(file("many.txt"), Array.from({ length: 8 }, (_, index) => `item ${index}`).join("\n") + "\n");
    const { call, callAll } = toolsIn(workspace.path);
    await call("read", { path: "many.txt" });
    const results = await callAll(
      Array.from(
        { length: 8 },
        (_, index) =>
          ["edit", { path: "many.txt", oldText: `item ${index}`, newText: `done ${index}` }] as [
            string,
            Record<string, string>,
          ],
      ),
    );
    expect(results.map((result) => result.isError)).toStrictEqual(Array(8).fill(undefined));
    expect(readFileSync(file("many.txt"), "utf8")).toBe(
      Array.from({ length: 8 }, (_, index) => `done ${index}`).join("\n") + "\n",
    );
  });
});

describe("write", () => {
  it("creates a file with its missing directories, replaces one, and lets edit follow without a read", async () => {
    const { call } = toolsIn(workspace.path);
    expect((await call("write", { path: "src/deep/new.ts", content: "a\nb\n" })).output).toBe(
      "Created src/deep/new.ts (2 lines, 4 bytes).",
    );
    expect((await call("write", { path: "src/deep/new.ts", content: "c\n" })).output).toBe(
      "Replaced src/deep/new.ts (1 line, 2 bytes).",
    );
    expect((await call("edit", { path: "src/deep/new.ts", oldText: "c", newText: "d" })).isError).toBeUndefined();
    expect(readFileSync(file("src/deep/new.ts"), "utf8")).toBe("d\n");
  });

  it("validates its input like any tool: a missing content is an error result", async () => {
    const result = await toolsIn(workspace.path).call("write", { path: "x.txt" });
    expect(result.isError).toBe(true);
    expect(text(result)).toContain("content");
  });
});

describe("grep", () => {
  beforeEach(() => {
    mkdirSync(file("src/lib"), { recursive: true });
    mkdirSync(file("node_modules/dep"), { recursive: true });
    mkdirSync(file(".git"));
    writeFileSync(file("src/a.ts"), "export const needle = 1;\nconst hay = 2;\n");
    writeFileSync(file("src/lib/b.ts"), "// Needle here\n");
    writeFileSync(file("src/lib/c.md"), "needle in docs\n");
    writeFileSync(file("node_modules/dep/index.js"), "needle\n");
    writeFileSync(file(".git/config"), "needle\n");
    writeFileSync(file("bin.dat"), Buffer.from("needle\0\0"));
  });

  it("finds lines by regular expression as path:line: text, skipping .git, node_modules and binary files", async () => {
    const { call } = toolsIn(workspace.path);
    expect((await call("grep", { pattern: "need+le" })).output).toBe(
      "src/lib/c.md:1: needle in docs\nsrc/a.ts:1: export const needle = 1;",
    );
    expect((await call("grep", { pattern: "needle", ignoreCase: true, glob: "*.ts" })).output).toBe(
      "src/lib/b.ts:1: // Needle here\nsrc/a.ts:1: export const needle = 1;",
    );
    expect((await call("grep", { pattern: "needle", path: "src/lib" })).output).toBe("src/lib/c.md:1: needle in docs");
    expect((await call("grep", { pattern: "needle", glob: "src/**/*.md" })).output).toBe(
      "src/lib/c.md:1: needle in docs",
    );
    expect((await call("grep", { pattern: "needle", path: "src/a.ts" })).output).toBe(
      "src/a.ts:1: export const needle = 1;",
    );
    expect((await call("grep", { pattern: "absent" })).output).toBe("No matches.");
  });

  it("caps the results with a note, and reports an invalid pattern", async () => {
    writeFileSync(file("many.txt"), "hit\n".repeat(50));
    const { call } = toolsIn(workspace.path);
    const output = text(await call("grep", { pattern: "hit", maxResults: 5 })).split("\n");
    expect(output).toHaveLength(6);
    expect(output.at(-1)).toBe("[stopped at 5 matches; there are more: narrow the pattern, path or glob]");
    expect(await call("grep", { pattern: "(" })).toMatchObject({
      isError: true,
      output: expect.stringMatching(/^Error: invalid regular expression/),
    });
  });
});

describe("list", () => {
  it("shows a tree to a depth, directories first, without entering .git or node_modules", async () => {
    mkdirSync(file("src/lib/deep"), { recursive: true });
    mkdirSync(file("node_modules/dep"), { recursive: true });
    mkdirSync(file(".git"));
    writeFileSync(file("src/lib/deep/x.ts"), "");
    writeFileSync(file("src/a.ts"), "");
    writeFileSync(file("README.md"), "");
    const { call } = toolsIn(workspace.path);
    expect((await call("list", {})).output).toBe(
      [".git/ (not listed)", "node_modules/ (not listed)", "src/", "  lib/", "  a.ts", "README.md"].join("\n"),
    );
    expect((await call("list", { path: "src", depth: 5 })).output).toBe(
      ["lib/", "  deep/", "    x.ts", "a.ts"].join("\n"),
    );
    expect(await call("list", { path: "README.md" })).toMatchObject({ isError: true });
  });
});
