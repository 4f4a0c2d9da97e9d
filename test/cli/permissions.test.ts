// Who may run what: read-only tools freely; write, edit, bash (and MCP tools) after the user says
// so (once, always, or no with a reason) or a flag; without a terminal, a deny naming the flag.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { executeToolCalls, type JsonObject, type ToolCallMessage } from "simple-agent-loop";
import {
  permissionHook,
  type AskPermission,
  type PermissionDecision,
  type PermissionOptions,
} from "../../src/cli/permissions.ts";
import { checkToolCall, codingTools, readOnlyTools } from "../../src/cli/tools/index.ts";
import { tempDirectory } from "./helpers.ts";

const guarded = new Set(["write", "edit", "bash", "server__tool"]);
let next = 0;
const call = (name: string, input: JsonObject = {}): ToolCallMessage => ({
  type: "tool_call",
  id: `call_${++next}`,
  name,
  input,
});

/** A scripted user: answers in order, and records what was asked and how many prompts were open at once. */
function scriptedUser(answers: PermissionDecision[], answerDelayMs = 0) {
  const asked: string[] = [];
  let open = 0;
  let maxOpen = 0;
  const ask: AskPermission = async (request) => {
    asked.push(request.name);
    maxOpen = Math.max(maxOpen, ++open);
    await new Promise((resolve) => setTimeout(resolve, answerDelayMs));
    open--;
    const answer = answers.shift();
    if (answer === undefined) throw new Error(`unexpected question about ${request.name}`);
    return answer;
  };
  return { ask, asked, maxOpen: () => maxOpen };
}

function hook(options: Partial<PermissionOptions>) {
  const check = permissionHook({ guarded, allowed: new Set(), signal: () => new AbortController().signal, ...options });
  return (name: string, input?: JsonObject) => check({ call: call(name, input), session: { messages: [] } });
}

