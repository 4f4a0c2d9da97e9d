import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Starts a program with arguments, detached; must not throw (a missing opener is no error). */
export type Launch = (command: string, args: string[]) => void;

/**
 * Opens `url` (which may carry a secret: the viewer's token, a sign-in's state) in the user's
 * browser: `$BROWSER` when set (its first `:`-separated command, split on spaces, run without a
 * shell; `%s` in it stands for the page, else the page goes last), else the platform's opener
 * where there is a desktop to open it on: macOS, Windows, or Linux with `DISPLAY` /
 * `WAYLAND_DISPLAY`. The URL is never put on a command line, where any local user could read it
 * (`/proc/<pid>/cmdline`): it goes into an owner-only HTML file that redirects to it, and the
 * browser is given that file, as Jupyter does. Returns the function that removes the file, or
 * undefined when nothing was opened. `title` names the page the file leads to.
 */
export function openInBrowser(
  url: string,
  env: NodeJS.ProcessEnv,
  platform: NodeJS.Platform = process.platform,
  launch: Launch = launchDetached,
  title = "the session viewer",
): (() => void) | undefined {
  const opener = openerFor(platform, env);
  if (opener === undefined) return undefined;
  const directory = mkdtempSync(join(tmpdir(), "simple-agent-loop-view-"));
  const file = join(directory, "open.html");
  const target = escapeAttribute(url);
  writeFileSync(
    file,
    `<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=${target}"><title>${escapeAttribute(title)}</title><a href="${target}">Open ${escapeAttribute(title)}</a>\n`,
    { mode: 0o600 },
  );
  const args = opener.args.includes("%s")
    ? opener.args.map((arg) => (arg === "%s" ? file : arg))
    : [...opener.args, file];
  launch(opener.command, args);
  return () => rmSync(directory, { recursive: true, force: true });
}

function openerFor(platform: NodeJS.Platform, env: NodeJS.ProcessEnv): { command: string; args: string[] } | undefined {
  const [command, ...args] = (env.BROWSER ?? "").split(":")[0]!.trim().split(/\s+/);
  if (command !== undefined && command !== "") return { command, args };
  if (platform === "darwin") return { command: "open", args: [] };
  if (platform === "win32") return { command: "cmd", args: ["/c", "start", '""'] };
  const desktop = (env.DISPLAY ?? "") !== "" || (env.WAYLAND_DISPLAY ?? "") !== "";
  return desktop ? { command: "xdg-open", args: [] } : undefined;
}

function launchDetached(command: string, args: string[]): void {
  try {
    const child = spawn(command, args, { detached: true, stdio: "ignore" });
    child.on("error", () => undefined);
    child.unref();
  } catch {
    // No opener: the URL is printed anyway.
  }
}

function escapeAttribute(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}
