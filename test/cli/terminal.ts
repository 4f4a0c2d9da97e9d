// The CLI in a pseudo-terminal, as a user runs it: a real Node process on a pty, its output fed
// to a headless terminal emulator, whose screen the tests read. Waits poll the screen; nothing
// here sleeps a fixed time to decide anything.
import { spawn, type IPty } from "@lydell/node-pty";
import xterm from "@xterm/headless";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const repositoryRoot = fileURLToPath(new URL("../..", import.meta.url));

/**
 * Node's compile cache shared by every CLI the tests start (Node turns it on from this variable,
 * before the CLI would turn on its own in its fresh test home): the sources are type-stripped
 * and compiled once for the whole run instead of at every start.
 */
export const sharedCompileCache = { NODE_COMPILE_CACHE: join(tmpdir(), "simple-agent-loop-test-compile-cache") };

export type CliTerminal = {
  /** The whole screen and scrollback as text, wrapped lines joined. */
  screen: () => string;
  /** Resolves once the screen matches (a string: contains it); throws with the screen after `timeoutMs`. */
  waitFor: (expected: string | RegExp, timeoutMs?: number) => Promise<string>;
  /** Types `text` (use "\r" for Enter, "\x03" for Ctrl-C, "\x04" for Ctrl-D). */
  type: (text: string) => void;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number>;
  kill: () => void;
};

/**
 * Starts `src/cli/main.ts` (or `script`, e.g. `src/cli/start.ts` of `npm start`) on a pty with
 * `args`, in `cwd`, with exactly `env` (plus TERM and `sharedCompileCache`) as its environment.
 */
export function startCliTerminal(
  args: string[],
  options: { cwd: string; env: Record<string, string>; script?: string },
): CliTerminal {
  const columns = 120;
  const terminal = new xterm.Terminal({ cols: columns, rows: 40, scrollback: 5000, allowProposedApi: true });
  const child: IPty = spawn(
    process.execPath,
    ["--conditions=simple-agent-loop-source", `${repositoryRoot}${options.script ?? "src/cli/main.ts"}`, ...args],
    {
      name: "xterm-256color",
      cols: columns,
      rows: 40,
      cwd: options.cwd,
      env: { ...sharedCompileCache, ...options.env, TERM: "xterm-256color" },
    },
  );
  child.onData((data) => terminal.write(data));
  const exited = new Promise<number>((resolve) => child.onExit(({ exitCode }) => resolve(exitCode)));
  let done = false;
  void exited.then(() => (done = true));
  const screen = (): string => {
    const buffer = terminal.buffer.active;
    const lines: string[] = [];
    for (let index = 0; index < buffer.length; index++) {
      const line = buffer.getLine(index);
      if (line === undefined) continue;
      const text = line.translateToString(true);
      if (line.isWrapped && lines.length > 0) lines[lines.length - 1] += text;
      else lines.push(text);
    }
    return lines.join("\n").replace(/\n+$/, "");
  };
  const matches = (expected: string | RegExp): boolean => {
    const text = screen();
    return typeof expected === "string" ? text.includes(expected) : expected.test(text);
  };
  return {
    screen,
    waitFor: async (expected, timeoutMs = 30_000) => {
      const deadline = Date.now() + timeoutMs;
      while (!matches(expected)) {
        if (Date.now() > deadline)
          throw new Error(
            `timed out waiting for ${String(expected)}${done ? " (the process has exited)" : ""}; the screen:\n${screen()}`,
          );
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return screen();
    },
    type: (text) => child.write(text),
    exited,
    kill: () => {
      if (!done) child.kill("SIGKILL");
    },
  };
}
