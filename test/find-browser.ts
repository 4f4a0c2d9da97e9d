import { accessSync, constants } from "node:fs";

/** Where the browser for the viewer's page tests comes from. */
export type BrowserSource = { path: string; from: "CHROME_PATH" | "system" | "@sparticuz/chromium" };

const systemBrowsers = [
  "/usr/bin/chromium",
  "/usr/bin/chromium-browser",
  "/usr/bin/google-chrome",
  "/usr/bin/google-chrome-stable",
  "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
];

/**
 * The browser for the page tests, in this order: `CHROME_PATH` when set (a user's own choice wins,
 * and a wrong one is an error, not a silent fallback); a system Chrome or Chromium (already
 * unpacked, the fastest start); otherwise the Chromium that the `@sparticuz/chromium`
 * devDependency ships inside the npm package for Linux x64 (unpacked to the temp directory on
 * first use), so `npm test` needs no step beyond `npm install`. Undefined only where none of these
 * can run (another OS or architecture without a system browser).
 */
export async function findBrowser(): Promise<BrowserSource | undefined> {
  const fromEnvironment = process.env.CHROME_PATH;
  if (fromEnvironment !== undefined && fromEnvironment !== "") {
    if (!isExecutable(fromEnvironment))
      throw new Error(`CHROME_PATH is set to ${fromEnvironment}, which is not an executable file`);
    return { path: fromEnvironment, from: "CHROME_PATH" };
  }
  const system = systemBrowsers.find(isExecutable);
  if (system !== undefined) return { path: system, from: "system" };
  if (process.platform !== "linux" || process.arch !== "x64") return undefined;
  const packaged = (await import("@sparticuz/chromium")).default;
  return { path: await packaged.executablePath(), from: "@sparticuz/chromium" };
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
