import { existsSync } from "node:fs";
import { afterAll, afterEach, beforeAll, describe, expect } from "vitest";
import { chromium, type Browser, type Page } from "playwright-core";
import { serveViewer, type Viewer } from "simple-agent-loop/viewer";

/** Debian's Chromium, driven by playwright-core (which never downloads a browser). */
export const chromiumPath = "/usr/bin/chromium";

/** `describe` for tests in a real browser; skipped only when SKIP_BROWSER_TESTS=1. */
export const describeInBrowser = process.env.SKIP_BROWSER_TESTS === "1" ? describe.skip : describe;

/**
 * Launches headless Chromium. Fails, saying what to install, when it is missing. The flags keep
 * it off the network: without them it keeps calling Google services, which floods a closed network.
 */
export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(chromiumPath)) {
    throw new Error(
      `The viewer's browser tests need Debian's Chromium at ${chromiumPath}: install it with "sudo apt-get install chromium" (CI does), or set SKIP_BROWSER_TESTS=1 to skip these tests.`,
    );
  }
  return chromium.launch({
    executablePath: chromiumPath,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    timeout: 60_000,
  });
}

/**
 * For a `describeInBrowser` block: one browser for the block, and `open(path)`, which serves the
 * log (or directory) at `path` and opens it in a new page once drawn. Each test must end with no
 * script error on any page; the viewers and the browser close after the block.
 */
export function viewerPages(): { open: (path: string, options?: { colorScheme?: "light" | "dark" }) => Promise<Page> } {
  let browser: Browser | undefined;
  const viewers: Viewer[] = [];
  const pageErrors: string[] = [];
  afterEach(() => {
    expect(pageErrors.splice(0)).toStrictEqual([]);
  });
  beforeAll(async () => {
    browser = await launchBrowser();
  }, 60_000);
  afterAll(async () => {
    await Promise.all(viewers.map((viewer) => viewer.close()));
    await browser?.close();
  });
  return {
    open: async (path, options = {}) => {
      const viewer = await serveViewer(path, { pollInterval: 100 });
      viewers.push(viewer);
      const page = await browser!.newPage({ viewport: { width: 1280, height: 900 }, colorScheme: options.colorScheme ?? "light" });
      page.on("pageerror", (error) => pageErrors.push(error.message));
      await page.goto(viewer.url);
      await page.locator("body[data-state=ready], table.sessions").first().waitFor({ timeout: 60_000 });
      return page;
    },
  };
}
