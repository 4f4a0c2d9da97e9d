// The permission modes as a user meets them, in a pseudo-terminal against the fake server:
// what asks in each mode, plan mode's plan accepted before anything changes, Shift-Tab at the
// prompt, and --mode checked.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { terminalFixture } from "./terminal-fixture.ts";

const fixture = terminalFixture("cli-modes");

const toolNames = (index: number): string[] =>
  (fixture.server().bodies()[index]!.tools ?? []).map(
    (entry) => (entry as { function: { name: string } }).function.name,
  );

describe("permission modes", () => {
  it(
    "default asks before a write; accept-edits writes without asking but asks for bash",
    { timeout: 90_000 },
    async () => {
      fixture
        .server()
        .enqueue(
          { toolCalls: [{ name: "write", arguments: { path: "a.txt", content: "a\n" } }] },
          { text: "wrote a" },
          { toolCalls: [{ name: "write", arguments: { path: "b.txt", content: "b\n" } }] },
          { toolCalls: [{ name: "bash", arguments: { command: "touch c.txt" } }] },
          { text: "done" },
        );
      const terminal = fixture.start(["--sandbox", "off"]);
      await terminal.waitFor("> ");
      terminal.type("write a\r");
      await terminal.waitFor("Allow write?");
      terminal.type("y");
      await terminal.waitFor(/wrote a[^]*\n> $/);
      terminal.type("\x1b[Z");
      await terminal.waitFor(/\naccept-edits > $/);
      terminal.type("write b, then touch c\r");
      await terminal.waitFor("Allow bash?");
      expect(readFileSync(join(fixture.workspace(), "b.txt"), "utf8")).toBe("b\n");
      expect(terminal.screen().match(/Allow write\?/g)).toHaveLength(1);
      terminal.type("y");
      await terminal.waitFor(/done[^]*\naccept-edits > $/);
      expect(existsSync(join(fixture.workspace(), "c.txt"))).toBe(true);
      // The plan tool is offered in plan mode only.
      expect(toolNames(0)).toStrictEqual(["read", "grep", "list", "edit", "write", "bash"]);
    },
  );

  it(
    "plan mode offers only the read-only tools, refuses a write, and changes nothing until the plan is accepted",
    { timeout: 90_000 },
    async () => {
      fixture
        .server()
        .enqueue(
          { toolCalls: [{ name: "write", arguments: { path: "early.txt", content: "too soon\n" } }] },
          { toolCalls: [{ name: "propose_plan", arguments: { plan: "1. Write **plan.txt**\n2. Check it" } }] },
          { toolCalls: [{ name: "propose_plan", arguments: { plan: "1. Write plan.txt with ok" } }] },
          { toolCalls: [{ name: "write", arguments: { path: "plan.txt", content: "ok\n" } }] },
          { text: "Plan carried out." },
        );
      const terminal = fixture.start(["--mode", "plan"]);
      await terminal.waitFor(/\nplan > $/);
      terminal.type("make plan.txt\r");
      await terminal.waitFor("Accept this plan?");
      expect(terminal.screen()).toContain("1. Write plan.txt");
      expect(existsSync(join(fixture.workspace(), "early.txt"))).toBe(false);
      expect(toolNames(0)).toStrictEqual(["read", "grep", "list", "propose_plan"]);
      const refusal = fixture
        .server()
        .bodies()[1]!
        .messages.find((message) => message.role === "tool");
      expect(String(refusal?.content)).toContain(
        "plan mode: only the read-only tools run until the user accepts a plan",
      );
      terminal.type("n");
      await terminal.waitFor("What should change?");
      terminal.type("say what goes in it\r");
      await terminal.waitFor(/Accept this plan\?[^]*Accept this plan\?/);
      const rejected = fixture
        .server()
        .bodies()[2]!
        .messages.filter((message) => message.role === "tool")
        .at(-1);
      expect(String(rejected?.content)).toContain("The user did not accept the plan: say what goes in it.");
      terminal.type("y");
      // Accepted into the default mode: the write is asked about now, no longer refused.
      await terminal.waitFor("Allow write?");
      expect(toolNames(3)).toStrictEqual(["read", "grep", "list", "edit", "write", "bash"]);
      const accepted = fixture
        .server()
        .bodies()[3]!
        .messages.filter((message) => message.role === "tool")
        .at(-1);
      expect(String(accepted?.content)).toContain("The user accepted the plan. The permission mode is now default");
      terminal.type("y");
      await terminal.waitFor(/Plan carried out\.[^]*\n> $/);
      expect(readFileSync(join(fixture.workspace(), "plan.txt"), "utf8")).toBe("ok\n");
    },
  );

  it(
    "a rejected plan changes nothing and plan mode stays; accepted with e, the mode shows accept-edits and the run goes on",
    { timeout: 120_000 },
    async () => {
      fixture
        .server()
        .enqueue(
          { toolCalls: [{ name: "propose_plan", arguments: { plan: "1. Write x.txt" } }] },
          { toolCalls: [{ name: "write", arguments: { path: "x.txt", content: "x\n" } }] },
          { text: "Staying in plan mode." },
          { toolCalls: [{ name: "propose_plan", arguments: { plan: "1. Write x.txt with x" } }] },
          { toolCalls: [{ name: "write", arguments: { path: "x.txt", content: "x\n" } }] },
          { text: "Wrote it." },
        );
      const terminal = fixture.start(["--mode", "plan"]);
      await terminal.waitFor(/\nplan > $/);
      terminal.type("plan x\r");
      await terminal.waitFor("Accept this plan?");
      terminal.type("n");
      await terminal.waitFor("What should change?");
      terminal.type("not yet\r");
      await terminal.waitFor(/Staying in plan mode\.[^]*\nplan > $/);
      // The write after the rejection was refused: nothing changed.
      expect(existsSync(join(fixture.workspace(), "x.txt"))).toBe(false);
      const refused = fixture
        .server()
        .bodies()[2]!
        .messages.filter((message) => message.role === "tool")
        .at(-1);
      expect(String(refused?.content)).toContain("plan mode: only the read-only tools run");

      terminal.type("go on\r");
      await terminal.waitFor(/Accept this plan\?[^]*Accept this plan\?/);
      terminal.type("e");
      await terminal.waitFor(/Wrote it\.[^]*\naccept-edits > $/);
      expect(readFileSync(join(fixture.workspace(), "x.txt"), "utf8")).toBe("x\n");
      expect(terminal.screen()).not.toContain("Allow write?");
      // The next request after the acceptance offers every tool but the plan tool.
      expect(toolNames(4)).toStrictEqual(["read", "grep", "list", "edit", "write", "bash"]);
      terminal.type("/exit\r");
      expect(await terminal.exited).toBe(0);
    },
  );

  it("yolo runs every tool without asking and warns that bash has no sandbox", { timeout: 90_000 }, async () => {
    fixture.server().enqueue(
      {
        toolCalls: [
          { name: "write", arguments: { path: "y.txt", content: "y\n" } },
          { name: "bash", arguments: { command: "touch z.txt" } },
        ],
      },
      { text: "all done" },
    );
    const terminal = fixture.start(["--mode", "yolo", "--sandbox", "off"]);
    await terminal.waitFor("warning: yolo mode: every tool call runs without asking, and bash has no sandbox here");
    await terminal.waitFor(/\nyolo > $/);
    terminal.type("go\r");
    await terminal.waitFor(/all done[^]*\nyolo > $/);
    expect(terminal.screen()).not.toContain("Allow");
    expect(existsSync(join(fixture.workspace(), "y.txt"))).toBe(true);
    expect(existsSync(join(fixture.workspace(), "z.txt"))).toBe(true);
  });

  it("a write into .git still asks in yolo mode", { timeout: 90_000 }, async () => {
    fixture
      .server()
      .enqueue(
        { toolCalls: [{ name: "write", arguments: { path: ".git/hooks/pre-commit", content: "echo hi\n" } }] },
        { text: "not written" },
      );
    const terminal = fixture.start(["--mode", "yolo", "--sandbox", "off"]);
    await terminal.waitFor(/\nyolo > $/);
    terminal.type("hook\r");
    await terminal.waitFor("Allow write?");
    terminal.type("n");
    await terminal.waitFor("Why?");
    terminal.type("\r");
    await terminal.waitFor(/not written[^]*\nyolo > $/);
    expect(existsSync(join(fixture.workspace(), ".git", "hooks", "pre-commit"))).toBe(false);
  });

  it("Shift-Tab cycles the modes in the prompt, keeping what was typed", { timeout: 90_000 }, async () => {
    fixture.server().enqueue({ text: "ok" });
    const terminal = fixture.start(["--sandbox", "off"]);
    await terminal.waitFor(/\n> $/);
    terminal.type("abc");
    await terminal.waitFor(/\n> abc$/);
    terminal.type("\x1b[Z");
    await terminal.waitFor(/\naccept-edits > abc$/);
    terminal.type("\x1b[Z");
    await terminal.waitFor(/\nplan > abc$/);
    terminal.type("\x1b[Z");
    await terminal.waitFor("warning: yolo mode");
    await terminal.waitFor(/\nyolo > abc$/);
    terminal.type("\x1b[Z");
    await terminal.waitFor(/\n> abc$/);
    terminal.type("d\r");
    await terminal.waitFor("ok");
    expect(fixture.server().bodies()[0]!.messages.at(-1)!.content).toBe("abcd");
  });

  it("refuses an unknown --mode, naming the modes", { timeout: 60_000 }, async () => {
    const terminal = fixture.start(["--mode", "careful"]);
    expect(await terminal.exited).toBe(2);
    expect(terminal.screen()).toContain(
      '--mode must be one of "default", "accept-edits", "plan", "yolo"; got "careful"',
    );
  });
});
