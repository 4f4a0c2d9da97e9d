import { execFile } from "node:child_process";
import { access, constants } from "node:fs/promises";
import { delimiter, join } from "node:path";
import { bwrapArguments } from "./bwrap-arguments.ts";
import type { ProcessLimit } from "./command-sandbox.ts";
import { findPidsCgroupParent, removeAbandonedCgroups } from "./pids-cgroup.ts";
import { probeKey, readCachedProbe, writeCachedProbe } from "./probe-cache.ts";

/** Whether commands can run in a sandbox here: bwrap's path and how processes are limited, or why not. */
export type SandboxSupport =
  { available: true; bwrap: string; processLimit: ProcessLimit } | { available: false; reason: string };

/**
 * Finds `bwrap` on the `PATH` of `environment` and runs `true` in the sandbox the `bash` tool
 * would use, to learn whether this machine can create its namespaces; and how the number of a
 * command's processes can be limited (`ProcessLimit`). Probed once per process (per `PATH`);
 * later calls get the same answer. With `cacheFile`, the answer is also kept there for later
 * processes, for as long as what it depends on stays the same (`probeKey`): probing starts
 * bwrap, which took most of a CLI start's wait for its prompt (bench/cli-start.ts). Never rejects.
 */
export function detectSandbox(
  environment: NodeJS.ProcessEnv = process.env,
  options: { cacheFile?: string } = {},
): Promise<SandboxSupport> {
  const path = environment.PATH ?? "";
  const probeId = JSON.stringify([path, options.cacheFile ?? null]);
  let found = probes.get(probeId);
  if (found === undefined) {
    found = probe(path, options.cacheFile);
    probes.set(probeId, found);
  }
  return found;
}

const probes = new Map<string, Promise<SandboxSupport>>();

async function probe(path: string, cacheFile: string | undefined): Promise<SandboxSupport> {
  if (process.platform !== "linux") return { available: false, reason: "the sandbox (bubblewrap) works on Linux only" };
  const bwrap = await findExecutable("bwrap", path);
  if (bwrap === undefined)
    return {
      available: false,
      reason: "bwrap is not installed (the package is bubblewrap, e.g. apt install bubblewrap)",
    };
  if (cacheFile === undefined) return probeBwrap(bwrap);
  const key = await probeKey(bwrap);
  if (key === undefined) return probeBwrap(bwrap);
  const cached = await readCachedProbe(cacheFile, key);
  if (isSupport(cached, bwrap)) {
    // The probe also removes the cgroups of CLI processes that were killed; without waiting for it here.
    if (cached.available && cached.processLimit.kind === "cgroup")
      void removeAbandonedCgroups(cached.processLimit.parent);
    return cached;
  }
  const support = await probeBwrap(bwrap);
  await writeCachedProbe(cacheFile, key, support);
  return support;
}

// Runs bwrap as the bash tool would, and finds how a command's processes can be limited.
async function probeBwrap(bwrap: string): Promise<SandboxSupport> {
  const [cgroup, plain] = await Promise.all([findPidsCgroupParent(), runsTrue(bwrap, { kind: "none" })]);
  if (plain !== undefined) return { available: false, reason: `bwrap cannot create a sandbox here: ${plain}` };
  if (cgroup !== undefined) return { available: true, bwrap, processLimit: { kind: "cgroup", parent: cgroup } };
  // Root is not held by `ulimit -u`; another user is, in a user namespace of the sandbox's own.
  if (process.getuid?.() !== 0 && (await runsTrue(bwrap, { kind: "rlimit" })) === undefined)
    return { available: true, bwrap, processLimit: { kind: "rlimit" } };
  return { available: true, bwrap, processLimit: { kind: "none" } };
}

// A kept answer, checked as read from a file the user could have edited: the shapes above, for this bwrap.
function isSupport(value: unknown, bwrap: string): value is SandboxSupport {
  if (typeof value !== "object" || value === null) return false;
  const support = value as Record<string, unknown>;
  if (support["available"] === false) return typeof support["reason"] === "string";
  if (support["available"] !== true || support["bwrap"] !== bwrap) return false;
  const limit = support["processLimit"] as Record<string, unknown> | null | undefined;
  return (
    typeof limit === "object" &&
    limit !== null &&
    (limit["kind"] === "rlimit" ||
      limit["kind"] === "none" ||
      (limit["kind"] === "cgroup" && typeof limit["parent"] === "string"))
  );
}

// The problem bwrap reports (its first line of stderr), or undefined when the sandbox ran `true`.
function runsTrue(bwrap: string, processLimit: ProcessLimit): Promise<string | undefined> {
  const args = bwrapArguments({
    sandbox: { mode: "read-only", allowNetwork: false, processLimit },
    workspace: "/",
    hidden: [],
    command: "true",
  });
  return new Promise((resolve) => {
    execFile(bwrap, args, { timeout: 10_000 }, (error, _stdout, stderr) => {
      if (error === null) resolve(undefined);
      else resolve(stderr.trim().split("\n")[0]?.slice(0, 300) || error.message);
    });
  });
}

async function findExecutable(name: string, path: string): Promise<string | undefined> {
  for (const directory of path.split(delimiter)) {
    if (directory === "") continue;
    const candidate = join(directory, name);
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here.
    }
  }
  return undefined;
}
