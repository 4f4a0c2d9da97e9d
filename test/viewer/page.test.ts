import { appendFileSync, closeSync, openSync, writeFileSync, writeSync } from "node:fs";
import { basename, join } from "node:path";
import { expect, it } from "vitest";
import type { Page } from "playwright-core";
import { agentLoop, resolveApproval, send, type Message } from "simple-agent-loop";
import { closeSession, loadEntries, loadSession, type LogEntry, type SpliceEntry } from "simple-agent-loop/store";
import { scriptedModel } from "simple-agent-loop/testing";
import { describeInBrowser, viewerPages } from "./browser.ts";
import { line, messageLine, tempDir } from "./helpers.ts";
import { recordSession, recorded, releaseTools } from "./record-session.ts";

const timeout = 60_000;

describeInBrowser("the viewer page in a real browser", () => {
  const { open } = viewerPages();

  const texts = (page: Page, selector: string): Promise<string[]> => page.locator(selector).allTextContents();

  it(
    "shows a recorded session as turns: texts, collapsed thinking, tool calls with input, result, error and duration, approval, compaction, abort",
    async () => {
      const { path, session } = await recordSession(tempDir());
      await closeSession(session);
      const entries = await loadEntries(path);
      const page = await open(path);

      expect(await page.locator("section.turn").count()).toBe(recorded.turns);
      expect(await texts(page, ".msg.user .text")).toStrictEqual(recorded.userTexts);
      const answers = await texts(page, ".msg.assistant .text");
      for (const answer of recorded.answers) expect(answers.some((text) => text.includes(answer))).toBe(true);

      // Thinking: collapsed, a click opens it; compacted thinking keeps its original a click away.
      const thinking = page.locator("details.thinking").first();
      expect(await thinking.getAttribute("open")).toBeNull();
      expect(await thinking.locator(":scope > .text").isVisible()).toBe(false);
      await thinking.locator("summary").first().click();
      expect(await thinking.locator(":scope > .text").isVisible()).toBe(true);
      expect(await thinking.locator(":scope > .text").textContent()).toBe(`${recorded.thinking.slice(0, 60)}...`);
      await thinking.locator("details.original summary").click();
      expect(await thinking.locator("details.original pre").textContent()).toBe(recorded.thinking);
      expect(await page.locator(".badge.compacted").count()).toBe(
        entries.filter((entry) => entry.type === "replace").length,
      );

      // Tool calls, in order, each with its input as indented JSON and its duration from the log's times.
      const messages = entries.flatMap((entry) =>
        entry.type === "message" ? [(entry as { message: Message }).message] : [],
      );
      const calls = messages.filter((message) => "type" in message && message.type === "tool_call");
      expect(await texts(page, ".tool .tool-name")).toStrictEqual(calls.map((call) => call.name));
      const ci = page.locator('.tool[data-call="call_ci"]');
      expect(await ci.locator(".input pre").textContent()).toBe(
        JSON.stringify({ path: ".github/workflows/ci.yml" }, null, 2),
      );
      expect(await ci.locator(".output pre").textContent()).toContain("node-version: 18");
      const durations = calls.map((call) => {
        const result = messages.find(
          (message) => "type" in message && message.type === "tool_result" && message.id === call.id,
        );
        if (result === undefined) return "";
        // The page shows a call's run time: its wait for a gate (waitMs) is not in it.
        const waited = (result as { waitMs?: number }).waitMs ?? 0;
        return `${Math.max(0, Date.parse(result.ts!) - Date.parse(call.ts!) - waited)} ms`;
      });
      expect(await texts(page, ".tool .tool-duration")).toStrictEqual(durations);
      expect(durations.filter((duration) => duration !== "")).toHaveLength(calls.length - 1);

      // The failed call is marked as an error, in its block and in its turn's header.
      expect(await page.locator(".tool.error").count()).toBe(1);
      const failed = page.locator(`.tool.error[data-call="${recorded.failedCall}"]`);
      expect(await failed.locator(".tool-status").textContent()).toBe("✗ error");
      expect(await failed.locator(".output .io-label").textContent()).toBe("error");
      expect(await failed.locator(".output pre").textContent()).toBe(
        "Error: ENOENT: no such file or directory, open 'test/output.log'",
      );
      expect(await texts(page, "#turn-1 .flags .flag")).toStrictEqual(["1 error"]);

      // The call waiting for approval.
      const pending = page.locator(".tool.pending");
      expect(await pending.count()).toBe(1);
      expect(await pending.getAttribute("data-call")).toBe(recorded.pendingCall);
      expect(await pending.locator(".tool-status").textContent()).toBe("awaiting approval");
      expect(await texts(page, "#turn-4 .flags .flag")).toStrictEqual(["1 awaiting approval"]);
      expect(await page.locator(".total.pending .total-value").textContent()).toBe("1");

      // The summary compaction: where it happened, what it removed, tokens before and after; the turns it removed stay, marked.
      const splice = entries.find((entry): entry is SpliceEntry & LogEntry => entry.type === "splice")!;
      const details = splice.details as { tokensBefore: number; tokensAfter: number; summary: string };
      const compaction = page.locator("#turn-3 .compaction");
      expect(await compaction.locator(".compaction-head").textContent()).toContain(
        `${splice.removed.length} messages removed, 1 inserted`,
      );
      expect(await compaction.locator(".compaction-tokens").textContent()).toBe(
        `~${details.tokensBefore.toLocaleString("en-US")} → ~${details.tokensAfter.toLocaleString("en-US")} tokens`,
      );
      expect(await compaction.locator(".summary").textContent()).toBe(recorded.summary);
      expect(await texts(page, "#turn-2 .flags .flag")).toStrictEqual(["compacted away"]);

      // The aborted turn, and every model call's stop reason.
      expect(await texts(page, "#turn-3 .flags .flag")).toStrictEqual(["aborted"]);
      expect(await page.locator("#turn-3 .msg.abort").count()).toBe(1);
      expect(
        await page
          .locator(".step-head .stop")
          .evaluateAll((nodes) => nodes.map((node) => node.getAttribute("data-stop"))),
      ).toStrictEqual(["tool_use", "end_turn", "tool_use", "tool_use", "end_turn", "tool_use"]);
      expect(await texts(page, ".note.custom .note-label")).toStrictEqual(["custom · bookmark"]);

      // The chart: one group of bars per turn, tokens from the usage, and the totals.
      expect(await page.locator(".chart g.turn-bars").count()).toBe(recorded.turns);
      expect(await page.locator(".chart g.turn-bars rect.bar").count()).toBe(recorded.turns * 3);
      const titles = await page.locator(".chart g.turn-bars > title").allTextContents();
      recorded.turnUsage.forEach((usage, index) => {
        expect(titles[index]).toContain(
          `Turn ${index + 1}\n${usage.inputTokens.toLocaleString("en-US")} input tokens\n${usage.outputTokens.toLocaleString("en-US")} output tokens`,
        );
      });
      const inputTotal = recorded.turnUsage.reduce((sum, usage) => sum + usage.inputTokens, 0);
      expect(await page.locator(".total.input .total-value").textContent()).toBe(`${Math.round(inputTotal / 1000)}k`);
      expect(await page.locator(".total.messages .total-value").textContent()).toBe(
        String((await loadSession(path)).messages.length),
      );
      await page.close();
    },
    timeout,
  );

  it(
    "follows a running session: an approval, the resumed run and a new turn appear without a reload",
    async () => {
      const { path, session } = await recordSession(tempDir());
      try {
        const page = await open(path);
        await page.evaluate("window.sameDocument = true");
        const deploy = page.locator(`.tool[data-call="${recorded.pendingCall}"]`);

        resolveApproval(session, recorded.pendingCall, { approved: true });
        await deploy.locator(".badge.approval.approved").waitFor({ timeout });

        await agentLoop(
          scriptedModel([
            [
              {
                role: "assistant",
                content: "Deployed v1.5.0 to staging.",
                usage: { inputTokens: 1700, outputTokens: 40 },
                stopReason: "end_turn",
              },
            ],
          ]),
          releaseTools(),
          session,
        );
        await page.locator(".msg.assistant .text", { hasText: "Deployed v1.5.0 to staging." }).waitFor({ timeout });
        expect(await deploy.getAttribute("class")).toBe("tool ok");
        expect(await deploy.locator(".output pre").textContent()).toBe("deployed to staging");
        expect(await page.locator(".tool.pending").count()).toBe(0);

        send(session, "Thanks. Anything else to do?");
        await agentLoop(
          scriptedModel([
            [
              {
                role: "assistant",
                content: "No, that is all.",
                usage: { inputTokens: 1800, outputTokens: 12 },
                stopReason: "end_turn",
              },
            ],
          ]),
          releaseTools(),
          session,
        );
        await page.locator("#turn-5 .msg.assistant .text", { hasText: "No, that is all." }).waitFor({ timeout });
        expect(await page.locator("section.turn").count()).toBe(recorded.turns + 1);
        await page.locator(".chart g.turn-bars").nth(recorded.turns).waitFor({ timeout });
        expect(await page.locator(".chart g.turn-bars").count()).toBe(recorded.turns + 1);
        expect(await page.evaluate("window.sameDocument")).toBe(true);
        await page.close();
      } finally {
        await closeSession(session);
      }
    },
    timeout,
  );

  it(
    "renders session content as text, never as markup",
    async () => {
      const path = join(tempDir(), "hostile.jsonl");
      writeFileSync(
        path,
        messageLine({ role: "user", content: '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>' }) +
          messageLine({ type: "thinking", content: "<style>body { display: none }</style>" }) +
          messageLine({
            type: "tool_call",
            id: "<b>id</b>",
            name: "<b>bold</b>",
            input: { html: "<iframe src=javascript:window.pwned=3></iframe>" },
          }) +
          messageLine({
            type: "tool_result",
            id: "<b>id</b>",
            output: '</pre><svg onload="window.pwned=4"></svg>',
            isError: true,
          }) +
          line({ type: "custom", customType: "<i>custom</i>", data: "<a href=javascript:window.pwned=5>x</a>" }) +
          messageLine({ role: "assistant", content: "<h1>not a heading</h1>", stopReason: "<em>why</em>" }),
      );
      const page = await open(path);
      expect(await page.evaluate("window.pwned")).toBeUndefined();
      expect(
        await page
          .locator("main.timeline")
          .locator("img, script, style, iframe, svg, b, i, a[href^=javascript], h1, em")
          .count(),
      ).toBe(0);
      const text = await page.locator("main.timeline").textContent();
      for (const literal of [
        '<img src=x onerror="window.pwned=1">',
        "<b>bold</b>",
        "<iframe src=javascript:window.pwned=3></iframe>",
        '</pre><svg onload="window.pwned=4"></svg>',
        "<i>custom</i>",
        "<h1>not a heading</h1>",
        "<em>why</em>",
      ]) {
        expect(text).toContain(literal);
      }
      await page.close();
    },
    timeout,
  );

  it(
    "names each line it cannot show and shows the rest; a rewritten file is shown anew",
    async () => {
      const path = join(tempDir(), "damaged.jsonl");
      writeFileSync(
        path,
        messageLine({ role: "user", content: "first question" }) +
          "{this is not json\n" +
          messageLine({ role: "assistant", content: "first answer" }) +
          line({ type: "update", index: 9, reason: "approval", message: { role: "user", content: "x" } }) +
          messageLine({ role: "user", content: "second question" }),
      );
      const page = await open(path);
      const problems = page.locator(".problems");
      expect(await problems.isVisible()).toBe(true);
      expect(await texts(page, ".problems li .line")).toStrictEqual(["line 2", "line 4"]);
      const items = await texts(page, ".problems li");
      expect(items[0]).toMatch(/^line 2 not valid JSON \(.+\): \{this is not json$/);
      expect(items[1]).toBe('line 4 "update" of message 9, but the session has 2 messages here');
      expect(await texts(page, ".msg .text")).toStrictEqual(["first question", "first answer", "second question"]);

      writeFileSync(path, messageLine({ role: "user", content: "a new beginning" }));
      await page.locator(".msg.user .text", { hasText: "a new beginning" }).waitFor({ timeout });
      expect(await texts(page, ".msg .text")).toStrictEqual(["a new beginning"]);
      expect(await problems.isVisible()).toBe(false);
      await page.close();
    },
    timeout,
  );

  it(
    "a token redacted in place, with the same length and an append in the same moment, reaches the open page",
    async () => {
      const path = join(tempDir(), "leak.jsonl");
      const lines = [
        messageLine({ role: "user", content: "first question" }),
        messageLine({ role: "assistant", content: "the key is sk-LEAKED-0123456789" }),
        messageLine({ role: "user", content: "thanks" }),
      ];
      writeFileSync(path, lines.join(""));
      const page = await open(path);
      await page.locator(".msg .text", { hasText: "sk-LEAKED" }).waitFor({ timeout });
      const redacted = lines[1]!.replace("sk-LEAKED-0123456789", "[redacted-000000000]");
      expect(redacted.length).toBe(lines[1]!.length);
      const handle = openSync(path, "r+");
      writeSync(handle, redacted, Buffer.byteLength(lines[0]!));
      closeSync(handle);
      appendFileSync(path, messageLine({ role: "assistant", content: "after the redaction" }));
      await page.locator(".msg .text", { hasText: "after the redaction" }).waitFor({ timeout });
      await page.locator(".msg .text", { hasText: "[redacted-000000000]" }).waitFor({ timeout });
      expect(await page.content()).not.toContain("sk-LEAKED");
      expect(await texts(page, ".msg .text")).toStrictEqual([
        "first question",
        "the key is [redacted-000000000]",
        "thanks",
        "after the redaction",
      ]);
      await page.close();
    },
    timeout,
  );

  it(
    "lists a directory's sessions, newest first, and opens one",
    async () => {
      const directory = tempDir();
      writeFileSync(
        join(directory, "older.jsonl"),
        messageLine({ role: "user", content: "an old question" }, "2024-03-01T10:00:00.000Z") +
          messageLine({ role: "assistant", content: "an old answer" }, "2024-03-01T10:00:02.000Z"),
      );
      const { session } = await recordSession(directory);
      await closeSession(session);
      const page = await open(directory);
      const rows = page.locator("table.sessions tbody tr");
      expect(await rows.evaluateAll((nodes) => nodes.map((node) => node.getAttribute("data-file")))).toStrictEqual([
        "release-agent.jsonl",
        "older.jsonl",
      ]);
      expect(await page.title()).toBe(`${basename(directory)} · session viewer`);
      // A session that went on past its first task shows its latest one too.
      expect(await rows.nth(0).locator("td.title").textContent()).toBe(
        `${recorded.userTexts[0]}latest: ${recorded.userTexts.at(-1)!.slice(0, 120)}`,
      );
      // No workspace record (not a CLI session); an answer without a stop reason (a hand-written
      // model's): done, by the one rule the stores' list() uses too.
      expect(await rows.nth(1).locator("td").allTextContents()).toStrictEqual([
        "older.jsonl",
        "an old question",
        "",
        "done",
        "2",
        "0 in · 0 out",
        expect.stringMatching(/ago$/),
        expect.stringMatching(/ B$/),
      ]);

      await rows.nth(1).locator("a").click();
      await page.locator("body[data-state=ready]").waitFor({ timeout });
      expect(new URL(page.url()).search).toBe("?file=older.jsonl");
      expect(await texts(page, ".msg .text")).toStrictEqual(["an old question", "an old answer"]);
      // Titled by the task, with the file it is read from beside it.
      expect(await page.locator("header h1").textContent()).toBe("an old question");
      expect(await page.title()).toBe("an old question · session viewer");
      expect(await page.locator("header .subtitle .file").textContent()).toBe("older.jsonl");

      await page.locator("a.back").click();
      await rows.first().waitFor({ timeout });
      await rows.first().locator("td.title").click();
      await page.locator("body[data-state=ready]").waitFor({ timeout });
      expect(await page.locator("section.turn").count()).toBe(recorded.turns);
      await page.close();
    },
    timeout,
  );
});
