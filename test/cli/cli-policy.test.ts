// The CLI's approval policy in each mode, for every kind of tool the CLI offers (read-only, write,
// edit, bash, an MCP tool, propose_plan), run through the loop: does the call run on a rule, go to
// the human (the prompt), or is it denied, and by what; with a terminal and without one; "always",
// a mode changed mid-run, the checks before asking, and a malformed --policy file.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { agentLoop, initSession, tool, type AskHuman, type JsonObject, type ToolCallMessage } from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import { beforeAsking } from "../../src/cli/before-asking.ts";
import { cliPolicy, type CliPolicyOptions } from "../../src/cli/cli-policy.ts";
import { modeToolOffer } from "../../src/cli/mode-tools.ts";
import { modeControl, permissionModes, type PermissionMode } from "../../src/cli/permission-mode.ts";
import { planToolName } from "../../src/cli/plan-tool.ts";

const kinds = {
  read: "read",
  write: "write",
  edit: "edit",
  bash: "bash",
  mcp: "github__create_issue",
  plan: planToolName,
};
const names = Object.values(kinds);
const tools = (ran: string[]) =>
  names.map((name) =>
    tool({
      name,
      description: name,
      inputSchema: { type: "object" },
      handler: () => {
        ran.push(name);
        return "ok";
      },
    }),
  );

type Run = { decidedBy: unknown; asked: boolean; ran: boolean; output: unknown };

/** One call of `name` in a CLI run built as cli.ts builds it; the human says yes. */
async function callOnce(
  name: string,
  options: Partial<CliPolicyOptions> & { terminal?: boolean; everyTime?: string; failure?: string } = {},
): Promise<Run> {
  const asked: string[] = [];
  const noted = new WeakMap<ToolCallMessage, string>();
  const terminal = options.terminal ?? true;
  const human = (): AskHuman => async (request) => {
    asked.push(`${request.call.name}${noted.get(request.call) === undefined ? "" : " (every time)"}`);
    return { approved: true, by: "me" };
  };
  const cli = cliPolicy({
    mode: options.mode ?? "default",
    allow: options.allow ?? [],
    planDenies: [kinds.mcp],
    ...(options.file === undefined ? {} : { file: options.file }),
    human: terminal ? human : "deny",
  });
  const ran: string[] = [];
  const input: JsonObject = name === "bash" ? { command: "ls" } : { path: "a.txt" };
  const session = await agentLoop(
    scriptedModel([[{ type: "tool_call", id: "c", name, input }], [{ role: "assistant", content: "done" }]]),
    tools(ran),
    initSession("s", "go"),
    {
      approvalPolicy: cli.policy,
      hooks: {
        beforeToolCall: beforeAsking({
          policy: cli.policy,
          terminal,
          everyTime: async (call) => (call.name === "write" ? options.everyTime : undefined),
          check: async () => options.failure,
          noted,
        }),
      },
    },
  );
  const call = session.messages.find(
    (message): message is ToolCallMessage => "type" in message && message.type === "tool_call" && message.id === "c",
  );
  const result = session.messages.find((message) => "type" in message && message.type === "tool_result");
  return {
    decidedBy: call?.approval?.decidedBy,
    asked: asked.length > 0,
    ran: ran.length > 0,
    output: result !== undefined && "output" in result ? result.output : undefined,
  };
}

// How each call ended, in words: "rule <id>", "asked", "denied by rule <id>", "no one to ask", "hook: …".
function outcomeOf(run: Run): string {
  const by = run.decidedBy as { by: string; rule?: string; reason?: string } | undefined;
  if (by?.by === "rule") return run.ran ? `rule ${by.rule}` : `denied by rule ${by.rule}`;
  if (by?.by === "human") return run.asked && run.ran ? "asked" : "?";
  if (by?.by === "policy") return "no one to ask";
  if (by?.by === "hook") return `hook: ${by.reason}`;
  return `? ${JSON.stringify(run)}`;
}

async function table(options: {
  terminal: boolean;
  everyTime?: string;
}): Promise<Record<string, Record<string, string>>> {
  const rows: Record<string, Record<string, string>> = {};
  for (const mode of permissionModes) {
    rows[mode] = {};
    for (const [kind, name] of Object.entries(kinds))
      rows[mode][kind] = outcomeOf(await callOnce(name, { ...options, mode }));
  }
  return rows;
}

// What each mode does with each kind of call; `asked`: how a call for the human ends (with a
// terminal, the human is asked; without one, no one is there to ask).
const modeTable = (asked: string): Record<string, Record<string, string>> => ({
  default: { read: "rule read-only", write: asked, edit: asked, bash: asked, mcp: asked, plan: "rule read-only" },
  "accept-edits": {
    read: "rule read-only",
    write: "rule accept-edits",
    edit: "rule accept-edits",
    bash: asked,
    mcp: asked,
    plan: "rule read-only",
  },
  plan: {
    read: "rule read-only",
    write: "denied by rule plan",
    edit: "denied by rule plan",
    bash: "denied by rule plan",
    mcp: "denied by rule plan",
    plan: "rule read-only",
  },
  yolo: {
    read: "rule read-only",
    write: "rule yolo",
    edit: "rule yolo",
    bash: "rule yolo",
    mcp: "rule yolo",
    plan: "rule read-only",
  },
});

