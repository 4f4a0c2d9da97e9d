// The commands of the interactive prompt, typed as a user types them, in a pseudo-terminal against
// the fake OpenAI-compatible server: what each prints, and what the model is sent afterwards.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadSession } from "simple-agent-loop/store";
import { terminalFixture } from "./terminal-fixture.ts";
import type { CliTerminal } from "./terminal.ts";

const fixture = terminalFixture("cli-commands");

/** Waits until the prompt is back after `after` (the last thing a command or task printed). */
async function promptAfter(terminal: CliTerminal, after: string): Promise<void> {
  const escaped = after.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  await terminal.waitFor(new RegExp(`${escaped}[^]*\\n> $`));
}

describe("the prompt's commands", () => {
  it(
    "/help lists every command; an unknown one is named with the closest; one given an argument it does not take is refused; /exit leaves",
    { timeout: 90_000 },
    async () => {
      const terminal = fixture.start();
      await terminal.waitFor("> ");
      terminal.type("/help\r");
      const screen = await terminal.waitFor("Ctrl-D exits");
      for (const command of [
        "/help",
        "/model <name>",
        "/compact",
        "/cost",
        "/context",
        "/resume [id]",
        "/clear",
        "/exit",
      ])
        expect(screen).toContain(command);
      await promptAfter(terminal, "Ctrl-D exits");
      terminal.type("/cots\r");
      await terminal.waitFor("Unknown command /cots (did you mean /cost?): /help lists the commands.");
      await promptAfter(terminal, "/help lists the commands.");
      // A command that takes nothing is not run with something after it.
      terminal.type("/exit now\r");
      await promptAfter(terminal, '/exit takes no argument (got "now"); nothing was done.');
      // A task that starts with a path is a task, not a command.
      fixture.server().enqueue({ text: "That is the hosts file." });
      terminal.type("/etc/hosts: what is it?\r");
      await terminal.waitFor("That is the hosts file.");
      expect(fixture.server().bodies()[0]!.messages.at(-1)!.content).toBe("/etc/hosts: what is it?");
      await promptAfter(terminal, "That is the hosts file.");
      terminal.type("/exit\r");
      expect(await terminal.exited).toBe(0);
    },
  );

  it("/model switches the model of the next requests; a malformed name is refused", { timeout: 90_000 }, async () => {
    fixture.server().enqueue({ text: "first answer" }, { text: "second answer" });
    const terminal = fixture.start();
    await terminal.waitFor("> ");
    terminal.type("one\r");
    await promptAfter(terminal, "first answer");
    terminal.type("/model\r");
    await terminal.waitFor("model: openai test-model at");
    terminal.type("/model two words\r");
    await terminal.waitFor('/model needs a model id (letters, digits and . _ - : / @ +, at most 200), got "two words"');
    await promptAfter(terminal, '"two words"');
    terminal.type("/model other-model\r");
    await terminal.waitFor("model: openai other-model at");
    await promptAfter(terminal, "(from the next task on)");
    terminal.type("two\r");
    await promptAfter(terminal, "second answer");
    expect(
      fixture
        .server()
        .bodies()
        .map((body) => body.model),
    ).toStrictEqual(["test-model", "other-model"]);
  });

  it("/cost shows the session's tokens and, for a model with a list price, its cost", { timeout: 90_000 }, async () => {
    fixture.server().enqueue(
      {
        text: "priced",
        model: "gpt-4.1-mini-2025-04-14",
        usage: { prompt_tokens: 100_000, completion_tokens: 10_000 },
      },
      { text: "unpriced", model: "test-model", usage: { prompt_tokens: 1_000, completion_tokens: 100 } },
    );
    const terminal = fixture.start();
    await terminal.waitFor("> ");
    terminal.type("/cost\r");
    await terminal.waitFor("tokens 0 in · 0 out · 0 model calls");
    await promptAfter(terminal, "0 model calls");
    terminal.type("one\r");
    await promptAfter(terminal, "priced");
    terminal.type("two\r");
    await promptAfter(terminal, "unpriced");
    terminal.type("/cost\r");
    // 100k in at $0.40/M and 10k out at $1.60/M: $0.04 + $0.016.
    await terminal.waitFor("tokens 101,000 in · 10,100 out · 2 model calls");
    await terminal.waitFor("cost $0.06 (gpt-4.1-mini-2025-04-14: $0.06, 1 call) at list prices of");
    await terminal.waitFor("no price known for: test-model (1 call)");
  });

  it(
    "/clear starts a new session; /resume picks the earlier one and goes on with it",
    { timeout: 120_000 },
    async () => {
      fixture.server().enqueue({ text: "remembered: apples" }, { text: "fresh start" }, { text: "you said apples" });
      const terminal = fixture.start();
      const first = /session (\S+) \(new\)/.exec(await terminal.waitFor(/session (\S+) \(new\)/))![1]!;
      await terminal.waitFor("> ");
      terminal.type("remember apples\r");
      await promptAfter(terminal, "remembered: apples");
      terminal.type("/clear\r");
      const second = /New session (\S+)/.exec(await terminal.waitFor(/New session \S+ .*\n/))![1]!;
      expect(second).not.toBe(first);
      expect(terminal.screen()).toContain(`(${first} is kept: /resume ${first})`);
      await promptAfter(terminal, `/resume ${first})`);
      terminal.type("hello\r");
      await promptAfter(terminal, "fresh start");
      expect(
        fixture
          .server()
          .bodies()[1]!
          .messages.map((message) => message.content),
      ).not.toContain("remember apples");

      terminal.type("/resume\r");
      await terminal.waitFor("Resume which?");
      const list = terminal.screen();
      expect(list).toMatch(new RegExp(` 1\\. ${first} .*remember apples`));
      // The current session is not offered.
      expect(list.split("Resume which?").at(-1)).not.toContain(second);
      expect(list).not.toMatch(new RegExp(`\\d\\. ${second}`));
      terminal.type("1\r");
      await terminal.waitFor(`Resumed session ${first} (3 messages; last task: "remember apples")`);
      await promptAfter(terminal, "Resumed session");
      terminal.type("what did I say?\r");
      await promptAfter(terminal, "you said apples");
      const contents = fixture
        .server()
        .bodies()[2]!
        .messages.map((message) => message.content);
      expect(contents).toContain("remember apples");
      expect(contents).not.toContain("hello");
      terminal.type("\x04");
      await terminal.waitFor(`To go on with this session: npx simple-agent-loop --resume ${first}`);
      expect(await terminal.exited).toBe(0);
      const files = readdirSync(join(fixture.home(), "sessions")).sort();
      expect(files).toStrictEqual([`${first}.jsonl`, `${second}.jsonl`].sort());
    },
  );

  it(
    "/compact summarizes the older turns through the model and the next request carries the summary",
    { timeout: 120_000 },
    async () => {
      fixture
        .server()
        .enqueue(
          { text: "answer one" },
          { text: "answer two" },
          { text: "answer three" },
          { text: "The user asked three things." },
          { text: "answer four" },
        );
      const terminal = fixture.start();
      const id = /session (\S+) \(new\)/.exec(await terminal.waitFor(/session (\S+) \(new\)/))![1]!;
      await terminal.waitFor("> ");
      for (const [task, answer] of [
        ["task one", "answer one"],
        ["task two", "answer two"],
        ["task three", "answer three"],
      ] as const) {
        terminal.type(`${task}\r`);
        await promptAfter(terminal, answer);
      }
      terminal.type("/compact\r");
      await terminal.waitFor(/Compacted \d+ messages into a summary: about [\d,]+ → [\d,]+ tokens\./);
      await promptAfter(terminal, "tokens.");
      const summarizer = fixture.server().bodies()[3]!;
      expect(JSON.stringify(summarizer.messages)).toContain("user: task two");
      terminal.type("task four\r");
      await promptAfter(terminal, "answer four");
      const contents = fixture
        .server()
        .bodies()[4]!
        .messages.map((message) => String(message.content));
      expect(contents.some((content) => content.includes("The user asked three things."))).toBe(true);
      // The first task and the recent turns stay whole; what was between them is in the summary.
      expect(contents).not.toContain("task two");
      expect(contents).toContain("task one");
      expect(contents).toContain("task three");
      // The summary is sent as user text, but it is no turn of the user's to rewind to.
      terminal.type("/rewind\r");
      await terminal.waitFor("Rewind to before which turn?");
      expect(terminal.screen()).toMatch(
        /Turns of this session:\n +1 {2}task one\n +2 {2}task three\n +3 {2}task four\nRewind to before which turn\? \(1-3;/,
      );
      terminal.type("\r");
      await promptAfter(terminal, "Rewind cancelled; nothing changed.");
      terminal.type("\x04");
      expect(await terminal.exited).toBe(0);
      const stored = await loadSession(join(fixture.home(), "sessions", `${id}.jsonl`));
      expect(JSON.stringify(stored.messages)).toContain("The user asked three things.");
    },
  );
});

describe("--max-cost and --model", () => {
  it(
    "ends a task once its calls cost more than --max-cost, and refuses the next task",
    { timeout: 90_000 },
    async () => {
      fixture.server().enqueue(
        {
          model: "gpt-4.1-mini",
          usage: { prompt_tokens: 1_000_000, completion_tokens: 0 },
          toolCalls: [{ name: "list", arguments: {} }],
        },
        { text: "never sent" },
      );
      const terminal = fixture.start(["--model", "gpt-4.1-mini", "--max-cost", "0.25"]);
      await terminal.waitFor("> ");
      terminal.type("look around\r");
      await terminal.waitFor("budget.usd (0.25): spent $0.4000");
      await promptAfter(terminal, "budget.usd");
      terminal.type("/cost\r");
      await terminal.waitFor("this run: $0.40 of --max-cost $0.25");
      terminal.type("and more\r");
      await terminal.waitFor("--max-cost $0.25: this run has spent $0.4000");
      expect(fixture.server().requests).toHaveLength(1);
    },
  );

  it(
    "a response that names no model is priced as the model asked for: --max-cost still holds",
    { timeout: 90_000 },
    async () => {
      fixture
        .server()
        .enqueue(
          { usage: { prompt_tokens: 1_000_000, completion_tokens: 0 }, toolCalls: [{ name: "list", arguments: {} }] },
          { text: "never sent" },
        );
      const terminal = fixture.start(["--model", "gpt-4.1-mini", "--max-cost", "0.25"]);
      await terminal.waitFor("> ");
      terminal.type("look around\r");
      await terminal.waitFor("budget.usd (0.25): spent $0.4000");
      expect(fixture.server().requests).toHaveLength(1);
    },
  );

  it("refuses --max-cost for a model without a known price, and a malformed --model", { timeout: 90_000 }, async () => {
    const unpriced = fixture.start(["--max-cost", "1"]);
    expect(await unpriced.exited).toBe(1);
    expect(unpriced.screen()).toContain("--model test-model: --max-cost needs the model's price");
    const malformed = fixture.start(["--model", "gpt 4"]);
    expect(await malformed.exited).toBe(2);
    expect(malformed.screen()).toContain(
      '--model needs a model id (letters, digits and . _ - : / @ +, at most 200), got "gpt 4"',
    );
    const negative = fixture.start(["--max-cost", "-1"]);
    expect(await negative.exited).toBe(2);
  });
});
