import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { serveViewer, type Viewer } from "simple-agent-loop/viewer";
import { describeInBrowser, launchBrowser } from "./browser.ts";
import { messageLine, tempDir } from "./helpers.ts";

const timeout = 60_000;

describeInBrowser("the viewer page: less common sessions", () => {
  let browser: Browser;
  const viewers: Viewer[] = [];
  const pageErrors: string[] = [];
  afterEach(() => {
    expect(pageErrors.splice(0)).toStrictEqual([]);
  });
  beforeAll(async () => {
    browser = await launchBrowser();
  }, timeout);
  afterAll(async () => {
    await Promise.all(viewers.map((viewer) => viewer.close()));
    await browser?.close();
  });

  async function open(path: string): Promise<Page> {
    const viewer = await serveViewer(path, { pollInterval: 100 });
    viewers.push(viewer);
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on("pageerror", (error) => pageErrors.push(error.message));
    await page.goto(viewer.url);
    await page.locator("body[data-state=ready]").waitFor({ timeout });
    return page;
  }

  // Each child node of `selector`: an element's class, or a text node's text.
  const childNodes = (page: Page, selector: string): Promise<string[]> =>
    page.locator(selector).evaluate((node) => [...node.childNodes].map((child) => (child instanceof Element ? child.className : `text: ${child.textContent ?? ""}`)));

  it(
    "shows only the totals that apply, and no stray text where one does not",
    async () => {
      const path = join(tempDir(), "plain.jsonl");
      writeFileSync(
        path,
        messageLine({ role: "user", content: "hello" }, "2025-01-01T00:00:00.000Z") +
          "not json\n" +
          messageLine({ role: "assistant", content: "hi", usage: { inputTokens: 12, outputTokens: 3 }, stopReason: "end_turn" }, "2025-01-01T00:00:01.500Z"),
      );
      const page = await open(path);
      expect(await childNodes(page, ".totals")).toStrictEqual(["total", "total messages", "total", "total", "total input", "total output", "total time"]);
      expect(await page.locator(".totals").textContent()).toBe("1turns2messages1model calls0tool calls12input tokens3output tokens1.5 swall time");
      expect(await childNodes(page, ".problems")).toStrictEqual(["problem-title", ""]);
      await page.close();
    },
    timeout,
  );
});
