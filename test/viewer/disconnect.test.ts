import type * as nodeFs from "node:fs";
import { writeFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { serveViewer } from "simple-agent-loop/viewer";
import { address, messageLine, openEventStream, tempDir } from "./helpers.ts";

// Counts the file watches the viewer holds open: a page that went away must not leave one behind.
const watches = vi.hoisted(() => ({ open: 0 }));
vi.mock("node:fs", async (importOriginal) => {
  const fs = await importOriginal<typeof nodeFs>();
  const watch = (...args: Parameters<typeof fs.watch>) => {
    const watcher = fs.watch(...args);
    watches.open++;
    let closed = false;
    const close = watcher.close.bind(watcher);
    watcher.close = () => {
      if (!closed) watches.open--;
      closed = true;
      close();
    };
    return watcher;
  };
  return { ...fs, default: { ...fs, watch }, watch };
});

const until = async (condition: () => boolean, what: string): Promise<void> => {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};

describe("serveViewer: one reader per log", () => {
  it("follows a log once however many pages show it, and stops when the last one leaves", async () => {
    const directory = tempDir();
    writeFileSync(join(directory, "a.jsonl"), messageLine({ role: "user", content: "hello" }));
    writeFileSync(join(directory, "b.jsonl"), messageLine({ role: "user", content: "other" }));
    const viewer = await serveViewer(directory, { pollInterval: 50 });
    try {
      const streams = await Promise.all(
        Array.from({ length: 6 }, () => openEventStream(address(viewer, "api/events?file=a.jsonl"))),
      );
      for (const stream of streams) expect((await stream.next()).records).toHaveLength(1);
      expect(watches.open).toBe(1);
      const other = await openEventStream(address(viewer, "api/events?file=b.jsonl"));
      await other.next();
      expect(watches.open).toBe(2);
      other.close();
      for (const stream of streams.slice(1)) stream.close();
      await until(() => watches.open === 1, "the other log's watch to stop");
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(watches.open).toBe(1);
      streams[0]!.close();
      await until(() => watches.open === 0, "the last page's watch to stop");
    } finally {
      await viewer.close();
    }
  });
});

describe("serveViewer: pages that go away", () => {
  it("stops watching a log when its page disconnects, also when it leaves before the stream starts", async () => {
    const directory = tempDir();
    writeFileSync(join(directory, "a.jsonl"), messageLine({ role: "user", content: "hello" }));
    const viewer = await serveViewer(directory, { pollInterval: 50 });
    try {
      const stream = await openEventStream(address(viewer, `api/events?file=a.jsonl`));
      await stream.next();
      expect(watches.open).toBe(1);
      stream.close();
      await until(() => watches.open === 0, "the watch of a closed stream to stop");

      // Clients that send the request and hang up at once, while the server is still finding the file.
      const { port } = new URL(viewer.url);
      await Promise.all(
        Array.from(
          { length: 40 },
          () =>
            new Promise<void>((resolve) => {
              const socket = connect(Number(port), "127.0.0.1", () => {
                socket.end(`GET /api/events?file=a.jsonl&token=${viewer.token} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
                socket.destroy();
                resolve();
              });
            }),
        ),
      );
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(watches.open).toBe(0);
    } finally {
      await viewer.close();
    }
  });
});
