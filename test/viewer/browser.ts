import { afterAll, afterEach, beforeAll, describe, expect, inject } from "vitest";
import { chromium, type Browser, type Page } from "playwright-core";
import { serveViewer, type Viewer, type ViewerOptions } from "simple-agent-loop/viewer";
import type { BrowserSource } from "../find-browser.ts";

/**
 * The browser the page tests drive, found once per test run by the global setup
 * (test/find-browser.ts says in which order), so parallel test files never unpack it at once.
 * Undefined only where none can run: the tests are then skipped loudly.
 */
export const browser: BrowserSource | undefined = inject("browser") ?? undefined;

/** `describe` for tests in a real browser; skipped, with a notice naming what to install, only when there is none. */
export const describeInBrowser = browser === undefined ? describeSkippedLoudly : describe;

function describeSkippedLoudly(name: string, body: () => void): void {
  const notice = `SKIPPED (no browser): "${name}" needs Chrome or Chromium. Set CHROME_PATH, or install one (Debian: apt-get install chromium); on Linux x64 the @sparticuz/chromium devDependency provides one.`;
  console.warn(`\n${"!".repeat(notice.length)}\n${notice}\n${"!".repeat(notice.length)}\n`);
  describe.skip(`${name} [${notice}]`, body);
}

/**
 * Launches the browser headless. The flags keep it off the network (without them it keeps calling
 * Google services, which floods a closed network) and work for the packaged Chromium too, which
 * has no zygote helper outside its Lambda image.
 */
export async function launchBrowser(): Promise<Browser> {
  if (browser === undefined)
    throw new Error("No browser for the viewer's page tests: set CHROME_PATH or install Chromium");
  return chromium.launch({
    executablePath: browser.path,
    args: [
      "--headless",
      "--no-sandbox",
      "--no-zygote",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
    timeout: 60_000,
  });
}

/**
 * For a `describeInBrowser` block: one browser for the block, and `open(path)`, which serves the
 * log (or directory) at `path` and opens it in a new page once drawn. Each test must end with no
 * script error on any page; the viewers and the browser close after the block.
 */
export function viewerPages(): {
  open: (path: string, options?: { colorScheme?: "light" | "dark"; viewer?: ViewerOptions }) => Promise<Page>;
} {
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
      const viewer = await serveViewer(path, { pollInterval: 100, ...options.viewer });
      viewers.push(viewer);
      const page = await browser!.newPage({
        viewport: { width: 1280, height: 900 },
        colorScheme: options.colorScheme ?? "light",
      });
      page.on("pageerror", (error) => pageErrors.push(error.message));
      await page.goto(viewer.url);
      await page.locator("body[data-state=ready], table.sessions").first().waitFor({ timeout: 60_000 });
      return page;
    },
  };
}
