// The command line: what each form means, and the usage errors (exit code 2) for what it cannot mean.
import { describe, expect, it } from "vitest";
import { parseCliArgs, usage } from "../../src/cli/args.ts";
import { isCliError } from "../../src/cli/cli-error.ts";

function usageError(argv: string[]): string {
  try {
    parseCliArgs(argv);
  } catch (error) {
    if (isCliError(error) && error.exitCode === 2) return error.message;
    throw error;
  }
  throw new Error(`no usage error for ${argv.join(" ")}`);
}

describe("parseCliArgs", () => {
  it("reads a task and the options", () => {
    expect(
      parseCliArgs([
        "-p",
        "openai",
        "--model",
        "m",
        "-C",
        "/w",
        "--allow",
        "edit, write",
        "--allow=bash",
        "--json",
        "--max-turns",
        "7",
        "--mcp-config",
        "m.json",
        "fix",
        "the bug",
      ]),
    ).toStrictEqual({
      command: "run",
      task: "fix the bug",
      provider: "openai",
      model: "m",
      cwd: "/w",
      allow: ["edit", "write", "bash"],
      json: true,
      mcpConfig: "m.json",
      maxTurns: 7,
    });
    expect(parseCliArgs([])).toStrictEqual({ command: "run", allow: [], json: false, maxTurns: 100 });
    expect(parseCliArgs(["-y", "task"])).toMatchObject({ allow: "all", task: "task" });
    expect(parseCliArgs(["--context-window", "8192", "task"])).toMatchObject({ contextWindow: 8192, task: "task" });
  });

  it("takes --code-mode: the model also gets run_code", () => {
    expect(parseCliArgs(["--code-mode", "task"])).toMatchObject({ codeMode: true, task: "task" });
    expect(parseCliArgs(["task"])).not.toHaveProperty("codeMode");
  });

  it("takes --sandbox with one of its modes, and --allow-network", () => {
    expect(parseCliArgs(["--sandbox", "read-only", "task"])).toMatchObject({ sandbox: "read-only", task: "task" });
    expect(parseCliArgs(["--sandbox=off", "--allow-network"])).toMatchObject({ sandbox: "off", allowNetwork: true });
    expect(parseCliArgs(["--sandbox", "workspace-write"])).toMatchObject({ sandbox: "workspace-write" });
    expect(() => parseCliArgs(["--sandbox", "none"])).toThrow(
      '--sandbox must be one of "workspace-write", "read-only", "off"; got "none"',
    );
    expect(() => parseCliArgs(["--sandbox"])).toThrow("--sandbox needs a value");
  });

  it("takes --allow-host, repeated or comma-separated, and refuses what is not a host", () => {
    expect(
      parseCliArgs(["--allow-host", "registry.npmjs.org,*.github.com", "--allow-host=10.0.0.5:8080"]),
    ).toMatchObject({
      allowHosts: [
        { host: "registry.npmjs.org", subdomains: false, port: undefined },
        { host: "github.com", subdomains: true, port: undefined },
        { host: "10.0.0.5", subdomains: false, port: 8080 },
      ],
    });
    expect(() => parseCliArgs(["--allow-host", "https://registry.npmjs.org"])).toThrow(
      /--allow-host takes a host name, \*\.domain or an IP address/,
    );
    expect(() => parseCliArgs(["--allow-host", "x.org", "--allow-network"])).toThrow(
      "--allow-network and --allow-host do not go together",
    );
    expect(() => parseCliArgs(["--allow-hosts", "x.org"])).toThrow("(did you mean --allow-host?)");
  });

  it("takes --resume with or without an id: the next argument, unless it is an option or --, is always the id", () => {
    expect(parseCliArgs(["--resume"])).toMatchObject({ resume: {} });
    expect(parseCliArgs(["go on", "--resume"])).toMatchObject({ resume: {}, task: "go on" });
    expect(parseCliArgs(["--resume", "--", "go on"])).toMatchObject({ resume: {}, task: "go on" });
    expect(parseCliArgs(["--resume", "--yes", "go on"])).toMatchObject({ resume: {}, allow: "all", task: "go on" });
    for (const spelling of [
      ["--resume", "nosuchid"],
      ["--resume", "nope-123"],
      ["-r", "nope-123"],
      ["--resume=nope-123"],
    ])
      expect(parseCliArgs(spelling), spelling.join(" ")).toStrictEqual(
        expect.objectContaining({ resume: { id: spelling.at(-1)!.replace("--resume=", "") } }),
      );
    expect(parseCliArgs(["--resume", "go on"])).toMatchObject({ resume: { id: "go on" } });
    expect(parseCliArgs(["--resume", "nosuchid"])).not.toHaveProperty("task");
    expect(parseCliArgs(["-r", "20250102-030405-a1b2c3", "go on"])).toMatchObject({
      resume: { id: "20250102-030405-a1b2c3" },
      task: "go on",
    });
    expect(parseCliArgs(["--resume=my-session", "go on"])).toMatchObject({
      resume: { id: "my-session" },
      task: "go on",
    });
    expect(parseCliArgs(["--", "--resume"])).toMatchObject({ task: "--resume" });
  });

  it("takes --rewind with or without a turn, on --resume's session or the latest", () => {
    expect(parseCliArgs(["--rewind"])).toMatchObject({ rewind: {}, resume: {} });
    expect(parseCliArgs(["--rewind", "2", "--yes", "do it the other way"])).toMatchObject({
      rewind: { turn: 2 },
      resume: {},
      allow: "all",
      task: "do it the other way",
    });
    expect(parseCliArgs(["--resume", "20250102-030405-a1b2c3", "--rewind", "go on"])).toMatchObject({
      rewind: {},
      resume: { id: "20250102-030405-a1b2c3" },
      task: "go on",
    });
    expect(parseCliArgs(["--rewind=3"])).toMatchObject({ rewind: { turn: 3 } });
    expect(usageError(["--rewind=0"])).toContain("--rewind needs a positive integer");
    expect(usageError(["--rewind", "--json", "task"])).toContain("does not go with --json");
  });

  it("reads help, version and view", () => {
    expect(parseCliArgs(["--help", "--bogus"])).toStrictEqual({ command: "help" });
    expect(parseCliArgs(["-v"])).toStrictEqual({ command: "version" });
    expect(parseCliArgs(["view", "s.jsonl", "--port", "0", "--host", "::1"])).toStrictEqual({
      command: "view",
      path: "s.jsonl",
      port: 0,
      host: "::1",
    });
    expect(parseCliArgs(["view"])).toStrictEqual({ command: "view" });
    expect(usage).toContain("Exit codes: 0 done, 1 error, 2 usage, 130 interrupted.");
  });

  it("refuses what it cannot make sense of", () => {
    expect(usageError(["--bogus"])).toBe("unknown option --bogus; a task that starts with - goes after --");
    expect(usageError(["--modle", "m"])).toBe(
      "unknown option --modle (did you mean --model?); a task that starts with - goes after --",
    );
    expect(usageError(["-x"])).toBe("unknown option -x; a task that starts with - goes after --");
    expect(usageError(["--json=yes"])).toBe("--json takes no value");
    expect(usageError(["--provider", "skynet"])).toBe(
      "unknown provider skynet: use one of anthropic, openai, openai-responses, gemini, bedrock, demo, auto",
    );
    expect(usageError(["--max-turns", "0"])).toBe("--max-turns needs a positive integer, got 0");
    expect(usageError(["--context-window", "lots"])).toBe("--context-window needs a positive integer, got lots");
    expect(usageError(["--model"])).toBe("--model needs a value");
    expect(usageError(["-m"])).toBe("--model needs a value");
    expect(usageError(["view", "a", "b"])).toBe("view takes one session file, directory or session id");
    expect(usageError(["--port", "1", "task"])).toBe("--port and --host go with view");
    expect(usageError([" "])).toBe("the task is empty");
  });
});
