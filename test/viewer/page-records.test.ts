import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import type { Page } from "playwright-core";
import {
  agentLoop,
  codeModeName,
  send,
  tool,
  type ApprovalClassifier,
  type ToolResultMessage,
} from "simple-agent-loop";
import { closeSession, openSession } from "simple-agent-loop/store";
import { scriptedModel } from "simple-agent-loop/testing";
import { describeInBrowser, viewerPages } from "./browser.ts";
import { messageLine, tempDir } from "./helpers.ts";
import { lowContrastTexts } from "./low-contrast.ts";

const timeout = 60_000;

// Markup a page that built HTML from strings would run: it sets a flag the tests check stays unset.
const markup = `<img src=x onerror="window.__ran=1"><b>bold</b>`;

function anyTool(name: string, handler: (input: Record<string, unknown>) => unknown = () => "ok") {
  return tool({ name, description: `The ${name} tool.`, inputSchema: { type: "object" }, handler });
}

describeInBrowser("the viewer page: who decided each call, background tasks, a program's calls", () => {
  const { open } = viewerPages();
  const texts = (page: Page, selector: string): Promise<string[]> => page.locator(selector).allTextContents();
  const noMarkupRan = async (page: Page): Promise<void> => {
    expect(await page.evaluate("window.__ran")).toBeUndefined();
    expect(await page.locator(".timeline img, .timeline b").count()).toBe(0);
  };

  it(
    "shows who decided each call under an approvalPolicy (rule, classifier with its reason and cost, human with the links asked first), its markup as text",
    async () => {
      const path = join(tempDir(), "policy.jsonl");
      const session = await openSession(path);
      send(session, "Tidy the repository.");
      const classifier: ApprovalClassifier = {
        name: `judge ${markup}`,
        classify: ({ call }) =>
          call.name === "fetch"
            ? {
                decision: "allow",
                reason: `a read of a public page ${markup}`,
                confidence: 0.9,
                model: "judge-mini",
                usage: { inputTokens: 412, outputTokens: 31 },
              }
            : {
                decision: "unsure",
                reason: "a deploy reaches production",
                model: "judge-mini",
                usage: { inputTokens: 398, outputTokens: 24 },
              },
      };
      const model = scriptedModel([
        [
          { type: "tool_call", id: "c1", name: "read", input: { path: "a.txt" } },
          { type: "tool_call", id: "c2", name: "remove", input: { path: "build" } },
          { type: "tool_call", id: "c3", name: "fetch", input: { url: "https://example.com" } },
          { type: "tool_call", id: "c4", name: "deploy", input: { target: "prod" } },
        ],
        [{ role: "assistant", content: "Tidied.", stopReason: "end_turn" }],
      ]);
      await agentLoop(
        model,
        ["read", "remove", "fetch", "deploy"].map((name) => anyTool(name)),
        session,
        {
          approvalPolicy: {
            rules: [
              { id: "reads", tool: "read", action: "allow" },
              { id: `no-remove ${markup}`, tool: "remove", action: "deny", reason: `never delete ${markup}` },
            ],
            classifier,
            human: async () => ({ approved: true, reason: `fine for today ${markup}`, by: `alice ${markup}` }),
          },
        },
      );
      await closeSession(session);

      const page = await open(path);
      const decidedBy = (id: string): Promise<string | null> =>
        page.locator(`.tool[data-call="${id}"] .decided-by`).textContent();
      expect(await decidedBy("c1")).toMatch(/^decided byrule readsallow\d\d:\d\d:\d\d$/);
      expect(await page.locator('.tool[data-call="c1"] .link').getAttribute("data-by")).toBe("rule");
      expect(await decidedBy("c2")).toMatch(
        new RegExp(
          `^decided byrule no-remove ${escape(markup)}denynever delete ${escape(markup)}\\d\\d:\\d\\d:\\d\\d$`,
        ),
      );
      expect(await page.locator('.tool[data-call="c2"]').getAttribute("class")).toBe("tool denied");
      expect(await page.locator('.tool[data-call="c3"] .decided-by .link').textContent()).toBe(
        `classifier judge ${markup}allow (90% sure)a read of a public page ${markup}judge-mini · 412 in · 31 out`,
      );
      expect(await page.locator('.tool[data-call="c3"] .link-verdict').getAttribute("class")).toBe(
        "link-verdict allow",
      );
      // The human decided; the classifier was asked first and was not sure.
      expect(await page.locator('.tool[data-call="c4"] .decided-by .link').textContent()).toBe(
        `human alice ${markup}fine for today ${markup}`,
      );
      expect(await texts(page, '.tool[data-call="c4"] .consulted li')).toStrictEqual([
        `classifier judge ${markup}unsurea deploy reaches productionjudge-mini · 398 in · 24 out`,
      ]);
      await noMarkupRan(page);
      for (const scheme of ["light", "dark"] as const) {
        const themed = await open(path, { colorScheme: scheme });
        expect(await themed.evaluate<string[]>(lowContrastTexts), scheme).toStrictEqual([]);
        await themed.close();
      }
      await page.close();
    },
    timeout,
  );

  it(
    "a call decided before the chain recorded who (no decidedBy) draws no decision; a link of an unknown kind is shown as its JSON",
    async () => {
      const path = join(tempDir(), "odd-decisions.jsonl");
      writeFileSync(
        path,
        messageLine({ role: "user", content: "Go." }) +
          messageLine({ type: "tool_call", id: "old", name: "remove", input: {}, approval: { status: "approved" } }) +
          messageLine({ type: "tool_result", id: "old", output: "removed" }) +
          messageLine({
            type: "tool_call",
            id: "odd",
            name: "remove",
            input: {},
            approval: { status: "approved", decidedBy: { by: "oracle", reason: markup }, consulted: [42] },
          }) +
          messageLine({ type: "tool_result", id: "odd", output: "removed" }),
      );
      const page = await open(path);
      expect(await page.locator('.tool[data-call="old"] .decision').count()).toBe(0);
      expect(await page.locator('.tool[data-call="odd"] .decided-by .link').getAttribute("data-by")).toBe("other");
      expect(await page.locator('.tool[data-call="odd"] .decided-by .link').textContent()).toBe(`oracle${markup}`);
      expect(await texts(page, '.tool[data-call="odd"] .consulted li')).toStrictEqual(["42"]);
      await noMarkupRan(page);
      await page.close();
    },
    timeout,
  );

  it(
    "shows a background task on the call that started it (id, status, started and settled, outcome), lists the session's tasks, and its delivery as a task's outcome, not a user turn",
    async () => {
      const path = join(tempDir(), "tasks.jsonl");
      const session = await openSession(path);
      send(session, "Build and test.");
      let finish = (_value: string): void => {};
      const build = tool({
        name: "build",
        description: "Builds.",
        inputSchema: { type: "object" },
        background: true,
        handler: () => new Promise<string>((resolve) => (finish = resolve)),
      });
      const model = scriptedModel([
        [{ type: "tool_call", id: "b1", name: "build", input: { target: "all" } }],
        () => {
          setTimeout(() => finish(`built 3 files ${markup}`), 20);
          return [{ role: "assistant", content: "Started the build.", stopReason: "end_turn" }];
        },
        [{ role: "assistant", content: "The build is done.", stopReason: "end_turn" }],
      ]);
      await agentLoop(model, [build], session);
      await closeSession(session);
      const result = session.messages.find(
        (message): message is ToolResultMessage => "type" in message && message.type === "tool_result",
      )!;
      const id = result.task!.id;

      const page = await open(path);
      const task = page.locator(`.tool[data-call="b1"] .task[data-task="${id}"]`);
      expect(await task.getAttribute("class")).toBe("task completed");
      expect(await task.locator(".task-status").textContent()).toBe("completed");
      expect(await texts(page, `.tool[data-call="b1"] .task-time`)).toStrictEqual([
        expect.stringMatching(/^started \d\d:\d\d:\d\d$/),
        expect.stringMatching(/^settled \d\d:\d\d:\d\d \(.+\)$/),
      ]);
      expect(await task.locator(".task-delivered").textContent()).toBe("outcome given to the model");
      expect(await task.locator(".task-outcome pre").textContent()).toBe(`built 3 files ${markup}`);
      // The list above the turns.
      expect(await texts(page, ".tasks table.task-list thead th")).toStrictEqual([
        "Task",
        "Tool",
        "Status",
        "Started",
        "Settled",
        "Delivered",
      ]);
      const row = await texts(page, `.tasks tr[data-task="${id}"] td`);
      expect(row).toStrictEqual([
        id,
        "build b1",
        "completed",
        expect.stringMatching(/^\d\d:\d\d:\d\d$/),
        expect.stringMatching(/^\d\d:\d\d:\d\d \(.+\)$/),
        "yes",
      ]);
      // The delivery: one turn (the user's), the outcome drawn as the task's.
      expect(await page.locator("section.turn").count()).toBe(1);
      const delivery = page.locator(`.msg.task-delivery[data-task="${id}"]`);
      expect(await delivery.locator(".msg-label").textContent()).toMatch(
        new RegExp(`^Background task outcome${id}L\\d+$`),
      );
      expect(await delivery.locator(".text").textContent()).toBe(
        `[background task ${id} (build) completed]\nbuilt 3 files ${markup}`,
      );
      await noMarkupRan(page);
      await page.close();
    },
    timeout,
  );

  it(
    "shows a running task as running and its settling live, and a session without tasks has no task list",
    async () => {
      const path = join(tempDir(), "running.jsonl");
      const started = "2025-01-01T10:00:01.000Z";
      writeFileSync(
        path,
        messageLine({ role: "user", content: "Build." }, "2025-01-01T10:00:00.000Z") +
          messageLine({ type: "tool_call", id: "b1", name: "build", input: {} }, started) +
          messageLine(
            {
              type: "tool_result",
              id: "b1",
              output: { task: "task_1", status: "running", note: "…" },
              task: { id: "task_1", status: "running", onRestart: "rerun", attempt: 2, startedAt: started },
            },
            started,
          ),
      );
      const page = await open(path);
      const task = page.locator('.task[data-task="task_1"]');
      expect(await task.getAttribute("class")).toBe("task running");
      expect(await task.locator(".task-attempt").textContent()).toBe("attempt 2");
      expect(await task.locator(".task-delivered").count()).toBe(0);
      expect(await texts(page, '.tasks tr[data-task="task_1"] td')).toStrictEqual([
        "task_1",
        "build b1",
        "running",
        expect.any(String),
        "",
        "",
      ]);
      // It settles (an update entry, as the store writes it): the call and the list follow.
      writeFileSync(
        path,
        JSON.stringify({
          type: "update",
          index: 2,
          reason: "task",
          message: {
            type: "tool_result",
            id: "b1",
            output: { task: "task_1", status: "running", note: "…" },
            task: {
              id: "task_1",
              status: "lost",
              onRestart: "lost",
              attempt: 2,
              startedAt: started,
              settledAt: "2025-01-01T10:00:05.000Z",
              reason: "the process stopped",
            },
            ts: started,
          },
        }) + "\n",
        { flag: "a" },
      );
      await page.locator('.task.lost[data-task="task_1"]').waitFor({ timeout });
      expect(await task.locator(".task-outcome .io-body").textContent()).toBe("the process stopped");
      expect(await task.locator(".task-delivered").textContent()).toBe("outcome not given to the model yet");
      expect(await texts(page, '.tasks tr[data-task="task_1"] td')).toStrictEqual([
        "task_1",
        "build b1",
        "lost",
        expect.any(String),
        expect.stringMatching(/\(4\.0 s\)$/),
        "not yet",
      ]);
      await page.close();

      const plain = join(tempDir(), "plain.jsonl");
      writeFileSync(plain, messageLine({ role: "user", content: "Hi." }));
      const other = await open(plain);
      expect(await other.locator(".tasks").isHidden()).toBe(true);
      expect(await other.locator(".task-list").count()).toBe(0);
      await other.close();
    },
    timeout,
  );

  it(
    "nests a code-mode call's program calls under it, in start order, a failed one marked, each one's input and result a click away",
    async () => {
      const path = join(tempDir(), "code-mode.jsonl");
      const session = await openSession(path);
      send(session, "Look up a and bb.");
      const lookup = anyTool("lookup", (input) => {
        if (input.key === "missing") throw new Error(`no record ${markup}`);
        return { key: input.key, note: markup };
      });
      const model = scriptedModel([
        [
          {
            type: "tool_call",
            id: "call_7",
            name: codeModeName,
            input: {
              code: `const a = await tools.lookup({ key: "a" });\ntry { await tools.lookup({ key: "missing" }); } catch {}\nconst b = await tools.lookup({ key: "bb" });\nreturn [a.key, b.key, ${JSON.stringify(markup)}];`,
            },
          },
        ],
        [{ role: "assistant", content: "Found a and bb.", stopReason: "end_turn" }],
      ]);
      await agentLoop(model, [lookup], session, { codeMode: true });
      await closeSession(session);

      const page = await open(path);
      const calls = page.locator('.tool[data-call="call_7"] .program-calls');
      expect(await calls.locator("> .io-label").textContent()).toBe("program calls · 3 calls · 1 failed");
      expect(
        await calls.locator(".program-call").evaluateAll((nodes) => nodes.map((node) => node.dataset.call)),
      ).toStrictEqual(["call_7.1", "call_7.2", "call_7.3"]);
      expect(await texts(page, '.tool[data-call="call_7"] .program-call summary')).toStrictEqual([
        "✓lookupcall_7.1",
        "✗ errorlookupcall_7.2",
        "✓lookupcall_7.3",
      ]);
      const failed = calls.locator('.program-call[data-call="call_7.2"]');
      expect(await failed.getAttribute("class")).toBe("program-call error");
      expect(await failed.locator(".output pre").isVisible()).toBe(false);
      await failed.locator("summary").click();
      expect(await failed.locator(".input pre").textContent()).toBe(JSON.stringify({ key: "missing" }, null, 2));
      expect(await failed.locator(".output pre").textContent()).toContain(`no record ${markup}`);
      expect(await calls.locator('.program-call[data-call="call_7.1"] .output pre').textContent()).toBe(
        JSON.stringify({ key: "a", note: markup }, null, 2),
      );
      // The program's own text and result are the call's input and output, as text.
      expect(await page.locator('.tool[data-call="call_7"] > .tool-io .input pre').textContent()).toContain(
        "tools.lookup",
      );
      await noMarkupRan(page);
      await page.close();
    },
    timeout,
  );
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
