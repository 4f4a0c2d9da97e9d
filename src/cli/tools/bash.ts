import { spawn, type ChildProcessByStdio } from "node:child_process";
import type { Readable } from "node:stream";
import { tool, type Tool } from "../../tools/tool.ts";
import { defaultMaxProcesses } from "../sandbox/bwrap-arguments.ts";
import { describeAllowedHost } from "../sandbox/allowed-hosts.ts";
import type { CommandSandbox } from "../sandbox/command-sandbox.ts";
import { watchProcessCount } from "../sandbox/process-watchdog.ts";
import { sandboxedLaunch, type SandboxedLaunch } from "../sandbox/sandboxed-launch.ts";
import { commandEnvironment } from "./command-environment.ts";
import { commandMarkerName, commandProcesses } from "./command-processes.ts";
import { outputBuffer } from "./output-buffer.ts";
import type { Workspace } from "./workspace.ts";

/** Options of the `bash` tool; the default limits suit a model's context. */
export type BashLimits = {
  /** Milliseconds a command may run when the call gives no `timeout` (default 120 s). */
  defaultTimeoutMs?: number;
  /** The longest `timeout` a call may ask for (default 10 min). */
  maxTimeoutMs?: number;
  /** Output kept from the start and from the end; the middle of longer output is cut with a note. */
  headBytes?: number;
  tailBytes?: number;
  /** After SIGTERM, milliseconds before the command's processes get SIGKILL (default 2 s). */
  killGraceMs?: number;
  /**
   * Credentials of the CLI's environment the command receives (see `isCredentialName`): none by
   * default, `true` for all of them, or the names listed (e.g. `["GH_TOKEN"]`).
   */
  passCredentials?: boolean | readonly string[];
  /**
   * Output past this many bytes (stdout and stderr together; default 64 MiB) stops the command,
   * as a timeout does: runaway output costs neither memory nor minutes.
   */
  maxOutputBytes?: number;
  /** Runs every command in this sandbox (see `CommandSandbox`); absent: as the user, unconfined. */
  sandbox?: CommandSandbox;
};

/**
 * `bash`: runs `bash -c <command>` in the workspace directory, with stdout and stderr together.
 * The command's environment is the CLI's without its credentials (`commandEnvironment`), unless
 * `passCredentials` says otherwise. When the command ends, everything it started is killed: its
 * process group, and on Linux every process carrying its marker, those that left the group
 * (`setsid`, a double fork) included (`commandProcesses`); a timeout or an abort kills them too
 * (SIGTERM, then SIGKILL), and so does the CLI's exit. Long output keeps its head and tail, with
 * a note of what was cut; output past `maxOutputBytes` stops the command. A non-zero exit, a
 * signal, a timeout or too much output is an error result carrying the output.
 *
 * With `sandbox`, the command runs in it (`CommandSandbox`: the workspace alone writable or
 * nothing, no secrets, no network unless allowed, a bounded number of processes). Without, it is
 * not a sandbox: the command runs with the user's rights and can read or change anything the
 * user can, inside the workspace or not. Either way the CLI asks before each call unless allowed.
 */
