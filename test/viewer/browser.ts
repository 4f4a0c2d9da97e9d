import { existsSync } from "node:fs";
import { describe } from "vitest";
import { chromium, type Browser } from "playwright-core";

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
