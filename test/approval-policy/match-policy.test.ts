import { describe, expect, it } from "vitest";
import { isAgentError, matchPolicy, type ApprovalPolicy, type ApprovalRule } from "simple-agent-loop";

const policy = (...rules: ApprovalRule[]): ApprovalPolicy => ({ rules });
const call = (name: string, input: Record<string, string | string[] | number> = {}) => ({ name, input });

describe("matchPolicy: tools", () => {
  it("matches names exactly and with * as a wildcard; no rule is undefined", () => {
    const rules = policy(
      { id: "read", tool: "read", action: "allow" },
      { id: "github", tool: "mcp__github__*", action: "ask" },
      { id: "list", tool: ["ls", "glob"], action: "allow" },
    );
    expect(matchPolicy(rules, call("read"))).toStrictEqual({ action: "allow", rule: "read" });
    expect(matchPolicy(rules, call("mcp__github__create_issue"))).toStrictEqual({ action: "ask", rule: "github" });
    expect(matchPolicy(rules, call("glob"))).toStrictEqual({ action: "allow", rule: "list" });
    expect(matchPolicy(rules, call("reader"))).toBeUndefined();
    expect(matchPolicy(rules, call("mcp__gitlab__x"))).toBeUndefined();
    expect(matchPolicy(policy({ id: "all", tool: "*", action: "deny", reason: "no" }), call("anything"))).toStrictEqual(
      { action: "deny", rule: "all", reason: "no" },
    );
  });

  it("decides by action, not by order: deny over ask over allow; of one action the first", () => {
    const rules: ApprovalRule[] = [
      { id: "allow-all", tool: "*", action: "allow" },
      { id: "ask-bash", tool: "bash", action: "ask" },
      { id: "deny-rm", tool: "bash", input: { command: { prefix: "rm" } }, action: "deny", reason: "no rm" },
      { id: "deny-rm-2", tool: "bash", input: { command: { prefix: "rm -rf" } }, action: "deny" },
    ];
    for (const order of [rules, [...rules].reverse()]) {
      expect(matchPolicy(policy(...order), call("bash", { command: "rm -rf /" }))?.action).toBe("deny");
      expect(matchPolicy(policy(...order), call("bash", { command: "ls" }))).toStrictEqual({
        action: "ask",
        rule: "ask-bash",
      });
      expect(matchPolicy(policy(...order), call("read"))).toStrictEqual({ action: "allow", rule: "allow-all" });
    }
    expect(matchPolicy(policy(...rules), call("bash", { command: "rm -rf /" }))?.rule).toBe("deny-rm");
  });
});

