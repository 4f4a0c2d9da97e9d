import { spawn, type ChildProcess } from "node:child_process";
import { PassThrough, type Readable } from "node:stream";
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import { getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/** How `stdioTransport` starts a server. */
export type StdioServerStart = {
  command: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  /** `"pipe"`: the server's stderr is readable on `stderr`; `"inherit"`: it goes to this process's stderr. */
  stderr: "pipe" | "inherit";
};

/** A stdio transport whose server leads its own process group. */
export type StdioTransport = Transport & {
  /** The server's stderr when started with `stderr: "pipe"`, readable before `start`. */
  stderr: Readable | undefined;
};

/**
 * The MCP client side of a stdio server (newline-delimited JSON-RPC on its stdin and stdout). The
 * server is started in its own process group, so closing ends everything it started, not only the
 * server: stdin is closed, then the group gets SIGTERM and SIGKILL (2 s apart) until it is empty,
 * and this process's exit kills every group still open, however it exits (short of SIGKILL).
 */
export function stdioTransport(start: StdioServerStart): StdioTransport {
  const stderr = start.stderr === "pipe" ? new PassThrough() : undefined;
  const reader = new ReadBuffer();
  let child: ChildProcess | undefined;
  let exited: Promise<void> | undefined;
  let closing: Promise<void> | undefined;
  const transport: StdioTransport = {
    stderr,
    start: () =>
      new Promise<void>((resolve, reject) => {
        if (child !== undefined) throw new Error("stdio transport already started");
        const server = spawn(start.command, start.args ?? [], {
          env: { ...getDefaultEnvironment(), ...start.env },
          ...(start.cwd === undefined ? {} : { cwd: start.cwd }),
          stdio: ["pipe", "pipe", start.stderr],
          // Its own process group: closing reaches everything it started, and the terminal's Ctrl-C does not.
          detached: true,
        });
        child = server;
        exited = new Promise((settle) => server.once("close", () => settle()));
        server.once("error", (error) => {
          reject(error);
          transport.onerror?.(error);
        });
        server.once("spawn", () => {
          if (server.pid !== undefined) openGroups.add(server.pid);
          installExitHook();
          resolve();
        });
        server.once("close", () => transport.onclose?.());
        server.stdin!.on("error", (error) => transport.onerror?.(error));
        server.stdout!.on("error", (error) => transport.onerror?.(error));
        server.stdout!.on("data", (chunk: Buffer) => readMessages(chunk));
        if (stderr !== undefined) server.stderr?.pipe(stderr);
      }),
    send: (message) =>
      new Promise<void>((resolve, reject) => {
        if (child === undefined || closing !== undefined) {
          reject(new Error("Not connected"));
          return;
        }
        if (child.stdin!.write(serializeMessage(message))) resolve();
        else child.stdin!.once("drain", resolve);
      }),
    close: () => (closing ??= stop()),
  };

  function readMessages(chunk: Buffer): void {
    try {
      reader.append(chunk);
    } catch (error) {
      transport.onerror?.(error as Error);
      void transport.close();
      return;
    }
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = reader.readMessage();
      } catch (error) {
        // One malformed line is reported; the lines after it are still read.
        transport.onerror?.(error as Error);
        continue;
      }
      if (message === null) return;
      transport.onmessage?.(message);
    }
  }

  async function stop(): Promise<void> {
    const group = child?.pid;
    if (child === undefined || group === undefined) return;
    try {
      child.stdin?.end();
    } catch {
      // Its stdin is already gone.
    }
    // A server that exits when its stdin closes is given the chance; what it started may still run.
    if (child.exitCode === null && child.signalCode === null) await within(graceMs, exited!);
    for (const signal of ["SIGTERM", "SIGKILL"] as const) {
      if (!groupAlive(group)) break;
      killGroup(group, signal);
      await untilGroupEmpty(group, graceMs);
    }
    await exited;
    openGroups.delete(group);
    reader.clear();
  }

  return transport;
}

// How long a server (and its group) has to exit after its stdin closes, and after SIGTERM.
const graceMs = 2_000;

// Groups of servers started and not yet ended: this process's exit kills them.
const openGroups = new Set<number>();

let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const group of openGroups) killGroup(group, "SIGKILL");
  });
}

// A group with only zombies left still answers signal 0 until they are reaped: wait for it to empty.
async function untilGroupEmpty(group: number, milliseconds: number): Promise<void> {
  for (const deadline = Date.now() + milliseconds; Date.now() < deadline && groupAlive(group);) await delay(25);
}

function groupAlive(group: number): boolean {
  try {
    process.kill(-group, 0);
    return true;
  } catch {
    return false;
  }
}

function killGroup(group: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-group, signal);
  } catch {
    // Gone already.
  }
}

async function within(milliseconds: number, work: Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([work, new Promise<void>((resolve) => (timer = setTimeout(resolve, milliseconds)))]);
  } finally {
    clearTimeout(timer);
  }
}

function delay(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}
