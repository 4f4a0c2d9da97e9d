import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bwrapArguments, defaultMaxProcesses } from "./bwrap-arguments.ts";
import type { CommandSandbox } from "./command-sandbox.ts";
import { existingHiddenPaths } from "./hidden-paths.ts";
import type { NetworkProxy } from "./network-proxy.ts";
import { createPidsCgroup } from "./pids-cgroup.ts";
import { proxySocketName } from "./proxy-forwarder.ts";

/**
 * How to start one sandboxed command (`spawn(file, args)`), and what to undo once everything it
 * started is gone. `watchProcesses`: no kernel limit holds the number of its processes, so the
 * runner watches it (`watchProcessCount`) and stops the command past this many. `refused`: the
 * connections the network proxy refused so far (`host:port`), where there is one.
 */
export type SandboxedLaunch = {
  file: string;
  args: string[];
  cleanup: () => Promise<void>;
  watchProcesses?: number;
  refused?: () => string[];
};

/**
 * The process that runs `command` in `sandbox` with `workspace` as its workspace: `bwrap` with
 * the arguments of `bwrapArguments`, covering the hidden paths that exist now. With a pids
 * cgroup, a fresh one holds the command: a shell enters it and becomes `bwrap`, so that every
 * process of the sandbox is born inside it. With `allowHosts` (and no `allowNetwork`), a network
 * proxy of its own (`startNetworkProxy`) on a unix socket in a fresh private directory, bound into
 * the sandbox. `cleanup` removes the cgroup and stops the proxy.
 */
export async function sandboxedLaunch(
  sandbox: CommandSandbox,
  workspace: string,
  command: string | readonly string[],
  options: { cwd?: string } = {},
): Promise<SandboxedLaunch> {
  const hidden = await existingHiddenPaths(sandbox.hidden);
  const proxy = await proxyFor(sandbox);
  const args = bwrapArguments({
    sandbox,
    workspace,
    hidden,
    command,
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    ...(proxy === undefined ? {} : { proxy: { socketDirectory: proxy.directory, node: process.execPath } }),
  });
  const stopProxy = proxy?.stop ?? (async () => undefined);
  const refused = proxy === undefined ? {} : { refused: proxy.server.refused };
  const limit = sandbox.processLimit;
  const maxProcesses = sandbox.maxProcesses ?? defaultMaxProcesses;
  if (limit.kind === "rlimit") return { file: sandbox.bwrap, args, cleanup: stopProxy, ...refused };
  if (limit.kind === "none")
    return { file: sandbox.bwrap, args, cleanup: stopProxy, watchProcesses: maxProcesses, ...refused };
  let cgroup;
  try {
    cgroup = await createPidsCgroup(limit.parent, maxProcesses);
  } catch (error) {
    await stopProxy();
    throw error;
  }
  const remove = cgroup.remove;
  return {
    file: "sh",
    args: ["-c", 'echo $$ > "$0" && exec "$@"', cgroup.procs, sandbox.bwrap, ...args],
    cleanup: async () => {
      await Promise.all([remove(), stopProxy()]);
    },
    ...refused,
  };
}

// The command's own proxy, in a directory only this user can enter.
async function proxyFor(
  sandbox: CommandSandbox,
): Promise<{ directory: string; server: NetworkProxy; stop: () => Promise<void> } | undefined> {
  if (sandbox.allowNetwork || sandbox.allowHosts === undefined || sandbox.allowHosts.length === 0) return undefined;
  // Loaded only with --allow-host: most runs never need an HTTP server.
  const { startNetworkProxy } = await import("./network-proxy.ts");
  const directory = await mkdtemp(join(tmpdir(), "simple-agent-loop-proxy-"));
  try {
    const server = await startNetworkProxy({
      socketPath: join(directory, proxySocketName),
      allowed: sandbox.allowHosts,
    });
    return {
      directory,
      server,
      stop: async () => {
        await server.close();
        await rm(directory, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await rm(directory, { recursive: true, force: true });
    throw error;
  }
}