describe("matchPolicy: input matchers", () => {
  it("glob: paths normalized first; * within a segment, ** zero or more directories, ? one character", () => {
    const env = policy({ id: "env", tool: "write", input: { path: { glob: ".env" } }, action: "deny" });
    expect(matchPolicy(env, call("write", { path: "src/../.env" }))?.rule).toBe("env");
    expect(matchPolicy(env, call("write", { path: "./.env" }))?.rule).toBe("env");
    expect(matchPolicy(env, call("write", { path: "a//b/../../.env" }))?.rule).toBe("env");
    expect(matchPolicy(env, call("write", { path: "src/.env" }))).toBeUndefined();
    const git = policy({ id: "git", tool: "write", input: { path: { glob: "**/.git/**" } }, action: "ask" });
    for (const path of [".git/config", "a/b/.git/hooks/pre-commit", ".git", "/home/me/repo/.git/x"])
      expect(matchPolicy(git, call("write", { path }))?.rule, path).toBe("git");
    for (const path of [".github/workflows/ci.yml", "src/git/x", "x.git/y"])
      expect(matchPolicy(git, call("write", { path })), path).toBeUndefined();
    const ts = policy({
      id: "ts",
      tool: "write",
      input: { path: { glob: ["src/*.ts", "test/?.ts"] } },
      action: "allow",
    });
    expect(matchPolicy(ts, call("write", { path: "src/a.ts" }))?.rule).toBe("ts");
    expect(matchPolicy(ts, call("write", { path: "src/a/b.ts" }))).toBeUndefined();
    expect(matchPolicy(ts, call("write", { path: "test/a.ts" }))?.rule).toBe("ts");
    expect(matchPolicy(ts, call("write", { path: "test/ab.ts" }))).toBeUndefined();
    // An allow for src/* never covers a path that climbs out of it.
    expect(matchPolicy(ts, call("write", { path: "src/../../etc/x.ts" }))).toBeUndefined();
    // Regex characters in a glob are literal.
    const dots = policy({ id: "d", tool: "write", input: { path: { glob: "a.(b)+" } }, action: "allow" });
    expect(matchPolicy(dots, call("write", { path: "a.(b)+" }))?.rule).toBe("d");
    expect(matchPolicy(dots, call("write", { path: "aX(b)+" }))).toBeUndefined();
  });

  it("prefix: ends at a word boundary", () => {
    const status = policy({ id: "st", tool: "bash", input: { command: { prefix: "git status" } }, action: "allow" });
    expect(matchPolicy(status, call("bash", { command: "git status" }))?.rule).toBe("st");
    expect(matchPolicy(status, call("bash", { command: "git status -s" }))?.rule).toBe("st");
    expect(matchPolicy(status, call("bash", { command: "  git   status  -s" }))?.rule).toBe("st");
    expect(matchPolicy(status, call("bash", { command: "git statusx" }))).toBeUndefined();
    expect(matchPolicy(status, call("bash", { command: "git stat" }))).toBeUndefined();
  });

  it("prefix: a chaining or substituting command never matches an allow", () => {
    const status = policy({ id: "st", tool: "bash", input: { command: { prefix: "git status" } }, action: "allow" });
    for (const command of [
      "git status; rm -rf ~",
      "git status && rm -rf ~",
      "git status || true",
      "git status | sh",
      "git status `rm -rf ~`",
      "git status $(rm -rf ~)",
      "git status > ~/.bashrc",
      "git status < /etc/passwd",
      "git status\nrm -rf ~",
      "git status & rm -rf ~",
    ])
      expect(matchPolicy(status, call("bash", { command })), command).toBeUndefined();
  });

  it("prefix: a deny or ask is checked against each part of a chained command", () => {
    const rm = policy({ id: "rm", tool: "bash", input: { command: { prefix: "rm" } }, action: "deny" });
    for (const command of [
      "git status && rm -rf ~",
      "ls; rm x",
      "echo $(rm -rf ~)",
      "echo `rm x`",
      "(rm x)",
      "true | rm x",
      "ls\nrm x",
      "rm",
    ])
      expect(matchPolicy(rm, call("bash", { command })), command).toStrictEqual({ action: "deny", rule: "rm" });
    expect(matchPolicy(rm, call("bash", { command: "rmdir x; ls" }))).toBeUndefined();
    const ask = policy({
      id: "push",
      tool: "bash",
      input: { command: { prefix: ["git push", "npm publish"] } },
      action: "ask",
    });
    expect(matchPolicy(ask, call("bash", { command: "git add . && git push origin" }))?.rule).toBe("push");
  });

  it("equals and regex; a missing property or a value of another type does not match", () => {
    const rules = policy(
      { id: "eq", tool: "fetch", input: { method: { equals: "GET" }, retries: { equals: 3 } }, action: "allow" },
      { id: "re", tool: "fetch", input: { url: { regex: "^https://internal\\." } }, action: "deny" },
    );
    expect(matchPolicy(rules, call("fetch", { method: "GET", retries: 3 }))?.rule).toBe("eq");
    expect(matchPolicy(rules, call("fetch", { method: "GET" }))).toBeUndefined();
    expect(matchPolicy(rules, call("fetch", { method: "POST", retries: 3 }))).toBeUndefined();
    expect(matchPolicy(rules, call("fetch", { url: "https://internal.corp/x" }))?.rule).toBe("re");
    expect(matchPolicy(rules, call("fetch", { url: "https://example.com" }))).toBeUndefined();
    const path = policy({ id: "p", tool: "write", input: { path: { glob: "**" } }, action: "allow" });
    expect(matchPolicy(path, call("write", {}))).toBeUndefined();
    expect(matchPolicy(path, call("write", { path: 7 }))).toBeUndefined();
    expect(matchPolicy(path, { name: "write", input: { path: null } })).toBeUndefined();
  });

  it("an array of strings: a deny matches when any element does, an allow only when every one does", () => {
    const rules = policy(
      { id: "src", tool: "edit", input: { paths: { glob: "src/**" } }, action: "allow" },
      { id: "env", tool: "edit2", input: { paths: { glob: "**/.env" } }, action: "deny" },
    );
    expect(matchPolicy(rules, call("edit", { paths: ["src/a", "src/b/c"] }))?.rule).toBe("src");
    expect(matchPolicy(rules, call("edit", { paths: ["src/a", ".env"] }))).toBeUndefined();
    expect(matchPolicy(rules, call("edit2", { paths: ["src/a", "x/.env"] }))?.rule).toBe("env");
  });

  it("a string too long to read never matches an allow, and matches every deny that could apply", () => {
    const long = `ls ${"a".repeat(200_000)}`;
    const rules = policy(
      { id: "ls", tool: "bash", input: { command: { prefix: "ls" } }, action: "allow" },
      { id: "curl", tool: "bash2", input: { command: { regex: "curl" } }, action: "deny" },
    );
    expect(matchPolicy(rules, call("bash", { command: long }))).toBeUndefined();
    expect(matchPolicy(rules, call("bash2", { command: long }))?.rule).toBe("curl");
  });
});