describe("permissions", () => {
  it("never asks about read-only tools, nor about tools it does not guard", async () => {
    const user = scriptedUser([]);
    const check = hook({ ask: user.ask });
    for (const name of readOnlyTools) expect(await check(name)).toBeUndefined();
    expect(await check("no_such_tool")).toBeUndefined();
    expect(user.asked).toStrictEqual([]);
  });

  it("asks every time after 'once', never again for that tool after 'always'", async () => {
    const user = scriptedUser([{ type: "allow-once" }, { type: "allow-once" }, { type: "allow-always" }]);
    const check = hook({ ask: user.ask });
    expect(await check("edit")).toBeUndefined();
    expect(await check("edit")).toBeUndefined();
    expect(await check("bash")).toBeUndefined();
    expect(await check("bash")).toBeUndefined();
    expect(user.asked).toStrictEqual(["edit", "edit", "bash"]);
  });

  it("turns a deny into the reason the model gets", async () => {
    const check = hook({
      ask: scriptedUser([
        { type: "deny", reason: "  use y.txt instead " },
        { type: "deny", reason: "" },
      ]).ask,
    });
    expect(await check("write")).toStrictEqual({ deny: "the user denied this call: use y.txt instead" });
    expect(await check("write")).toStrictEqual({ deny: "the user denied this call (no reason given)" });
  });

  it("asks one question at a time, and not at all for calls an 'always' answered while they waited", async () => {
    const user = scriptedUser([{ type: "allow-always" }, { type: "allow-once" }], 30);
    const check = hook({ ask: user.ask });
    const verdicts = await Promise.all([check("edit"), check("edit"), check("edit"), check("bash")]);
    expect(verdicts).toStrictEqual([undefined, undefined, undefined, undefined]);
    expect(user.asked).toStrictEqual(["edit", "bash"]);
    expect(user.maxOpen()).toBe(1);
  });

  it("follows --allow and --yes without asking", async () => {
    const user = scriptedUser([{ type: "allow-once" }]);
    const allowEdit = hook({ ask: user.ask, allowed: new Set(["edit", "server__tool"]) });
    expect(await allowEdit("edit")).toBeUndefined();
    expect(await allowEdit("server__tool")).toBeUndefined();
    expect(await allowEdit("bash")).toBeUndefined();
    expect(user.asked).toStrictEqual(["bash"]);
    const yes = hook({ allowed: "all" });
    for (const name of guarded) expect(await yes(name)).toBeUndefined();
  });

  it("without a terminal, denies guarded calls with the flag that allows them", async () => {
    const check = hook({});
    expect(await check("write")).toStrictEqual({
      deny: "write needs the user's permission and there is no terminal to ask; run with --allow write (or --yes to allow every tool)",
    });
    expect(await check("read")).toBeUndefined();
  });

  it("does not ask once the task is interrupted", async () => {
    const user = scriptedUser([]);
    const check = hook({ ask: user.ask, signal: () => AbortSignal.abort() });
    expect(await check("edit")).toStrictEqual({ deny: "the task was interrupted" });
    expect(user.asked).toStrictEqual([]);
  });

  it("asks every time about a call that writes where code runs from, whatever --yes, --allow or 'always' said", async () => {
    const alwaysAsk = async (request: { name: string; input: JsonObject }): Promise<string | undefined> =>
      request.input.path === ".git/config" ? "write .git/config changes a git repository's .git" : undefined;
    const user = scriptedUser([{ type: "allow-always" }, { type: "allow-once" }, { type: "deny", reason: "" }]);
    const requests: unknown[] = [];
    const ask: AskPermission = async (request, signal) => {
      requests.push(request);
      return user.ask(request, signal);
    };
    const check = hook({ ask, allowed: new Set(["bash"]), alwaysAsk });
    expect(await check("write", { path: "a.txt" })).toBeUndefined();
    expect(await check("write", { path: "b.txt" })).toBeUndefined();
    expect(await check("write", { path: ".git/config" })).toBeUndefined();
    expect(await check("write", { path: ".git/config" })).toStrictEqual({
      deny: "the user denied this call (no reason given)",
    });
    expect(user.asked).toStrictEqual(["write", "write", "write"]);
    expect(requests[1]).toStrictEqual({
      name: "write",
      input: { path: ".git/config" },
      alwaysAsk: "write .git/config changes a git repository's .git",
    });
    const yes = hook({ allowed: "all", alwaysAsk });
    expect(await yes("write", { path: "a.txt" })).toBeUndefined();
    expect(await yes("write", { path: ".git/config" })).toStrictEqual({
      deny: "write .git/config changes a git repository's .git; there is no terminal to ask on, and no flag allows it",
    });
  });

  it("does not ask about a call its tool's pre-check says would fail: it gets that error", async () => {
    const user = scriptedUser([{ type: "allow-once" }]);
    const editTool = {
      ...codingTools("/nonexistent").find((definition) => definition.name === "edit")!,
      check: async (input: unknown) =>
        (input as { oldText?: string }).oldText === "missing" ? "oldText not found in a.txt" : undefined,
    };
    const check = hook({ ask: user.ask, check: (request) => checkToolCall([editTool], request) });
    expect(await check("edit", { path: "a.txt", oldText: "missing", newText: "x" })).toStrictEqual({
      deny: "not asked, since the call would fail: oldText not found in a.txt",
    });
    expect(user.asked).toStrictEqual([]);
    expect(await check("edit", { path: "a.txt", oldText: "there", newText: "x" })).toBeUndefined();
    expect(user.asked).toStrictEqual(["edit"]);
  });

  describe("through the tool executor", () => {
    let workspace: ReturnType<typeof tempDirectory>;
    beforeEach(() => {
      workspace = tempDirectory("perm-ws-");
    });
    afterEach(() => {
      workspace.remove();
    });

    it("a denied write is an error result with the reason, and writes nothing", async () => {
      const beforeToolCall = permissionHook({
        guarded,
        allowed: new Set(),
        ask: scriptedUser([{ type: "deny", reason: "not now" }]).ask,
        signal: () => new AbortController().signal,
      });
      const [result] = await executeToolCalls(
        [call("write", { path: "x.txt", content: "x" })],
        {},
        { tools: codingTools(workspace.path), hooks: { beforeToolCall } },
      );
      expect(result).toMatchObject({ isError: true, output: "Denied: the user denied this call: not now" });
      expect(existsSync(join(workspace.path, "x.txt"))).toBe(false);
    });
  });
});
