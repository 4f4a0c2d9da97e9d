import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { closeSession } from "simple-agent-loop/store";
import { serveViewer } from "simple-agent-loop/viewer";
import { describeInBrowser, launchBrowser } from "./browser.ts";
import { tempDir } from "./helpers.ts";
import { countColor, decodePng } from "./png.ts";
import { recordSession, recorded } from "./record-session.ts";

/** Where the screenshot goes (outside the repository), to look at when this test fails. */
const screenshotPath = join(tmpdir(), "simple-agent-loop-viewer-screenshot.png");

// The light theme's colours, from the style sheet.
const colors = {
  input: "#2f6fdf",
  output: "#e8833a",
  time: "#8a63d2",
  background: "#f4f5f7",
  text: "#1f2328",
  pendingHead: "#fff8c5",
  errorHead: "#ffebe9",
};

describeInBrowser("a screenshot of the page", () => {
  it("shows a recorded session: the chart's bars in their colours, marked tool calls, text; not a blank page", async () => {
    const { path, session } = await recordSession(tempDir());
    await closeSession(session);
    const viewer = await serveViewer(path);
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage({
        viewport: { width: 1280, height: 900 },
        deviceScaleFactor: 1,
        colorScheme: "light",
      });
      await page.goto(viewer.url);
      await page.locator("body[data-state=ready]").waitFor({ timeout: 60_000 });
      // Turns are drawn only near the viewport (content-visibility: auto): make the viewport the whole
      // page, until its height settles, so a busy machine cannot capture turns not drawn yet.
      const lastTurnBottom =
        "document.querySelector('main.timeline').lastElementChild.getBoundingClientRect().bottom + scrollY";
      for (let bottom = 0, tries = 0; tries < 10; tries++) {
        const next = await page.evaluate<number>(lastTurnBottom);
        if (next === bottom) break;
        bottom = next;
        await page.setViewportSize({ width: 1280, height: Math.ceil(bottom) });
        await page.evaluate("new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))");
      }
      await page.screenshot({ path: screenshotPath, fullPage: true });
      const image = decodePng(readFileSync(screenshotPath));
      const pageHeight = await page.evaluate("document.documentElement.scrollHeight");
      expect([image.width, image.height]).toStrictEqual([1280, pageHeight]);
      expect(image.height).toBeGreaterThan(1500);

      // Each row of the chart has bars of its colour; the rest of the page hardly any.
      const chart = (await page.locator(".chart svg").boundingBox())!;
      const everywhere = { x: 0, y: 0, width: image.width, height: image.height };
      for (const color of [colors.input, colors.output, colors.time]) {
        const inChart = countColor(image, color, chart);
        expect(inChart, `${color} in the chart`).toBeGreaterThan(300);
        expect(countColor(image, color, everywhere) - inChart, `${color} outside the chart`).toBeLessThan(inChart);
      }
      // Left to right, a bar per turn that used tokens: runs of blue along the input row's baseline.
      const inputRow = { ...chart, height: 46 };
      expect(runsOf(image, colors.input, inputRow)).toBe(
        recorded.turnUsage.filter((usage) => usage.inputTokens > 0).length,
      );

      // The pending approval and the failed call stand out. Turns far down the page are laid out
      // only near the viewport (content-visibility: auto), so each is shot where it is in view.
      for (const [selector, color] of [
        [".tool.pending .tool-head", colors.pendingHead],
        [".tool.error .tool-head", colors.errorHead],
      ] as const) {
        const head = page.locator(selector);
        await head.scrollIntoViewIfNeeded();
        const shot = decodePng(await head.screenshot());
        expect(
          countColor(shot, color, { x: 0, y: 0, width: shot.width, height: shot.height }),
          selector,
        ).toBeGreaterThan((shot.width * shot.height) / 2);
      }

      // Not blank: much of the page is not background, and a good deal of it is dark text.
      const total = image.width * image.height;
      expect(total - countColor(image, colors.background, everywhere, 2)).toBeGreaterThan(total * 0.4);
      expect(countColor(image, colors.text, everywhere, 40)).toBeGreaterThan(5000);
    } finally {
      await browser.close();
      await viewer.close();
    }
  }, 90_000);
});

/** How many separate horizontal runs of `hex` cross the rectangle, looking at its lowest row with any. */
function runsOf(
  image: ReturnType<typeof decodePng>,
  hex: string,
  area: { x: number; y: number; width: number; height: number },
): number {
  for (let y = Math.floor(area.y + area.height) - 1; y >= area.y; y--) {
    let runs = 0;
    let inside = false;
    for (let x = Math.floor(area.x); x < area.x + area.width; x++) {
      const hit = countColor(image, hex, { x, y, width: 1, height: 1 }) === 1;
      if (hit && !inside) runs++;
      inside = hit;
    }
    if (runs > 0) return runs;
  }
  return 0;
}
