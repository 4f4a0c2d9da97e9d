import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { matchPolicy, type ApprovalPolicy } from "simple-agent-loop";
import { usage } from "../../src/cli/args.ts";
import { runPolicyCommand } from "../../src/cli/policy-command.ts";
import { modePolicy } from "../../src/cli/policy-presets.ts";

function run(argv: string[]): { code: number; policy: ApprovalPolicy } {
  let out = "";
  const code = runPolicyCommand(argv, { stdout: { write: (text: string) => (out += text) }, stdin: { isTTY: false } });
  return { code, policy: JSON.parse(out) as ApprovalPolicy };
}

describe("the CLI's modes as policy presets", () => {
  it("plan denies write, edit and bash; accept-edits allows write and edit; yolo allows all; every preset allows reads and asks for .git/", () => {
    const plan = modePolicy("plan");
    expect(matchPolicy(plan, { name: "bash", input: { command: "ls" } })?.action).toBe("deny");
    expect(matchPolicy(plan, { name: "edit", input: { path: "a" } })?.action).toBe("deny");
    const edits = modePolicy("accept-edits");
    expect(matchPolicy(edits, { name: "write", input: { path: "src/a.ts" } })?.action).toBe("allow");
    expect(matchPolicy(edits, { name: "bash", input: { command: "ls" } })).toBeUndefined();
    const yolo = modePolicy("yolo");
    expect(matchPolicy(yolo, { name: "bash", input: { command: "rm -rf x" } })?.action).toBe("allow");
    for (const mode of ["default", "plan", "accept-edits", "yolo"] as const) {
      const preset = modePolicy(mode);
      expect(matchPolicy(preset, { name: "read", input: { path: "a" } })?.action, mode).toBe("allow");
      const hooks = matchPolicy(preset, { name: "write", input: { path: "src/../.git/hooks/pre-commit" } });
      expect(hooks?.action === "ask" || hooks?.action === "deny", mode).toBe(true);
      const config = matchPolicy(preset, { name: "edit", input: { path: ".simple-agent-loop/mcp.json" } });
      expect(config?.action === "ask" || config?.action === "deny", mode).toBe(true);
    }
  });

  it("policy --json prints the effective policy: the preset, the file's rules, human deny without a terminal", () => {
    const dir = mkdtempSync(join(tmpdir(), "policy-"));
    const file = join(dir, "policy.json");
    writeFileSync(
      file,
      JSON.stringify({
        rules: [{ id: "no-push", tool: "bash", input: { command: { prefix: "git push" } }, action: "deny" }],
      }),
    );
    const { code, policy } = run(["--mode", "accept-edits", "--policy", file, "--json"]);
    expect(code).toBe(0);
    expect(policy.human).toBe("deny");
    expect(policy.rules!.map((rule) => rule.id)).toStrictEqual([
      "read-only",
      "code-runs-from",
      "accept-edits",
      "no-push",
    ]);
  });

  it("a malformed file exits 2 naming the problem", () => {
    const dir = mkdtempSync(join(tmpdir(), "policy-"));
    const bad = join(dir, "bad.json");
    writeFileSync(bad, JSON.stringify({ rules: [{ id: "x", tool: "bash", action: "perhaps" }] }));
    expect(() => run(["--policy", bad, "--json"])).toThrow(
      expect.objectContaining({ exitCode: 2, message: expect.stringMatching(/bad\.json.*rules\[0\] \("x"\)\.action/) }),
    );
    const broken = join(dir, "broken.json");
    writeFileSync(broken, "{ not json");
    expect(() => run(["--policy", broken])).toThrow(expect.objectContaining({ exitCode: 2 }));
    expect(() => run(["--mode", "reckless"])).toThrow(expect.objectContaining({ exitCode: 2 }));
  });

  it("policy --help prints its usage and exits 0, as the main --help names it", () => {
    let out = "";
    const code = runPolicyCommand(["--help"], { stdout: { write: (text: string) => (out += text) }, stdin: {} });
    expect(code).toBe(0);
    expect(out).toContain("Usage: simple-agent-loop policy [--mode <mode>] [--policy <file>] [--json]");
    expect(usage).toContain("simple-agent-loop policy [--mode <mode>] [--policy <file>] [--json]");
  });
});
