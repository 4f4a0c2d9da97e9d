import { bwrapArguments, defaultMaxProcesses } from "./bwrap-arguments.ts";
import type { CommandSandbox } from "./command-sandbox.ts";
import { existingHiddenPaths } from "./hidden-paths.ts";
import { createPidsCgroup } from "./pids-cgroup.ts";

/**
 * How to start one sandboxed command (`spawn(file, args)`), and what to undo once everything it
 * started is gone. `watchProcesses`: no kernel limit holds the number of its processes, so the
 * runner watches it (`watchProcessCount`) and stops the command past this many.
 */
export type SandboxedLaunch = {
  file: string;
  args: string[];
  cleanup: () => Promise<void>;
  watchProcesses?: number;
};

/**
 * The process that runs `command` in `sandbox` with `workspace` as its workspace: `bwrap` with
 * the arguments of `bwrapArguments`, covering the hidden paths that exist now. With a pids
 * cgroup, a fresh one holds the command: a shell enters it and becomes `bwrap`, so that every
 * process of the sandbox is born inside it; `cleanup` removes it.
 */
export async function sandboxedLaunch(
  sandbox: CommandSandbox,
  workspace: string,
  command: string,
): Promise<SandboxedLaunch> {
  const hidden = await existingHiddenPaths(sandbox.hidden);
  const args = bwrapArguments({ sandbox, workspace, hidden, command });
  const limit = sandbox.processLimit;
  const maxProcesses = sandbox.maxProcesses ?? defaultMaxProcesses;
  if (limit.kind === "rlimit") return { file: sandbox.bwrap, args, cleanup: async () => undefined };
  if (limit.kind === "none")
    return { file: sandbox.bwrap, args, cleanup: async () => undefined, watchProcesses: maxProcesses };
  const cgroup = await createPidsCgroup(limit.parent, maxProcesses);
  return {
    file: "sh",
    args: ["-c", 'echo $$ > "$0" && exec "$@"', cgroup.procs, sandbox.bwrap, ...args],
    cleanup: cgroup.remove,
  };
}
