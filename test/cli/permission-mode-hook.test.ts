// The permission hook in each mode, for every kind of tool the CLI offers: the read-only tools,
// write, edit, bash, an MCP tool and propose_plan. For each: does it run, is the user asked, or is
// it denied (and why); with a terminal to ask on and without one; and the places always asked about.
import { describe, expect, it } from "vitest";
import type { JsonObject } from "simple-agent-loop";
import { permissionModes, type PermissionMode } from "../../src/cli/permission-mode.ts";
import { guardedTools, permissionHook, type PermissionRequest } from "../../src/cli/permissions.ts";
import { planToolName } from "../../src/cli/plan-tool.ts";
import { codingTools } from "../../src/cli/tools/index.ts";

// The tools as the CLI offers them: its coding tools, an MCP server's tool, the plan tool.
const names = [...codingTools("/nonexistent").map((tool) => tool.name), "github__create_issue", planToolName];
const kinds = {
  read: "read",
  write: "write",
  edit: "edit",
  bash: "bash",
  mcp: "github__create_issue",
  plan: planToolName,
};

type Outcome = "runs" | "asked" | "denied by plan mode" | "denied: no terminal";

// Plan mode runs what only looks, and denies the rest before anything is asked, terminal or not.
const planRow: Record<string, Outcome> = {
  read: "runs",
  write: "denied by plan mode",
  edit: "denied by plan mode",
  bash: "denied by plan mode",
  mcp: "denied by plan mode",
  plan: "runs",
};

// What the hook does with one call of `name` in `mode`; `ask` absent: no terminal.
async function outcome(
  mode: PermissionMode,
  name: string,
  options: { terminal: boolean; alwaysAsk?: string } = { terminal: true },
): Promise<{ outcome: Outcome; asked: PermissionRequest[] }> {
  const asked: PermissionRequest[] = [];
  const hook = permissionHook({
    guarded: guardedTools(names),
    allowed: new Set(),
    mode: () => mode,
    signal: () => new AbortController().signal,
    ...(options.terminal
      ? {
          ask: async (request) => {
            asked.push(request);
            return { type: "allow-once" };
          },
        }
      : {}),
    ...(options.alwaysAsk === undefined ? {} : { alwaysAsk: async () => options.alwaysAsk }),
  });
  const input: JsonObject = name === "bash" ? { command: "ls" } : { path: "a.txt" };
  const answer = await hook({
    call: { type: "tool_call", id: "call_1", name, input },
    session: { messages: [] },
  });
  if (answer === undefined || !("deny" in answer)) return { outcome: asked.length > 0 ? "asked" : "runs", asked };
  const deny = answer.deny;
  if (deny.startsWith("plan mode:")) return { outcome: "denied by plan mode", asked };
  if (/no terminal/.test(deny)) return { outcome: "denied: no terminal", asked };
  throw new Error(`unexpected deny: ${deny}`);
}

async function table(options?: {
  terminal: boolean;
  alwaysAsk?: string;
}): Promise<Record<string, Record<string, Outcome>>> {
  const rows: Record<string, Record<string, Outcome>> = {};
  for (const mode of permissionModes) {
    rows[mode] = {};
    for (const [kind, name] of Object.entries(kinds)) rows[mode][kind] = (await outcome(mode, name, options)).outcome;
  }
  return rows;
}

describe("the permission hook in each mode", () => {
  it("guards every tool but the read-only ones and propose_plan", () => {
    expect([...guardedTools(names)]).toStrictEqual(["edit", "write", "bash", "github__create_issue"]);
  });

  it("with a terminal: default asks for write, edit, bash and MCP; accept-edits only for bash and MCP; plan denies them; yolo asks none", async () => {
    expect(await table()).toStrictEqual({
      default: { read: "runs", write: "asked", edit: "asked", bash: "asked", mcp: "asked", plan: "runs" },
      "accept-edits": { read: "runs", write: "runs", edit: "runs", bash: "asked", mcp: "asked", plan: "runs" },
      plan: planRow,
      yolo: { read: "runs", write: "runs", edit: "runs", bash: "runs", mcp: "runs", plan: "runs" },
    });
  });

  it("without a terminal: what would be asked is denied, naming the flag; the rest as with one", async () => {
    const noTerminal: Outcome = "denied: no terminal";
    expect(await table({ terminal: false })).toStrictEqual({
      default: { read: "runs", write: noTerminal, edit: noTerminal, bash: noTerminal, mcp: noTerminal, plan: "runs" },
      "accept-edits": { read: "runs", write: "runs", edit: "runs", bash: noTerminal, mcp: noTerminal, plan: "runs" },
      plan: planRow,
      yolo: { read: "runs", write: "runs", edit: "runs", bash: "runs", mcp: "runs", plan: "runs" },
    });
    const { deny } = (await permissionHook({
      guarded: guardedTools(names),
      allowed: new Set(),
      mode: () => "default",
      signal: () => new AbortController().signal,
    })({
      call: { type: "tool_call", id: "call_1", name: "write", input: { path: "a.txt" } },
      session: { messages: [] },
    })) as {
      deny: string;
    };
    expect(deny).toBe(
      "write needs the user's permission and there is no terminal to ask; run with --allow write (or --yes to allow every tool)",
    );
  });

  it("asks about a write where code runs from in every mode that runs writes, yolo included, saying why", async () => {
    const why = "it writes into .git/hooks, which git runs";
    const rows = await table({ terminal: true, alwaysAsk: why });
    for (const mode of ["default", "accept-edits", "yolo"] as const)
      expect(rows[mode], mode).toStrictEqual({
        read: "runs",
        write: "asked",
        edit: "asked",
        bash: "asked",
        mcp: "asked",
        plan: "runs",
      });
    // Plan mode denies before anything is asked.
    expect(rows.plan!.write).toBe("denied by plan mode");
    const { asked } = await outcome("yolo", "write", { terminal: true, alwaysAsk: why });
    expect(asked).toStrictEqual([{ name: "write", input: { path: "a.txt" }, alwaysAsk: why }]);
  });

  it("follows a mode changed between calls (Shift-Tab, an accepted plan)", async () => {
    let mode: PermissionMode = "plan";
    const hook = permissionHook({
      guarded: guardedTools(names),
      allowed: new Set(),
      mode: () => mode,
      signal: () => new AbortController().signal,
    });
    const write = () =>
      hook({
        call: { type: "tool_call", id: "call_1", name: "write", input: { path: "a.txt" } },
        session: { messages: [] },
      });
    expect(await write()).toMatchObject({ deny: expect.stringMatching(/^plan mode:/) });
    mode = "accept-edits";
    expect(await write()).toBeUndefined();
  });
});
