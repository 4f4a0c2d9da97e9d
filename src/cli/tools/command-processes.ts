import { readdirSync, readFileSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";

/** The variable that marks every process a command started: it is inherited across forks, `setsid` and `nohup`. */
export const commandMarkerName = "SIMPLE_AGENT_LOOP_COMMAND";

/**
 * The processes of one command run by the `bash` tool: its process group (the command leads
 * it) and, on Linux, every process whose environment carries the run's marker
 * (`commandMarkerName=<marker>`), which finds the ones that left the group (`setsid`, a double
 * fork, `nohup … &`). A process that clears its environment escapes the marker; `bash` is not
 * a sandbox. While a run is tracked, the CLI's exit kills its processes, however it exits
 * (short of SIGKILL).
 */
export type CommandProcesses = {
  /** The value of `commandMarkerName` to put in the command's environment. */
  marker: string;
  /** Called once the command's process exists. */
  started: (group: number) => void;
  /** Sends `signal` to the group and to every marked process. */
  signal: (signal: NodeJS.Signals) => Promise<void>;
  /**
   * Ends every process still there and stops tracking the run: SIGTERM, up to `graceMs` for them
   * to exit, then SIGKILL until a scan finds none. Returns at once when nothing is left.
   */
  end: (graceMs: number) => Promise<void>;
};

export function commandProcesses(): CommandProcesses {
  const run: LiveRun = {
    marker: `${process.pid}-${++runs}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`,
    group: undefined,
  };
  live.add(run);
  installExitHook();
  return {
    marker: run.marker,
    started: (group) => {
      run.group = group;
    },
    signal: async (signal) => {
      killGroup(run.group, signal);
      for (const pid of await markedProcesses(run.marker)) kill(pid, signal);
    },
    end: async (graceMs) => {
      try {
        // One scan in the usual case: the group is gone and nothing carries the marker.
        const marked = await markedProcesses(run.marker);
        if (!groupAlive(run.group) && marked.length === 0) return;
        killGroup(run.group, "SIGTERM");
        for (const pid of marked) kill(pid, "SIGTERM");
        for (const deadline = Date.now() + graceMs; Date.now() < deadline;) {
          await delay(50);
          if (!groupAlive(run.group) && (await markedProcesses(run.marker)).length === 0) return;
        }
        await killRun(run);
      } finally {
        live.delete(run);
      }
    },
  };
}

/**
 * Kills every process of every command still running (see `CommandProcesses`); the CLI calls
 * it when it exits. Commands that ended have had theirs killed already.
 */
export async function killRunningCommands(): Promise<void> {
  await Promise.all([...live].map((run) => killRun(run)));
}

type LiveRun = { marker: string; group: number | undefined };

// With the process id and the time, it makes every run's marker unique on the machine.
let runs = 0;

const live = new Set<LiveRun>();

async function killRun(run: LiveRun): Promise<void> {
  killGroup(run.group, "SIGKILL");
  // A process may fork while the scan runs: scan again until one finds nothing.
  for (let round = 0; round < 10; round++) {
    const marked = await markedProcesses(run.marker);
    if (marked.length === 0) return;
    for (const pid of marked) kill(pid, "SIGKILL");
  }
}

function groupAlive(group: number | undefined): boolean {
  if (group === undefined) return false;
  try {
    process.kill(-group, 0);
    return true;
  } catch {
    return false;
  }
}

function delay(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}

function killGroup(group: number | undefined, signal: NodeJS.Signals): void {
  if (group !== undefined) kill(-group, signal);
}

function kill(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Gone already, or not ours.
  }
}

// Linux shows each process's environment at /proc/<pid>/environ, readable for our own processes.
async function markedProcesses(marker: string): Promise<number[]> {
  const entries = await readdir("/proc").catch(() => [] as string[]);
  const needle = markerBytes(marker);
  const found = await Promise.all(
    entries.map(async (entry) => {
      const pid = Number(entry);
      if (!Number.isInteger(pid) || pid === process.pid) return undefined;
      const environment = await readFile(`/proc/${pid}/environ`).catch(() => undefined);
      return environment !== undefined && carries(environment, needle) ? pid : undefined;
    }),
  );
  return found.filter((pid) => pid !== undefined);
}

function markedProcessesSync(marker: string): number[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const needle = markerBytes(marker);
  const found: number[] = [];
  for (const entry of entries) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      if (carries(readFileSync(`/proc/${pid}/environ`), needle)) found.push(pid);
    } catch {
      // Gone, or not ours.
    }
  }
  return found;
}

function markerBytes(marker: string): Buffer {
  return Buffer.from(`${commandMarkerName}=${marker}\0`);
}

// The environment is NUL-separated: the marker is the first variable or follows a NUL.
function carries(environment: Buffer, needle: Buffer): boolean {
  for (let index = environment.indexOf(needle); index !== -1; index = environment.indexOf(needle, index + 1)) {
    if (index === 0 || environment[index - 1] === 0) return true;
  }
  return false;
}

let exitHookInstalled = false;

// On exit only synchronous work runs: kill the groups, then scan for the marked processes.
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const run of live) {
      killGroup(run.group, "SIGKILL");
      for (let round = 0; round < 10; round++) {
        const marked = markedProcessesSync(run.marker);
        if (marked.length === 0) break;
        for (const pid of marked) kill(pid, "SIGKILL");
      }
    }
  });
}