export function bashTool(workspace: Workspace, limits: BashLimits = {}): Tool {
  const defaultTimeoutMs = limits.defaultTimeoutMs ?? 120_000;
  const maxTimeoutMs = limits.maxTimeoutMs ?? 600_000;
  return tool({
    name: "bash",
    description:
      "Run a shell command with bash -c in the workspace directory; stdout and stderr come back together (long output is cut in the middle). " +
      `Default timeout ${defaultTimeoutMs / 1000} s. No input can be given to the command: do not start interactive programs or servers that never exit; ` +
      "processes left running in the background are stopped when the command ends." +
      sandboxDescription(limits.sandbox),
    inputSchema: {
      type: "object",
      properties: {
        command: { type: "string", description: "The command line." },
        timeout: {
          type: "integer",
          minimum: 1,
          maximum: Math.ceil(maxTimeoutMs / 1000),
          description: "Seconds before the command is killed.",
        },
      },
      required: ["command"],
      additionalProperties: false,
    },
    eager: false,
    handler: async (input, { signal }) => {
      const { command, timeout } = input as { command: string; timeout?: number };
      const timeoutMs = Math.min(timeout === undefined ? defaultTimeoutMs : timeout * 1000, maxTimeoutMs);
      const found = await runCommand(command, { cwd: workspace.root, timeoutMs, signal, ...limits });
      const run = { ...found, output: found.output + refusedNote(found.refusedHosts) };
      if (run.aborted) throw new Error(`aborted; the command was killed\n${run.output}`);
      if (run.timedOut)
        throw new Error(
          `timed out after ${timeoutMs / 1000} s; the command and the processes it started were killed\n${run.output}`,
        );
      if (run.outputLimited)
        throw new Error(
          `stopped: more than ${limits.maxOutputBytes ?? defaultMaxOutputBytes} bytes of output; the command and the processes it started were killed\n${run.output}`,
        );
      if (run.processLimited)
        throw new Error(
          `stopped: more than ${limits.sandbox?.maxProcesses ?? defaultMaxProcesses} processes at once; the command and everything it started were killed\n${run.output}`,
        );
      if (run.signal !== null) throw new Error(`terminated by ${run.signal}\n${run.output}`);
      if (run.exitCode !== 0) throw new Error(`exit code ${run.exitCode}\n${run.output}`);
      return run.output === "" ? "(no output)" : run.output;
    },
  });
}

export type CommandRun = {
  output: string;
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  aborted: boolean;
  /** Stopped for passing `maxOutputBytes`. */
  outputLimited: boolean;
  /** Stopped for having more processes at once than its sandbox's `maxProcesses` (where no kernel limit holds them). */
  processLimited: boolean;
  /** `host:port` of each connection the sandbox's proxy refused (hosts not in `allowHosts`), in order. */
  refusedHosts: string[];
};

const defaultMaxOutputBytes = 64 * 1024 * 1024;

/** Where and how long a command runs, and how much of its output is kept (see `BashLimits`). */
type CommandOptions = {
  cwd: string;
  timeoutMs: number;
  signal?: AbortSignal;
  headBytes?: number;
  tailBytes?: number;
  killGraceMs?: number;
  passCredentials?: boolean | readonly string[];
  maxOutputBytes?: number;
  sandbox?: CommandSandbox;
};

/** Runs one command as described on `bashTool`; resolves once it and its output are done, or it was killed, and everything it started is gone. */
export async function runCommand(command: string, options: CommandOptions): Promise<CommandRun> {
  options.signal?.throwIfAborted();
  const launch =
    options.sandbox === undefined
      ? { file: "bash", args: ["-c", command], cleanup: async () => undefined }
      : await sandboxedLaunch(options.sandbox, options.cwd, command);
  try {
    return await runLaunched(launch, options);
  } finally {
    await launch.cleanup();
  }
}

