import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import type { Page } from "playwright-core";
import { agentLoop, pendingApprovals, send, subagentTool, tool } from "simple-agent-loop";
import { closeSession, openSession } from "simple-agent-loop/store";
import { scriptedModel } from "simple-agent-loop/testing";
import { describeInBrowser, viewerPages } from "./browser.ts";
import { messageLine, tempDir } from "./helpers.ts";
import { lowContrastTexts } from "./low-contrast.ts";
import { recordSession } from "./record-session.ts";

const timeout = 60_000;

describeInBrowser("the viewer page: less common sessions", () => {
  const { open } = viewerPages();

  // Each child node of `selector`: an element's class, or a text node's text.
  const childNodes = (page: Page, selector: string): Promise<string[]> =>
    page.evaluate(
      `[...document.querySelector(${JSON.stringify(selector)}).childNodes].map((child) => (child instanceof Element ? child.className : "text: " + child.textContent))`,
    );

  it(
    "draws the loop's empty aborted message as the abort it is, not as a model call",
    async () => {
      const path = join(tempDir(), "aborted.jsonl");
      writeFileSync(
        path,
        messageLine({ role: "user", content: "deploy" }, "2025-01-01T00:00:00.000Z") +
          messageLine(
            {
              type: "tool_call",
              id: "c1",
              name: "deploy",
              input: {},
              usage: { inputTokens: 10, outputTokens: 4 },
              stopReason: "tool_use",
            },
            "2025-01-01T00:00:01.000Z",
          ) +
          messageLine(
            { type: "tool_result", id: "c1", output: "Error: aborted before the tool finished", isError: true },
            "2025-01-01T00:00:05.000Z",
          ) +
          messageLine({ role: "assistant", content: "", stopReason: "aborted" }, "2025-01-01T00:00:05.001Z"),
      );
      const page = await open(path);
      expect(await page.locator(".totals").textContent()).toContain("1model call");
      expect(await page.locator(".turn .step").count()).toBe(1);
      expect(await page.locator(".step-head .stop").allTextContents()).toStrictEqual(["tool_use"]);
      expect(await page.locator(".msg.abort .msg-label").textContent()).toContain("Aborted");
      expect(await page.locator(".turn .flags .flag").allTextContents()).toContain("aborted");
      await page.close();
    },
    timeout,
  );

  it(
    "renders every turn of an ordinary session for a capture of the whole page, and every turn of a long one in print",
    async () => {
      const turnsOf = (count: number, words: number): string =>
        Array.from(
          { length: count },
          (_, index) =>
            messageLine({ role: "user", content: `task ${index}` }) +
            messageLine({
              role: "assistant",
              content: `answer ${index} ${"word ".repeat(words)}`,
              stopReason: "end_turn",
            }),
        ).join("");
      // Whether the browser skipped drawing the last turn (content-visibility: auto out of view).
      const lastTurnSkipped = (page: Page): Promise<boolean> =>
        page.evaluate(
          "!document.querySelector('main.timeline').lastElementChild.lastElementChild.checkVisibility({ contentVisibilityAuto: true })",
        );
      const ordinary = join(tempDir(), "ordinary.jsonl");
      writeFileSync(ordinary, turnsOf(30, 200));
      const page = await open(ordinary);
      expect(await page.locator(".turn").count()).toBe(30);
      expect(await lastTurnSkipped(page)).toBe(false);
      await page.close();

      const long = join(tempDir(), "long.jsonl");
      writeFileSync(long, turnsOf(1000, 5));
      const longPage = await open(long);
      expect(await longPage.locator(".turn").count()).toBe(1000);
      expect(await lastTurnSkipped(longPage)).toBe(true);
      await longPage.emulateMedia({ media: "print" });
      // The print styles apply at the next style pass: on a loaded machine, wait for it.
      await expect.poll(() => lastTurnSkipped(longPage), { timeout: 10_000 }).toBe(false);
      await longPage.close();
    },
    timeout,
  );

  it(
    "shows only the totals that apply, and no stray text where one does not",
    async () => {
      const path = join(tempDir(), "plain.jsonl");
      writeFileSync(
        path,
        messageLine({ role: "user", content: "hello" }, "2025-01-01T00:00:00.000Z") +
          "not json\n" +
          messageLine(
            { role: "assistant", content: "hi", usage: { inputTokens: 12, outputTokens: 3 }, stopReason: "end_turn" },
            "2025-01-01T00:00:01.500Z",
          ),
      );
      const page = await open(path);
      expect(await childNodes(page, ".totals")).toStrictEqual([
        "total",
        "total messages",
        "total",
        "total",
        "total input",
        "total output",
        "total time",
      ]);
      expect(await page.locator(".totals").textContent()).toBe(
        "1turns2messages1model calls0tool calls12input tokens3output tokens1.5 srun time",
      );
      expect(await childNodes(page, ".problems")).toStrictEqual(["problem-title", ""]);
      await page.close();
    },
    timeout,
  );

  it(
    "shows what a subagent paused inside a call waits for: its calls awaiting approval, with the ids to resolve",
    async () => {
      const path = join(tempDir(), "subagent.jsonl");
      const session = await openSession(path);
      const cleaner = subagentTool({
        name: "cleaner",
        description: "Cleans up.",
        systemPrompt: "You clean up.",
        invokeModel: scriptedModel([
          [
            {
              type: "tool_call",
              id: "inner_rm",
              name: "remove",
              input: { path: "build/", recursive: true },
              stopReason: "tool_use",
            },
          ],
        ]),
        tools: [
          tool({
            name: "remove",
            description: "Remove.",
            inputSchema: { type: "object" },
            requireApproval: true,
            handler: () => "removed",
          }),
        ],
      });
      send(session, "Clean the build directory.");
      await agentLoop(
        scriptedModel([
          [
            {
              type: "tool_call",
              id: "outer_clean",
              name: "cleaner",
              input: { prompt: "remove build/" },
              stopReason: "tool_use",
            },
          ],
        ]),
        [cleaner],
        session,
      );
      await closeSession(session);
      const waiting = pendingApprovals(session);
      expect(waiting.map((call) => call.id)).toStrictEqual(["inner_rm"]);

      const page = await open(path);
      const outer = page.locator('.tool.pending[data-call="outer_clean"]');
      expect(await outer.locator(".nested > .io-label").textContent()).toBe(
        "subagent paused · 1 call awaiting approval",
      );
      const inner = outer.locator(".nested-call");
      expect(await inner.evaluateAll((nodes) => nodes.map((node) => node.getAttribute("data-call")))).toStrictEqual([
        "inner_rm",
      ]);
      expect(await inner.locator(".tool-name").textContent()).toBe("remove");
      expect(await inner.locator("pre").textContent()).toBe(JSON.stringify(waiting[0]!.input, null, 2));
      expect(await outer.locator("details.nested-session").getAttribute("open")).toBeNull();
      await outer.locator("details.nested-session summary").click();
      expect(await outer.locator("details.nested-session pre").textContent()).toContain('"content": "remove build/"');
      await page.close();
    },
    timeout,
  );

  it(
    "says when the log ends in an incomplete line (a crash mid-write), until the line is complete",
    async () => {
      const path = join(tempDir(), "torn.jsonl");
      const torn = messageLine({ role: "assistant", content: "the answer, written in two parts" });
      writeFileSync(path, messageLine({ role: "user", content: "a question" }) + torn.slice(0, 25));
      const page = await open(path);
      const partial = page.locator(".problems .problem.partial");
      expect(await partial.textContent()).toBe(
        "Line 2 is incomplete (25 B without an end of line): it is being written, or the writer stopped mid-line (a crash). It is shown once complete.",
      );
      expect(await page.locator(".problems").isVisible()).toBe(true);

      appendFileSync(path, torn.slice(25));
      await page.locator(".msg.assistant .text", { hasText: "the answer, written in two parts" }).waitFor({ timeout });
      expect(await partial.count()).toBe(0);
      expect(await page.locator(".problems").isVisible()).toBe(false);
      await page.close();
    },
    timeout,
  );

  it(
    "a clipped long output shows whole with the keyboard too: Tab to it, Enter",
    async () => {
      const path = join(tempDir(), "long-output.jsonl");
      const output = Array.from({ length: 200 }, (_, index) => `line ${index + 1} of the output`).join("\n");
      writeFileSync(
        path,
        messageLine({ role: "user", content: "list everything" }) +
          messageLine({ type: "tool_call", id: "call_1", name: "list", input: {} }) +
          messageLine({ type: "tool_result", id: "call_1", output }),
      );
      const page = await open(path);
      const block = page.locator('.tool[data-call="call_1"] .output pre');
      expect(await block.evaluate((node) => node.scrollHeight > node.clientHeight)).toBe(true);
      const focused = (): Promise<boolean> =>
        page.evaluate(
          `document.activeElement === document.querySelector(${JSON.stringify('.tool[data-call="call_1"] .output pre')})`,
        );
      for (let presses = 0; presses < 40 && !(await focused()); presses++) await page.keyboard.press("Tab");
      expect(await focused()).toBe(true);
      await page.keyboard.press("Enter");
      expect(
        await block.evaluate((node) => [node.classList.contains("expanded"), node.scrollHeight <= node.clientHeight]),
      ).toStrictEqual([true, true]);
      expect(await block.textContent()).toBe(output);
      await page.close();
    },
    timeout,
  );

  it(
    "labels the validated structured output of a run made with an output schema",
    async () => {
      const path = join(tempDir(), "structured.jsonl");
      const session = await openSession(path);
      send(session, "How many tests pass?");
      const schema = { type: "object", properties: { passed: { type: "number" } }, required: ["passed"] };
      await agentLoop(
        scriptedModel([[{ role: "assistant", content: '{"passed": 128}', stopReason: "end_turn" }]]),
        [],
        session,
        { output: schema },
      );
      await closeSession(session);
      const page = await open(path);
      const structured = page.locator(".msg.assistant .structured");
      expect(await structured.locator(".io-label").textContent()).toBe("structured output (validated)");
      expect(await structured.locator("pre").textContent()).toBe(JSON.stringify({ passed: 128 }, null, 2));
      await page.close();
    },
    timeout,
  );

  it(
    "shows a long log, sent in pieces, whole and in order",
    async () => {
      const path = join(tempDir(), "long.jsonl");
      const output = (turn: number) => `${turn}: ${"a line of a long tool output\n".repeat(4000)}`;
      let log = "";
      for (let turn = 1; turn <= 40; turn++) {
        log += messageLine({ role: "user", content: `question ${turn}` });
        log += messageLine({ type: "tool_call", id: `call_${turn}`, name: "read_file", input: { turn } });
        log += messageLine({ type: "tool_result", id: `call_${turn}`, output: output(turn) });
        log += messageLine({ role: "assistant", content: `answer ${turn}`, stopReason: "end_turn" });
      }
      writeFileSync(path, log);
      const page = await open(path);
      await page.locator("[data-line='160']").waitFor({ timeout });
      expect(
        await page.locator("section.turn").evaluateAll((turns) => turns.map((turn) => turn.getAttribute("data-turn"))),
      ).toStrictEqual(Array.from({ length: 40 }, (_, index) => String(index + 1)));
      expect(await page.locator("section.turn .msg.assistant .text").allTextContents()).toStrictEqual(
        Array.from({ length: 40 }, (_, index) => `answer ${index + 1}`),
      );
      expect(await page.locator("#turn-40 .tool .io.output .io-body").textContent()).toBe(output(40));
      expect(await page.locator(".problems").isVisible()).toBe(false);
      await page.close();
    },
    timeout,
  );

  it(
    "follows a long running session: a reader at the end sees each new turn, as tail -f does",
    async () => {
      const path = join(tempDir(), "long.jsonl");
      const lines = (count: number, what: string) =>
        Array.from({ length: count }, (_, index) => `${what} ${index + 1}`).join("\n");
      let log = "";
      for (let turn = 1; turn <= 60; turn++) {
        log +=
          messageLine({ role: "user", content: `question ${turn}` }) +
          messageLine({ type: "tool_call", id: `call_${turn}`, name: "read", input: {} }) +
          messageLine({ type: "tool_result", id: `call_${turn}`, output: lines(30, "output line") }) +
          messageLine({ role: "assistant", content: lines(40, "answer line") });
      }
      writeFileSync(path, log);
      const page = await open(path);
      const atEndScript = "innerHeight + scrollY >= document.documentElement.scrollHeight - 2";
      const atEnd = (): Promise<boolean> => page.evaluate(atEndScript);
      // The reader goes to the end, as with the End key, until the page stops growing under them.
      for (let tries = 0; tries < 20 && !(await atEnd()); tries++) {
        await page.keyboard.press("End");
        await page.waitForTimeout(100);
      }
      expect(await atEnd()).toBe(true);

      for (const turn of [61, 62]) {
        writeFileSync(
          path,
          messageLine({ role: "user", content: `question ${turn}` }) +
            messageLine({ role: "assistant", content: lines(40, `new answer ${turn}, line`) }),
          { flag: "a" },
        );
        const newest = page.locator(`#turn-${turn}`);
        await newest.waitFor({ timeout });
        // Scrolled to the end, with the new turn on screen.
        const box = `document.querySelector("#turn-${turn}").getBoundingClientRect()`;
        await page.waitForFunction(`${atEndScript} && ${box}.bottom > 0 && ${box}.bottom <= innerHeight`, null, {
          timeout: 10_000,
        });
        await page.waitForTimeout(300);
        expect(await atEnd()).toBe(true);
      }
      await page.close();
    },
    timeout,
  );

  it(
    "keeps all text readable: at least 4.5:1 contrast against what is behind it (WCAG AA), in light and dark",
    async () => {
      const { path, session } = await recordSession(tempDir());
      await closeSession(session);
      for (const scheme of ["light", "dark"] as const) {
        const page = await open(path, { colorScheme: scheme });
        // Open everything collapsed, so its text counts too.
        await page.evaluate('document.querySelectorAll("details").forEach((details) => { details.open = true; })');
        const failures = await page.evaluate<string[]>(lowContrastTexts);
        expect(failures, scheme).toStrictEqual([]);
        await page.close();
      }
    },
    timeout,
  );
});