describe("the CLI's policy in each mode", () => {
  it.each([
    { terminal: true, asked: "asked" },
    { terminal: false, asked: "no one to ask" },
  ])(
    "terminal: $terminal. default asks for write, edit, bash and MCP; accept-edits for bash and MCP; plan denies them; yolo allows all; what is asked ends: $asked",
    async ({ terminal, asked }) => {
      expect(await table({ terminal })).toStrictEqual(modeTable(asked));
    },
  );

  it("a write where code runs from is asked in every mode that runs writes (yolo, --yes too); denied without a terminal", async () => {
    const why = "write a.txt changes a git repository's .git";
    for (const mode of ["default", "accept-edits", "yolo"] as const)
      expect(outcomeOf(await callOnce("write", { mode, everyTime: why })), mode).toBe("asked");
    expect(outcomeOf(await callOnce("write", { allow: "all", everyTime: why }))).toBe("asked");
    expect(outcomeOf(await callOnce("write", { mode: "plan", everyTime: why }))).toBe("denied by rule plan");
    expect(outcomeOf(await callOnce("write", { mode: "yolo", everyTime: why, terminal: false }))).toBe(
      `hook: ${why}; there is no terminal to ask on`,
    );
  });

  it("a call the human would be asked about that would fail is denied with its error, unasked; one a rule allows runs", async () => {
    const failure = "oldText not found in a.txt";
    const asked = await callOnce("edit", { failure });
    expect(outcomeOf(asked)).toBe(`hook: not asked, since the call would fail: ${failure}`);
    expect(asked.asked).toBe(false);
    expect(outcomeOf(await callOnce("edit", { failure, mode: "accept-edits" }))).toBe("rule accept-edits");
  });

  it("--allow and --yes are allow rules; a --policy file adds rules, and its deny wins over them", async () => {
    expect(outcomeOf(await callOnce("bash", { allow: ["bash"] }))).toBe("rule --allow");
    expect(outcomeOf(await callOnce(kinds.mcp, { allow: "all", terminal: false }))).toBe("rule --yes");
    const file = join(mkdtempSync(join(tmpdir(), "cli-policy-")), "policy.json");
    writeFileSync(
      file,
      JSON.stringify({ rules: [{ id: "no-bash", tool: "bash", action: "deny", reason: "not here" }] }),
    );
    const denied = await callOnce("bash", { allow: "all", file });
    expect(outcomeOf(denied)).toBe("denied by rule no-bash");
    expect(denied.output).toBe('Denied by rule "no-bash": not here');
  });

  it("a malformed --policy file is a CliError (exit 1) naming the file, the rule and the field", () => {
    const directory = mkdtempSync(join(tmpdir(), "cli-policy-"));
    const file = join(directory, "policy.json");
    writeFileSync(
      file,
      JSON.stringify({ rules: [{ id: "r", tool: "bash", input: { command: { prefix: "" } }, action: "deny" }] }),
    );
    expect(() => cliPolicy({ mode: "default", allow: [], file, human: "deny" })).toThrow(
      expect.objectContaining({
        exitCode: 1,
        message: expect.stringContaining(`--policy ${file}: policy.rules[0] ("r").input.command.prefix`),
      }),
    );
  });

  it("'always' adds an allow rule for the session; a mode change keeps it, another session drops it", async () => {
    const cli = cliPolicy({ mode: "plan", allow: [], human: () => async () => ({ approved: true }) });
    const ids = () => cli.policy.rules!.map((rule) => rule.id);
    expect(ids()).toContain("plan");
    cli.allowAlways("bash");
    cli.allowAlways("bash");
    cli.setMode("default");
    expect(ids()).toStrictEqual(["read-only", "code-runs-from", "always:bash"]);
    cli.forgetAlways();
    expect(ids()).toStrictEqual(["read-only", "code-runs-from"]);
  });

  it("offers the model the tools no rule denies whatever their input, and propose_plan only in plan mode", async () => {
    const modes = modeControl("plan");
    const cli = cliPolicy({ mode: "plan", allow: [], planDenies: [kinds.mcp], human: "deny" });
    const offer = modeToolOffer(modes, cli.policy);
    const offered = async (): Promise<string[]> => {
      const answer = await offer({
        tools: tools([]).map((definition) => ({ ...definition })),
        session: { messages: [] },
      } as never);
      return (answer as { tools: { name: string }[] }).tools.map((definition) => definition.name);
    };
    expect(await offered()).toStrictEqual(["read", planToolName]);
    modes.set("default");
    cli.setMode("default" satisfies PermissionMode);
    expect(await offered()).toStrictEqual(["read", "write", "edit", "bash", kinds.mcp]);
  });
});