async function runLaunched(launch: Omit<SandboxedLaunch, "cleanup">, options: CommandOptions): Promise<CommandRun> {
  const processes = commandProcesses();
  const child = spawn(launch.file, launch.args, {
    cwd: options.cwd,
    // Its own process group: a kill reaches everything it started, and the terminal's Ctrl-C does not.
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...commandEnvironment(process.env, options.passCredentials),
      PAGER: "cat",
      GIT_PAGER: "cat",
      [commandMarkerName]: processes.marker,
    },
  });
  const output = outputBuffer(options.headBytes ?? 10_000, options.tailBytes ?? 20_000);
  const state: RunState = {
    timedOut: false,
    aborted: false,
    outputLimited: false,
    processLimited: false,
    exitCode: null,
    signal: null,
  };
  const timers: NodeJS.Timeout[] = [];
  if (child.pid !== undefined) processes.started(child.pid);
  let stopped = false;
  const stop = (): void => {
    if (stopped) return;
    stopped = true;
    void processes.signal("SIGTERM");
    timers.push(setTimeout(() => void processes.signal("SIGKILL"), options.killGraceMs ?? 2000));
  };
  const maxOutputBytes = options.maxOutputBytes ?? defaultMaxOutputBytes;
  let outputBytes = 0;
  const collect = (chunk: Buffer): void => {
    outputBytes += chunk.length;
    if (outputBytes > maxOutputBytes && !state.outputLimited) {
      state.outputLimited = true;
      stop();
    }
    output.push(chunk);
  };
  child.stdout.on("data", collect);
  child.stderr.on("data", collect);
  // Without a kernel limit, past the limit the whole sandbox goes at once: no grace for a fork bomb.
  const stopWatching =
    launch.watchProcesses === undefined || child.pid === undefined
      ? () => undefined
      : watchProcessCount({
          pid: child.pid,
          maxProcesses: launch.watchProcesses,
          onExceeded: () => {
            state.processLimited = true;
            stopped = true;
            void processes.signal("SIGKILL");
          },
        });
  timers.push(
    setTimeout(() => {
      state.timedOut = true;
      stop();
    }, options.timeoutMs),
  );
  const onAbort = (): void => {
    state.aborted = true;
    stop();
  };
  options.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    await exited(child, state, timers);
  } finally {
    for (const timer of timers) clearTimeout(timer);
    stopWatching();
    options.signal?.removeEventListener("abort", onAbort);
    // Whatever it left running, in its group or not, goes with it.
    await processes.end(options.killGraceMs ?? 2000);
  }
  return {
    output: plainText(output.text()),
    exitCode: state.exitCode,
    signal: state.timedOut || state.aborted || state.outputLimited || state.processLimited ? null : state.signal,
    timedOut: state.timedOut,
    aborted: state.aborted,
    outputLimited: state.outputLimited,
    processLimited: state.processLimited,
    refusedHosts: launch.refused?.() ?? [],
  };
}

/** How the command ended, as far as known: its exit, and whether a timeout or an abort stopped it. */
type RunState = {
  timedOut: boolean;
  aborted: boolean;
  outputLimited: boolean;
  processLimited: boolean;
  exitCode: number | null;
  signal: string | null;
};

/** Resolves when the command's output is closed, or a moment after it exited (then the pipes are destroyed); the timer joins `timers`. */
function exited(
  child: ChildProcessByStdio<null, Readable, Readable>,
  state: RunState,
  timers: NodeJS.Timeout[],
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      state.exitCode = code;
      state.signal = signal;
      // Its output ends when every process holding the pipes is done: give stragglers a moment.
      timers.push(
        setTimeout(() => {
          child.stdout.destroy();
          child.stderr.destroy();
          resolve();
        }, 1000),
      );
    });
    child.on("close", () => resolve());
  });
}

// Commands that think they talk to a terminal colour their output (CSI) or set titles and
// links (OSC, ended by BEL or ESC \); the model needs the text.
function plainText(output: string): string {
  // eslint-disable-next-line no-control-regex -- ANSI escape sequences begin with ESC.
  return output.replace(/\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)/g, "");
}

// The model should know what will fail before it tries: writes outside the workspace, the network.
function sandboxDescription(sandbox: CommandSandbox | undefined): string {
  if (sandbox === undefined) return "";
  const writable =
    sandbox.mode === "workspace-write"
      ? "only the workspace and a private /tmp (emptied after each command) are writable"
      : "the workspace is read-only, only a private /tmp (emptied after each command) is writable";
  return ` Commands run in a sandbox: ${writable}; credentials and settings in the home directory are hidden; ${networkDescription(sandbox)}.`;
}

function networkDescription(sandbox: CommandSandbox): string {
  if (sandbox.allowNetwork) return "the network is there";
  const hosts = sandbox.allowHosts ?? [];
  if (hosts.length === 0) return "there is no network";
  return `there is no network but HTTP and HTTPS to ${hosts.map(describeAllowedHost).join(", ")}, through the proxy HTTP_PROXY and HTTPS_PROXY name (programs that ignore them cannot connect; other hosts are refused with 403)`;
}

// The model learns why a download failed, and the user's way to allow it.
function refusedNote(refused: readonly string[]): string {
  if (refused.length === 0) return "";
  const hosts = refused.slice(0, 10).join(", ");
  return `\n[the sandbox refused network access to ${hosts}${refused.length > 10 ? ", …" : ""}: not in --allow-host; the user can allow a host with --allow-host <host>]`;
}
