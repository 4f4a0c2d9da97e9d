// grep's globs: what they match, and that a glob from the model costs time in proportion to
// the path and the glob, never the exponential time of a backtracking regular expression.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { globMatcher } from "../../src/cli/tools/glob.ts";
import { tempDirectory } from "./helpers.ts";
import { text, toolsIn } from "./tool-calls.ts";

const matches = (glob: string, paths: string[]): string[] => paths.filter(globMatcher(glob));

describe("globMatcher", () => {
  it("keeps * and ? within a segment, lets ** cross them, and ** followed by / match no directory", () => {
    const paths = ["a.ts", "b.tsx", "src/a.ts", "src/a.test.ts", "src/x/y/b.test.ts", "test/a.test.ts", ".ts"];
    expect(matches("*.ts", paths)).toStrictEqual(["a.ts", ".ts"]);
    expect(matches("?.ts", paths)).toStrictEqual(["a.ts"]);
    expect(matches("src/**/*.test.ts", paths)).toStrictEqual(["src/a.test.ts", "src/x/y/b.test.ts"]);
    expect(matches("**.ts", paths)).toStrictEqual([
      "a.ts",
      "src/a.ts",
      "src/a.test.ts",
      "src/x/y/b.test.ts",
      "test/a.test.ts",
      ".ts",
    ]);
    expect(matches("src/**", paths)).toStrictEqual(["src/a.ts", "src/a.test.ts", "src/x/y/b.test.ts"]);
    expect(matches("**/b*", paths)).toStrictEqual(["b.tsx", "src/x/y/b.test.ts"]);
  });

  it("reads {a,b} as either, nested too, and every other character as itself", () => {
    const paths = ["a.ts", "b.ts", "c.ts", "bd.ts", "cd.ts", "a+b.ts", "aXb.ts", "a}b,c", "[x].md", "abts"];
    expect(matches("{a,b}.ts", paths)).toStrictEqual(["a.ts", "b.ts"]);
    expect(matches("{a,{b,c}d}.ts", paths)).toStrictEqual(["a.ts", "bd.ts", "cd.ts"]);
    expect(matches("{,b}d.ts", ["d.ts", "bd.ts"])).toStrictEqual(["d.ts", "bd.ts"]);
    expect(matches("a+b.ts", paths)).toStrictEqual(["a+b.ts"]);
    expect(matches("a.ts", paths)).toStrictEqual(["a.ts"]);
    expect(matches("a}b,c", paths)).toStrictEqual(["a}b,c"]);
    expect(matches("[x].md", paths)).toStrictEqual(["[x].md"]);
    expect(() => globMatcher("{a,b")).toThrow('invalid glob {a,b: a "{" is not closed');
  });

  it("answers at once for a glob that would backtrack exponentially as a regular expression", () => {
    const started = performance.now();
    expect(globMatcher(`${"*a".repeat(30)}*b`)("a".repeat(5000))).toBe(false);
    expect(globMatcher(`${"**a".repeat(30)}**b`)(`${"a/".repeat(2000)}c`)).toBe(false);
    expect(performance.now() - started).toBeLessThan(10_000);
  });

  it("keeps grep responsive with such a glob", async () => {
    const workspace = tempDirectory("glob-ws-");
    try {
      writeFileSync(join(workspace.path, "a".repeat(200)), "needle\n");
      const result = await toolsIn(workspace.path).call("grep", { pattern: "needle", glob: `${"*a".repeat(12)}*b` });
      expect(text(result)).toBe("No matches.");
    } finally {
      workspace.remove();
    }
  }, 30_000);
});
