import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { send } from "simple-agent-loop";
import { closeSession, fileStore, loadSession, openSession } from "simple-agent-loop/store";
import { startChild } from "./child-process.ts";
import { tempDir } from "./helpers.ts";

describe("one writer per session file", () => {
  it("refuses a second open in the same process until the first is closed", async () => {
    const path = join(tempDir(), "same-process.jsonl");
    const first = await openSession(path);
    await expect(openSession(path)).rejects.toMatchObject({
      name: "SessionLockedError",
      code: "locked",
      message: `${path} is already open for writing in this process; close it (closeSession) before opening it again, or read it with loadSession.`,
    });
    // Reading is always allowed.
    await expect(loadSession(path)).resolves.toStrictEqual(first);
    await closeSession(first);
    expect(existsSync(`${path}.lock`)).toBe(false);
    const second = await openSession(path);
    await closeSession(second);
    await closeSession(second); // closing twice is harmless
  });

  it("refuses a writer while another process has the file open, and takes the lock over once that process is killed", async () => {
    const directory = tempDir();
    const path = join(directory, "two-processes.jsonl");
    const child = startChild(path, join(directory, "effects"), "model:0");
    try {
      expect(await child.stopped).toBe(true); // the child holds the file, blocked in its first model call
      const error: unknown = await openSession(path).catch((thrown: unknown) => thrown);
      expect(error).toMatchObject({ name: "SessionLockedError", code: "locked" });
      expect((error as Error).message).toMatch(
        new RegExp(
          `^${escape(path)} is open for writing by process ${child.pid} since [^:]+:\\d\\d:\\d\\d\\.\\d+Z: a session has one writer at a time\\. Close it there first; if that process is gone, delete ${escape(path)}\\.lock\\.$`,
        ),
      );
    } finally {
      await child.kill();
    }
    // The lock its killed owner left is stale: taken over.
    const session = await openSession(path);
    expect(JSON.parse(readFileSync(`${path}.lock`, "utf8"))).toStrictEqual({
      pid: process.pid,
      hostname: hostname(),
      since: expect.any(String),
      started: expect.any(String),
    });
    send(session, "mine now");
    await closeSession(session);
    expect(existsSync(`${path}.lock`)).toBe(false);
  });

  it("never takes over a lock it cannot check: another host's, or one it cannot read", async () => {
    const directory = tempDir();
    const path = join(directory, "elsewhere.jsonl");
    writeFileSync(
      `${path}.lock`,
      JSON.stringify({
        pid: 1,
        hostname: "build-box-7",
        since: "2025-01-01T00:00:00.000Z",
        started: "2025-01-01T00:00:00.000Z",
      }),
    );
    await expect(openSession(path)).rejects.toThrow(
      `${path} is open for writing by process 1 on host build-box-7 (its liveness cannot be checked from here) since 2025-01-01T00:00:00.000Z: a session has one writer at a time. Close it there first; if that process is gone, delete ${path}.lock.`,
    );
    writeFileSync(`${path}.lock`, "");
    await expect(openSession(path)).rejects.toThrow(
      `${path} is locked by ${path}.lock, whose owner cannot be read. If no process has this session open, delete ${path}.lock.`,
    );
    expect(readFileSync(`${path}.lock`, "utf8")).toBe("");
  });

  it("refuses a second writer in another thread of this process", async () => {
    const path = join(tempDir(), "threads.jsonl");
    const worker = new Worker(new URL("./lock-worker.ts", import.meta.url), { workerData: { path } });
    try {
      expect(await nextMessage(worker)).toBe("open");
      await expect(openSession(path)).rejects.toThrow(`${path} is already open for writing in this process`);
      worker.postMessage("close");
      expect(await nextMessage(worker)).toBe("closed");
      await closeSession(await openSession(path));
    } finally {
      await worker.terminate();
    }
  });

  it("takes over a lock with this pid left by an earlier process (a reused pid, as a container's pid 1 after a restart)", async () => {
    const path = join(tempDir(), "reused-pid.jsonl");
    const earlier = new Date(Date.now() - 3_600_000).toISOString();
    writeFileSync(
      `${path}.lock`,
      JSON.stringify({ pid: process.pid, hostname: hostname(), since: earlier, started: earlier }),
    );
    const session = await openSession(path);
    expect(JSON.parse(readFileSync(`${path}.lock`, "utf8"))).toMatchObject({
      pid: process.pid,
      since: expect.not.stringMatching(earlier),
    });
    await closeSession(session);
  });

  it("takes over a lock left by a dead process of this host", async () => {
    const path = join(tempDir(), "stale.jsonl");
    const child = startChild(path, join(tempDir(), "effects"), "model:0");
    await child.stopped;
    await child.kill();
    const left = readFileSync(`${path}.lock`, "utf8");
    expect(JSON.parse(left)).toMatchObject({ pid: child.pid, hostname: hostname() });
    const session = await openSession(path);
    expect(session.messages.map((message) => ("role" in message ? message.role : message.type))).toStrictEqual([
      "system",
      "user",
    ]);
    await closeSession(session);
  });
});

describe.skipIf(process.platform === "win32")("owner-only permissions", () => {
  it("creates the session file and its lock readable and writable by the owner only, and a store's directory private", async () => {
    const directory = join(tempDir(), "store");
    const store = fileStore(directory);
    const session = await store.open("private");
    const path = store.path("private");
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(`${path}.lock`).mode & 0o777).toBe(0o600);
    expect(statSync(directory).mode & 0o777).toBe(0o700);
    await closeSession(session);
  });

  it("creates missing parent directories of a session file, owner-only", async () => {
    const directory = join(tempDir(), "sessions", "2026");
    const path = join(directory, "task-42.jsonl");
    const session = await openSession(path);
    send(session, "hi");
    await closeSession(session);
    expect((await loadSession(path)).messages).toStrictEqual(session.messages);
    expect(statSync(directory).mode & 0o777).toBe(0o700);
  });

  it("leaves the permissions of an existing file as they are", async () => {
    const directory = tempDir();
    mkdirSync(join(directory, "shared"));
    const path = join(directory, "shared", "team.jsonl");
    writeFileSync(path, "", { mode: 0o640 });
    const session = await openSession(path);
    send(session, "hi");
    await closeSession(session);
    expect(statSync(path).mode & 0o777).toBe(0o640);
  });
});

function nextMessage(worker: Worker): Promise<unknown> {
  return new Promise((resolve, reject) => {
    worker.once("message", resolve);
    worker.once("error", reject);
  });
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
