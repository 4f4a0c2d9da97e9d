// A deny or ask prefix names the command a rule is about: it must catch that command however the
// shell is asked to run it (quoted, through a directory, after an assignment or a keyword, through
// sudo/env/xargs, eval, sh -c), and a deny or ask reads whatever a property's value holds
// (numbers, nested lists and objects) and paths in any letter case. An allow stays strict.
import { describe, expect, it } from "vitest";
import { matchPolicy, type ApprovalPolicy } from "simple-agent-loop";

const policy: ApprovalPolicy = {
  rules: [
    { id: "rm", tool: "bash", input: { command: { prefix: "rm" } }, action: "deny" },
    { id: "push", tool: "bash", input: { command: { prefix: "git push" } }, action: "ask" },
    { id: "status", tool: "bash", input: { command: { prefix: "git status" } }, action: "allow" },
    { id: "secrets", tool: "write", input: { path: { glob: "**/.env" } }, action: "deny" },
    { id: "src", tool: "write", input: { path: { glob: "src/**" } }, action: "allow" },
    { id: "big", tool: "pay", input: { amount: { regex: "^[0-9]{4,}$" } }, action: "deny" },
  ],
};
const decide = (name: string, input: Record<string, unknown>) => matchPolicy(policy, { name, input: input as never });

describe("a deny or ask prefix catches the command however the shell is told to run it", () => {
  const runsRm = [
    "\\rm -rf /",
    "'rm' -rf /",
    '"rm" -rf /',
    "r\\m -rf /",
    "r''m -rf /",
    "$'\\x72m' -rf /",
    "rm${IFS}-rf${IFS}/",
    "/bin/rm -rf /",
    "FOO=1 rm -rf /",
    "if true; then rm -rf /; fi",
    "for f in *; do rm $f; done",
    "{ rm -rf /; }",
    "! rm -rf /",
    "time rm -rf /",
    "coproc rm -rf /",
    "command rm -rf /",
    "exec rm -rf /",
    "env -i PATH=/bin rm -rf /",
    "sudo -u root rm -rf /",
    "nohup rm -rf / &",
    "xargs rm < list",
    "find . -name '*.o' -exec rm {} ;",
    "eval 'rm -rf /'",
    "bash -c 'rm -rf /'",
    'sh -lc "cd /tmp && rm -rf x"',
    "sudo bash -c 'rm -rf /'",
    "RM -rf /",
  ];
  for (const command of runsRm)
    it(`deny rm: ${JSON.stringify(command)}`, () => {
      expect(decide("bash", { command })).toMatchObject({ action: "deny", rule: "rm" });
    });

  it("asks for git push however it is spelled, and still not for what merely starts alike", () => {
    for (const command of ['git "push" origin', "GIT_DIR=x git push", "/usr/bin/git push", "env git push -f"])
      expect(decide("bash", { command }), command).toMatchObject({ action: "ask", rule: "push" });
    for (const command of ["rmdir x", "rm-tool", "git pushx", "echo rm", "ls -l"])
      expect(decide("bash", { command })?.action, command).not.toBe("deny");
    expect(decide("bash", { command: "git status -s" })).toStrictEqual({ action: "allow", rule: "status" });
    // The strict reading of an allow is unchanged: quoted or prefixed, it is not the allowed command.
    for (const command of ['git "status"', "X=1 git status", "/usr/bin/git status"])
      expect(decide("bash", { command }), command).toBeUndefined();
  });
});

describe("a deny or ask reads whatever the value holds", () => {
  it("strings nested in lists and objects, numbers and booleans as their text", () => {
    expect(decide("bash", { command: [["rm -rf /"]] })).toMatchObject({ action: "deny" });
    expect(decide("bash", { command: { run: "rm -rf /" } })).toMatchObject({ action: "deny" });
    expect(decide("pay", { amount: 10000 })).toMatchObject({ action: "deny", rule: "big" });
    expect(decide("pay", { amount: [5, 10000] })).toMatchObject({ action: "deny", rule: "big" });
    expect(decide("pay", { amount: 50 })).toBeUndefined();
    let deep: unknown = "ok";
    for (let depth = 0; depth < 100; depth++) deep = [deep];
    // Too deep to read through: a deny that could apply matches.
    expect(decide("bash", { command: deep })).toMatchObject({ action: "deny" });
    // An allow still takes only a string or a list of strings.
    expect(decide("write", { path: [["src/a.ts"]] })).toBeUndefined();
  });

  it("a deny's glob matches the path in any letter case (one file on a disk that ignores case); an allow's does not", () => {
    for (const path of [".ENV", "config/.Env", "/home/u/app/.eNv"])
      expect(decide("write", { path }), path).toMatchObject({ action: "deny", rule: "secrets" });
    expect(decide("write", { path: "SRC/a.ts" })).toBeUndefined();
    expect(decide("write", { path: "src/a.ts" })).toStrictEqual({ action: "allow", rule: "src" });
  });
});
