import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import type { Page } from "playwright-core";
import { agentLoop, resolveApproval, send, tool } from "simple-agent-loop";
import { appendEntry, closeSession, openSession } from "simple-agent-loop/store";
import { scriptedModel } from "simple-agent-loop/testing";
import { describeInBrowser, viewerPages } from "./browser.ts";
import { line, messageLine, tempDir } from "./helpers.ts";
import { lowContrastTexts } from "./low-contrast.ts";

const timeout = 60_000;

describeInBrowser("the viewer page: what a user decided, and what it cost", () => {
  const { open } = viewerPages();
  const texts = (page: Page, selector: string): Promise<string[]> => page.locator(selector).allTextContents();

  it(
    "titles the page with the task; a call the user denied in the CLI shows as a denial with the reason; an edit as a diff; the workspace record out of the way",
    async () => {
      const path = join(tempDir(), "cli-session.jsonl");
      const session = await openSession(path);
      appendEntry(session, "workspace", { workspace: "/home/me/project", model: "demo" });
      const task = "Rename the second item in notes.txt.";
      send(session, task);
      const edit = tool({
        name: "edit",
        description: "Replace text in a file.",
        inputSchema: {
          type: "object",
          properties: { path: { type: "string" }, oldText: { type: "string" }, newText: { type: "string" } },
        },
        handler: () => "Edited notes.txt: replaced 3 line(s) at line 1 with 3 line(s).",
      });
      // The CLI's permission prompt (the human of its policy), answered: deny the first edit (with a reason), allow the second.
      const answers = [
        { approved: false, reason: "not in the header" },
        { approved: true, by: "me" },
      ];
      let denials = 0;
      const model = scriptedModel([
        [
          {
            type: "tool_call",
            id: "edit_1",
            name: "edit",
            input: { path: "notes.txt", oldText: "# Notes\n", newText: "# My notes\n" },
            stopReason: "tool_use",
          },
        ],
        [
          {
            type: "tool_call",
            id: "edit_2",
            name: "edit",
            input: {
              path: "notes.txt",
              oldText: "intro\nzero\none\ntwo\nthree\nfour\nfive\nsix\nseven\neight",
              newText: "intro\nzero\none\ntwo\nTHREE\nfour\nfive\nsix\nseven\neight",
            },
            stopReason: "tool_use",
          },
        ],
        [{ role: "assistant", content: "Renamed it.", stopReason: "end_turn" }],
      ]);
      await agentLoop(model, [edit], session, { approvalPolicy: { human: async () => answers[denials++]! } });
      await closeSession(session);

      const page = await open(path);
      expect(await page.locator("header h1").textContent()).toBe(task);
      expect(await page.title()).toBe(`${task} · session viewer`);
      expect(await page.locator("header .subtitle .file").textContent()).toBe("cli-session.jsonl");
      expect(await page.locator("header .subtitle .workspace").textContent()).toBe("/home/me/project");

      // The workspace record: one line, its JSON a click away.
      const workspace = page.locator("details.note.custom");
      expect(await workspace.getAttribute("open")).toBeNull();
      expect(await workspace.locator("summary").textContent()).toBe("Workspace/home/me/projectL1");
      expect(await workspace.locator("pre").isVisible()).toBe(false);

      const denied = page.locator('.tool[data-call="edit_1"]');
      expect(await denied.getAttribute("class")).toBe("tool denied");
      expect(await denied.locator(".tool-status").textContent()).toBe("✗ denied");
      expect(await denied.locator(".badge.approval.denied").textContent()).toBe("denied: not in the header");
      expect(await denied.locator(".output .io-label").textContent()).toBe("denied");
      expect(await texts(page, "#turn-1 .flags .flag")).toStrictEqual(["1 denied"]);
      expect(await page.locator(".totals .total", { hasText: "tool calls" }).textContent()).toBe("2tool calls1 denied");

      // An edit: the file's path, and its change as removed and added lines with context around them.
      const edited = page.locator('.tool[data-call="edit_2"]');
      expect(await edited.locator(".input .io-label").textContent()).toBe("editnotes.txt");
      expect(await texts(page, '.tool[data-call="edit_2"] .diff .diff-line')).toStrictEqual([
        "… 1 unchanged line\n",
        "  zero\n",
        "  one\n",
        "  two\n",
        "- three\n",
        "+ THREE\n",
        "  four\n",
        "  five\n",
        "  six\n",
        "… 2 unchanged lines\n",
      ]);
      const background = (selector: string): Promise<string> =>
        page.evaluate(
          `getComputedStyle(document.querySelector('.tool[data-call="edit_2"] ${selector}')).backgroundColor`,
        );
      expect(await background(".diff .del")).not.toBe(await background(".diff .ins"));
      expect(await edited.locator(".tool-status").textContent()).toBe("✓");
      await page.close();
    },
    timeout,
  );

  it(
    "a call denied through resolveApproval shows as a denial with its reason as soon as it is decided, and stays one once answered",
    async () => {
      const path = join(tempDir(), "approval.jsonl");
      const session = await openSession(path);
      try {
        send(session, "Delete the build directory.");
        const remove = tool({
          name: "remove",
          description: "Remove a path.",
          inputSchema: { type: "object" },
          requireApproval: true,
          handler: () => "removed",
        });
        const model = scriptedModel([
          [{ type: "tool_call", id: "rm_1", name: "remove", input: { path: "build/" }, stopReason: "tool_use" }],
          [{ role: "assistant", content: "I left it.", stopReason: "end_turn" }],
        ]);
        await agentLoop(model, [remove], session);
        const page = await open(path);
        const call = page.locator('.tool[data-call="rm_1"]');
        expect(await call.getAttribute("class")).toBe("tool pending");

        resolveApproval(session, "rm_1", { approved: false, reason: "keep the cache" });
        await page.locator('.tool.denied[data-call="rm_1"]').waitFor({ timeout });
        expect(await call.locator(".badge.approval.denied").textContent()).toBe("denied: keep the cache");
        await agentLoop(model, [remove], session);
        await call.locator(".output .io-label", { hasText: "denied" }).waitFor({ timeout });
        expect(await call.locator(".tool-status").textContent()).toBe("✗ denied");
        expect(await texts(page, "#turn-1 .flags .flag")).toStrictEqual(["1 denied"]);
        await page.close();
      } finally {
        await closeSession(session);
      }
    },
    timeout,
  );

  it(
    "shows the time a call waited for approval apart, and counts it in no run time: the call's, the turn's, the totals', the chart's",
    async () => {
      const path = join(tempDir(), "waited.jsonl");
      writeFileSync(
        path,
        messageLine({ role: "user", content: "Fix the typo." }, "2025-01-01T10:00:00.000Z") +
          messageLine(
            { type: "tool_call", id: "edit_1", name: "edit", input: { path: "a.md", oldText: "teh", newText: "the" } },
            "2025-01-01T10:00:01.000Z",
          ) +
          messageLine(
            { type: "tool_result", id: "edit_1", output: "Edited a.md", waitMs: 15_000 },
            "2025-01-01T10:00:16.200Z",
          ) +
          messageLine({ role: "assistant", content: "Fixed.", stopReason: "end_turn" }, "2025-01-01T10:00:17.000Z") +
          // The next task, ten minutes later: the time between turns is no run time either.
          messageLine({ role: "user", content: "Thanks." }, "2025-01-01T10:10:00.000Z") +
          messageLine({ role: "assistant", content: "Welcome.", stopReason: "end_turn" }, "2025-01-01T10:10:01.000Z"),
      );
      const page = await open(path);
      const call = page.locator('.tool[data-call="edit_1"]');
      expect(await call.locator(".tool-duration").textContent()).toBe("200 ms");
      expect(await call.locator(".tool-wait").textContent()).toBe("waited 15 s for approval");
      expect(await page.locator("#turn-1 .turn-meta").textContent()).toBe(
        "2.0 s · 2 model calls · 1 tool call · waited 15 s for approval",
      );
      expect(await page.locator(".totals .total.time").textContent()).toBe("3.0 srun time");
      expect(await page.locator(".totals .total.waited").textContent()).toBe("15 swaited for approval");
      const bar = await page.locator(".chart g.turn-bars > title").first().textContent();
      expect(bar).toContain("2.0 s run time");
      expect(bar).toContain("waited 15 s for approval (not in run time)");
      expect(await page.locator(".chart .row-value").allTextContents()).toContain("total 3.0 s");
      await page.close();
    },
    timeout,
  );

  it(
    "the session list shows each session's workspace, outcome, tokens and last activity, and leaves a cell empty for a field missing or of another kind",
    async () => {
      const directory = tempDir();
      writeFileSync(
        join(directory, "a.jsonl"),
        messageLine({ role: "user", content: "first task" }, new Date(Date.now() - 5 * 60_000).toISOString()),
      );
      writeFileSync(
        join(directory, "b.jsonl"),
        messageLine({ role: "user", content: "second task" }, new Date(Date.now() - 3 * 3600_000).toISOString()),
      );
      const page = await open(directory);
      // The fields the server adds to each session, as it may send them: given, or of another kind.
      await page.route("**/api/sessions", async (route) => {
        const listing = (await (await route.fetch()).json()) as { sessions: { file: string }[] };
        const extra = new Map<string, object>([
          ["a.jsonl", { workspace: "/home/me/project", outcome: "done", tokens: { input: 12_300, output: 456 } }],
          ["b.jsonl", { workspace: { path: "/x" }, outcome: ["failed"], tokens: "many", lastActivity: 42 }],
        ]);
        await route.fulfill({
          json: {
            ...listing,
            sessions: listing.sessions.map((session) => ({ ...session, ...extra.get(session.file) })),
          },
        });
      });
      await page.reload();
      const rows = page.locator("table.sessions tbody tr");
      await rows.nth(1).waitFor({ timeout });
      expect(await texts(page, "table.sessions thead th")).toStrictEqual([
        "Session",
        "Task",
        "Workspace",
        "Outcome",
        "Messages",
        "Tokens",
        "Last activity",
        "Size",
      ]);
      const cells = (file: string): Promise<string[]> => page.locator(`tr[data-file="${file}"] td`).allTextContents();
      expect(await cells("a.jsonl")).toStrictEqual([
        "a.jsonl",
        "first task",
        "/home/me/project",
        "done",
        "1",
        "12k in · 456 out",
        "5 min ago",
        expect.stringMatching(/ B$/),
      ]);
      expect(await cells("b.jsonl")).toStrictEqual([
        "b.jsonl",
        "second task",
        "",
        "",
        "1",
        "",
        "",
        expect.stringMatching(/ B$/),
      ]);
      expect(await page.locator('tr[data-file="a.jsonl"] td.tokens').getAttribute("title")).toBe(
        "12,300 input, 456 output tokens",
      );
      await page.close();
    },
    timeout,
  );

  it(
    "keeps the new parts readable (4.5:1, light and dark): a denial, an approval wait, an edit's diff, the workspace, a problem",
    async () => {
      const path = join(tempDir(), "readable.jsonl");
      writeFileSync(
        path,
        line({
          type: "custom",
          customType: "workspace",
          data: { workspace: "/home/me/project" },
          ts: "2025-01-01T10:00:00.000Z",
        }) +
          messageLine({ role: "user", content: "Fix the typo." }, "2025-01-01T10:00:00.000Z") +
          messageLine(
            {
              type: "tool_call",
              id: "edit_1",
              name: "edit",
              input: { path: "a.md", oldText: "a\nteh\nb", newText: "a\nthe\nb" },
            },
            "2025-01-01T10:00:01.000Z",
          ) +
          messageLine(
            {
              type: "tool_result",
              id: "edit_1",
              output: "Denied: the user denied this call: wrong file",
              isError: true,
              waitMs: 9000,
            },
            "2025-01-01T10:00:10.000Z",
          ) +
          messageLine(
            { type: "tool_call", id: "edit_2", name: "edit", input: { path: "b.md", oldText: "teh", newText: "the" } },
            "2025-01-01T10:00:11.000Z",
          ) +
          messageLine(
            { type: "tool_result", id: "edit_2", output: "Edited b.md", waitMs: 4000 },
            "2025-01-01T10:00:15.500Z",
          ) +
          messageLine(
            { role: "assistant", content: { not: "text" }, stopReason: "end_turn" },
            "2025-01-01T10:00:16.000Z",
          ),
      );
      for (const scheme of ["light", "dark"] as const) {
        const page = await open(path, { colorScheme: scheme });
        await page.evaluate('document.querySelectorAll("details").forEach((details) => { details.open = true; })');
        expect(await page.locator(".tool.denied .badge.approval.denied").count()).toBe(1);
        expect(await page.locator(".tool-wait").count()).toBe(2);
        expect(await page.locator(".diff .del").count()).toBe(2);
        expect(await page.locator(".problems li").count()).toBe(1);
        expect(await page.evaluate<string[]>(lowContrastTexts), scheme).toStrictEqual([]);
        await page.close();
      }
    },
    timeout,
  );
});