describe("a malformed policy is an AgentError naming the rule and field", () => {
  const cases: [string, unknown, RegExp][] = [
    ["no id", { rules: [{ tool: "x", action: "allow" }] }, /rules\[0\]\.id/],
    [
      "duplicate id",
      {
        rules: [
          { id: "a", tool: "x", action: "allow" },
          { id: "a", tool: "y", action: "deny" },
        ],
      },
      /rules\[1\].*two rules have the id "a"/,
    ],
    ["unknown action", { rules: [{ id: "a", tool: "x", action: "maybe" }] }, /rules\[0\] \("a"\)\.action/],
    ["no tool", { rules: [{ id: "a", action: "allow" }] }, /\("a"\)\.tool/],
    [
      "unknown matcher",
      { rules: [{ id: "a", tool: "x", action: "allow", input: { p: { like: "x" } } }] },
      /\("a"\)\.input\.p .*glob, prefix, equals, regex/,
    ],
    [
      "two matchers",
      { rules: [{ id: "a", tool: "x", action: "allow", input: { p: { glob: "x", prefix: "y" } } }] },
      /\("a"\)\.input\.p/,
    ],
    [
      "bad regex",
      { rules: [{ id: "r", tool: "x", action: "deny", input: { p: { regex: "(" } } }] },
      /\("r"\)\.input\.p\.regex does not compile/,
    ],
    [
      "catastrophic regex",
      { rules: [{ id: "r", tool: "x", action: "deny", input: { p: { regex: "(a+)+$" } } }] },
      /\("r"\)\.input\.p\.regex .*backtrack/,
    ],
    [
      "alternation under a quantifier",
      { rules: [{ id: "r", tool: "x", action: "deny", input: { p: { regex: "(a|aa)*b" } } }] },
      /backtrack/,
    ],
    [
      "back-reference",
      { rules: [{ id: "r", tool: "x", action: "deny", input: { p: { regex: "(a)\\1" } } }] },
      /back-reference/,
    ],
    [
      "unknown rule field",
      { rules: [{ id: "a", tool: "x", action: "allow", when: 1 }] },
      /\("a"\): unknown field "when"/,
    ],
    ["classifier without classify", { classifier: { name: "c" } }, /classifier\.classify/],
    ["unknown human", { human: "ask" }, /human/],
    ["rules not an array", { rules: {} }, /rules must be an array/],
  ];
  for (const [what, given, message] of cases)
    it(what, () => {
      let thrown: unknown;
      try {
        matchPolicy(given as ApprovalPolicy, call("x"));
      } catch (error) {
        thrown = error;
      }
      expect(isAgentError(thrown), what).toBe(true);
      expect((thrown as Error).message).toMatch(message);
    });

  it("a regex a policy accepts runs in bounded time on hostile input", () => {
    const rules = policy({ id: "r", tool: "x", input: { p: { regex: "^(a|b)c*d+e?$" } }, action: "deny" });
    expect(matchPolicy(rules, call("x", { p: "acccddd" }))?.rule).toBe("r");
    const fine = policy({ id: "r", tool: "x", input: { p: { regex: "^[a-z]+\\d*\\.txt$" } }, action: "deny" });
    const started = performance.now();
    expect(matchPolicy(fine, call("x", { p: `${"a".repeat(9_000)}!` }))).toBeUndefined();
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});
