// What the sandbox tests share: whether bwrap can run here (they skip loudly where it cannot), a
// home outside /tmp with secrets in it, and a look at the machine's processes from outside the
// sandbox's pid namespace.
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { detectSandbox, type SandboxSupport } from "../../src/cli/sandbox/detect-sandbox.ts";
import type { CommandSandbox } from "../../src/cli/sandbox/command-sandbox.ts";
import { secretPaths } from "../../src/cli/sandbox/hidden-paths.ts";
import { isAlive } from "./helpers.ts";
import { repositoryRoot } from "./terminal.ts";

export const support: SandboxSupport = await detectSandbox();

if (!support.available)
  console.warn(
    `\n!!! SANDBOX TESTS SKIPPED: ${support.reason}.\n!!! Install the Debian/Ubuntu package bubblewrap (apt-get install bubblewrap) to run them; .ci/run does.\n`,
  );

/**
 * A fake home with an SSH key, a cloud credential, the CLI's own home and a harmless file. Not
 * under /tmp: the sandbox's private /tmp would hide it whatever the sandbox hides on purpose.
 */
export function fakeHome(): { path: string; cliHome: string; remove: () => void } {
  const path = realpathSync(mkdtempSync(join(isDirectory("/var/tmp") ? "/var/tmp" : repositoryRoot, "sal-home-")));
  mkdirSync(join(path, ".ssh"));
  writeFileSync(join(path, ".ssh", "id_ed25519"), "SSH-SECRET-KEY\n");
  mkdirSync(join(path, ".aws"));
  writeFileSync(join(path, ".aws", "credentials"), "AWS-SECRET\n");
  writeFileSync(join(path, ".netrc"), "machine x password NETRC-SECRET\n");
  const cliHome = join(path, ".simple-agent-loop");
  mkdirSync(cliHome);
  writeFileSync(join(cliHome, "trusted.json"), "CLI-HOME-SECRET\n");
  writeFileSync(join(path, "notes.txt"), "plain notes\n");
  return { path, cliHome, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** The sandbox the CLI would build for `home`, with `overrides`. Only where `support.available`. */
export function sandboxFor(
  home: { path: string; cliHome: string },
  overrides: Partial<CommandSandbox> = {},
): CommandSandbox {
  if (!support.available) throw new Error("no sandbox here");
  return {
    mode: "workspace-write",
    bwrap: support.bwrap,
    allowNetwork: false,
    hidden: secretPaths(home.path, home.cliHome),
    processLimit: support.processLimit,
    ...overrides,
  };
}

/**
 * The live processes whose command line or environment holds `tag`, seen from outside every
 * sandbox (a pid namespace hides its processes' real ids from themselves).
 */
export function processesWith(tag: string): number[] {
  const needle = Buffer.from(tag);
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`);
      const environment = readFileSync(`/proc/${pid}/environ`);
      if ((cmdline.includes(needle) || environment.includes(needle)) && isAlive(pid)) found.push(pid);
    } catch {
      // Gone.
    }
  }
  return found;
}

/** A tag no other process carries. */
export function uniqueTag(): string {
  return `sal${process.pid}x${Math.random().toString(36).slice(2, 10)}`;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
