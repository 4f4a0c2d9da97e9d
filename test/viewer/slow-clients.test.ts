import { spawn } from "node:child_process";
import { appendFileSync, realpathSync, writeFileSync } from "node:fs";
import { createServer, request, type IncomingMessage } from "node:http";
import { connect, type AddressInfo, type Socket } from "node:net";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { LogUpdate, ViewerOptions } from "simple-agent-loop/viewer";
import { serveViewer } from "simple-agent-loop/viewer";
import { createRequestHandler } from "../../src/viewer/request-handler.ts";
import { address, line, openEventStream, readLinesEvent, tempDir } from "./helpers.ts";

const entry = (index: number, size = 0) => ({
  type: "message",
  message: { role: "user", content: `${index}:${"x".repeat(size)}` },
});

/** A viewer in its own process (see viewer-process.ts), to measure its memory and CPU time alone. */
async function viewerProcess(path: string, options: ViewerOptions) {
  const child = spawn(
    process.execPath,
    [
      "--conditions=simple-agent-loop-source",
      fileURLToPath(new URL("viewer-process.ts", import.meta.url)),
      path,
      JSON.stringify(options),
    ],
    {
      stdio: ["pipe", "pipe", "inherit"],
    },
  );
  const lines = createInterface({ input: child.stdout });
  const waiting: ((line: string) => void)[] = [];
  lines.on("line", (text) => waiting.shift()?.(text));
  const next = (): Promise<string> => new Promise((resolve) => waiting.push(resolve));
  const url = await next();
  return {
    url,
    // The viewer gives its token in the address's fragment; scripts send it as ?token=.
    token: new URL(url).searchParams.get("token") ?? new URLSearchParams(new URL(url).hash.slice(1)).get("token"),
    usage: async (): Promise<{ rssBytes: number; cpuMs: number }> => {
      const answer = next();
      child.stdin.write("\n");
      return JSON.parse(await answer) as { rssBytes: number; cpuMs: number };
    },
    stop: async (): Promise<void> => {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.stdin.end();
      await exited;
    },
  };
}

/** A client that asks for `path` (the event stream by default) of the viewer at `url`, and then never reads a byte. */
function neverReading(url: string, token: string | null, path = "/api/events"): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(`GET ${path}${token === null ? "" : `?token=${token}`} HTTP/1.1\r\nHost: ${hostname}\r\n\r\n`);
      resolve(socket);
    });
    socket.on("error", reject);
  });
}

/** An event stream whose client reads nothing until `read()`, which then reads it to its end and returns its updates. */
function pausedStream(
  url: string,
): Promise<{ response: IncomingMessage; read: (until: (updates: LogUpdate[]) => boolean) => Promise<LogUpdate[]> }> {
  return new Promise((resolve, reject) => {
    const outgoing = request(url, (response) => {
      response.pause();
      resolve({
        response,
        read: (until) =>
          new Promise((done, fail) => {
            const updates: LogUpdate[] = [];
            let buffer = "";
            response.setEncoding("utf8");
            response.on("data", (chunk: string) => {
              buffer += chunk;
              for (let end = buffer.indexOf("\n\n"); end !== -1; end = buffer.indexOf("\n\n")) {
                const fields = buffer.slice(0, end).split("\n");
                buffer = buffer.slice(end + 2);
                if (fields[0] === "event: lines")
                  updates.push(
                    readLinesEvent(fields.filter((field) => field.startsWith("data: ")).map((field) => field.slice(6))),
                  );
              }
              if (until(updates)) done(updates);
            });
            response.on("error", fail);
            response.resume();
          }),
      });
    });
    outgoing.on("error", reject);
    outgoing.end();
  });
}

const until = async (condition: () => Promise<boolean> | boolean, what: string, timeout = 60_000): Promise<void> => {
  const deadline = Date.now() + timeout;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};

const megabytes = (bytes: number): number => Math.round(bytes / 1024 / 1024);

describe("serveViewer: slow clients cost bounded memory", () => {
  it("50 clients that never read a 30 MB log (40 event streams, 10 entries) add little to the server's memory, and others are still served", async () => {
    const path = join(tempDir(), "big.jsonl");
    writeFileSync(path, Array.from({ length: 750 }, (_, index) => line(entry(index, 40_000))).join(""));
    const viewer = await viewerProcess(path, { maxConnections: 100, pollInterval: 200 });
    const sockets: Socket[] = [];
    try {
      // One client reads the whole log first: what serving it costs is not what this test is about.
      const first = await pausedStream(`${new URL(viewer.url).origin}/api/events?token=${viewer.token}`);
      const whole = await first.read(
        (updates) => updates.reduce((sum, update) => sum + update.records.length, 0) >= 750,
      );
      expect(whole[0]!.reset).toBe(true);
      first.response.destroy();
      const before = await viewer.usage();

      for (let index = 0; index < 40; index++) sockets.push(await neverReading(viewer.url, viewer.token));
      for (let index = 0; index < 10; index++)
        sockets.push(await neverReading(viewer.url, viewer.token, "/api/entries"));
      // Let the server do all it will for them: its CPU time stops growing.
      let last = await viewer.usage();
      await until(async () => {
        await new Promise((resolve) => setTimeout(resolve, 1000));
        const now = await viewer.usage();
        const settled = now.cpuMs - last.cpuMs < 50;
        last = now;
        return settled;
      }, "the server to settle");
      const after = await viewer.usage();
      console.log(
        `viewer RSS: ${megabytes(before.rssBytes)} MB with one client done, ${megabytes(after.rssBytes)} MB with 50 clients that never read a 30 MB log`,
      );
      expect(megabytes(after.rssBytes - before.rssBytes)).toBeLessThan(250);

      // Meanwhile another page is served, and follows the log.
      const target = await fetch(`${new URL(viewer.url).origin}/api/target?token=${viewer.token}`);
      expect(target.status).toBe(200);
      const reader = await pausedStream(`${new URL(viewer.url).origin}/api/events?token=${viewer.token}`);
      appendFileSync(path, line(entry(750)));
      const updates = await reader.read((received) =>
        received.some((update) => update.records.some((record) => record.line === 751)),
      );
      expect(updates.flatMap((update) => update.records).map((record) => record.line)).toStrictEqual(
        Array.from({ length: 751 }, (_, index) => index + 1),
      );
      reader.response.destroy();
    } finally {
      for (const socket of sockets) socket.destroy();
      await viewer.stop();
    }
  }, 180_000);

  it("a client that stops reading while the log grows by megabytes gets every line once, in order, when it reads again", async () => {
    const path = join(tempDir(), "growing.jsonl");
    writeFileSync(path, line(entry(0)));
    const viewer = await serveViewer(path, { pollInterval: 50 });
    try {
      const watcher = await openEventStream(address(viewer, "api/events"));
      const paused = await pausedStream(address(viewer, "api/events"));
      await watcher.next();
      for (let index = 1; index <= 400; index++) appendFileSync(path, line(entry(index, 20_000)));
      // The client that reads gets it all meanwhile.
      let seen = 1;
      while (seen < 401) seen += (await watcher.next()).records.length;
      const updates = await paused.read(
        (received) => received.reduce((sum, update) => sum + update.records.length, 0) >= 401,
      );
      expect(updates[0]!.reset).toBe(true);
      expect(updates.slice(1).every((update) => !update.reset)).toBe(true);
      expect(updates.flatMap((update) => update.records)).toStrictEqual(
        Array.from({ length: 401 }, (_, index) => ({ line: index + 1, entry: entry(index, index === 0 ? 0 : 20_000) })),
      );
      expect(updates.flatMap((update) => update.problems)).toStrictEqual([]);
      // And it goes on following the log.
      appendFileSync(path, line(entry(401)));
      watcher.close();
      paused.response.destroy();
    } finally {
      await viewer.close();
    }
  }, 60_000);
});

describe("the viewer's server: a stream whose client reads nothing for long", () => {
  it("is closed, and frees its connection; a stream that reads stays open", async () => {
    const path = join(tempDir(), "big.jsonl");
    // 40 MB: more than the kernel's buffers of a connection hold, so some waits in the server's.
    writeFileSync(path, Array.from({ length: 200 }, (_, index) => line(entry(index, 200_000))).join(""));
    // The handler behind serveViewer, with a short patience so that the test does not wait a minute.
    const handler = createRequestHandler(
      { kind: "file", root: realpathSync(path), name: "big.jsonl" },
      {
        pollInterval: 50,
        token: "a-token-for-this-test",
        limits: { readBytes: 64 * 1024, maxLineBytes: 1024 * 1024 },
        clientBufferBytes: 64 * 1024,
        stalledMs: 1000,
        maxConnections: 2,
      },
    );
    const server = createServer(handler.handle);
    server.on("connection", handler.connect);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/?token=a-token-for-this-test`;
    try {
      const reading = await openEventStream(`${new URL(url).origin}/api/events?token=a-token-for-this-test`);
      const stalled = await neverReading(url, "a-token-for-this-test");
      stalled.on("error", () => {});
      // Two connections of two: no place for a third, until the stalled stream is let go.
      const target = `${new URL(url).origin}/api/target?token=a-token-for-this-test`;
      expect((await fetch(target)).status).toBe(503);
      await until(async () => (await fetch(target)).status === 200, "the stalled stream to be closed", 30_000);
      stalled.destroy();
      // The reading stream got the whole log, and is still open: it hears of an append.
      let seen = 0;
      while (seen < 200) seen += (await reading.next()).records.length;
      appendFileSync(path, line(entry(200, 200_000)));
      expect((await reading.next()).records).toStrictEqual([{ line: 201, entry: entry(200, 200_000) }]);
      reading.close();
    } finally {
      handler.closeStreams();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  }, 60_000);
});

describe("serveViewer: a cap on connections", () => {
  it("answers 503 past maxConnections, and serves again once a connection closes", async () => {
    const path = join(tempDir(), "s.jsonl");
    writeFileSync(path, line(entry(0)));
    const viewer = await serveViewer(path, { maxConnections: 3, pollInterval: 50 });
    try {
      const streams = await Promise.all([1, 2, 3].map(() => openEventStream(address(viewer, "api/events"))));
      const refused = await fetch(address(viewer, "api/target"));
      expect([refused.status, refused.headers.get("retry-after"), await refused.json()]).toStrictEqual([
        503,
        "5",
        { error: "the viewer is busy: it serves 3 connections at once" },
      ]);
      streams[0]!.close();
      await until(
        async () => (await fetch(address(viewer, "api/target"))).status === 200,
        "a place to free up",
        20_000,
      );
      for (const stream of streams) stream.close();
    } finally {
      await viewer.close();
    }
    await expect(serveViewer(path, { maxConnections: 0 })).rejects.toThrow(
      /maxConnections must be an integer from 1 to/,
    );
    await expect(serveViewer(path, { maxLineBytes: 1.5 })).rejects.toThrow(/maxLineBytes must be/);
  });
});

describe("serveViewer: long lines", () => {
  it("reports a line longer than maxLineBytes as a problem naming it, and shows the rest", async () => {
    const path = join(tempDir(), "long.jsonl");
    writeFileSync(path, line(entry(1)) + line(entry(2, 5000)) + line(entry(3)));
    const viewer = await serveViewer(path, { maxLineBytes: 1000, pollInterval: 50 });
    try {
      const problem = {
        line: 2,
        message: `a line of ${line(entry(2, 5000)).length - 1} bytes, longer than the viewer reads (1000 bytes): not shown`,
      };
      const stream = await openEventStream(address(viewer, "api/events"));
      expect(await stream.next()).toStrictEqual({
        reset: true,
        records: [
          { line: 1, entry: entry(1) },
          { line: 3, entry: entry(3) },
        ],
        problems: [problem],
      });
      // A long line still being written is said to be there, and not read.
      appendFileSync(path, JSON.stringify(entry(4, 3000)).slice(0, 2000));
      expect(await stream.next()).toStrictEqual({
        reset: false,
        records: [],
        problems: [],
        partial: { line: 4, bytes: 2000 },
      });
      appendFileSync(path, `${JSON.stringify(entry(4, 3000)).slice(2000)}\n${line(entry(5))}`);
      const next = await stream.next();
      expect(next.records).toStrictEqual([{ line: 5, entry: entry(5) }]);
      expect(next.problems).toStrictEqual([
        { line: 4, message: expect.stringMatching(/^a line of \d+ bytes, longer than the viewer reads/) },
      ]);
      stream.close();
      expect(await (await fetch(address(viewer, "api/entries"))).json()).toStrictEqual({
        reset: true,
        records: [
          { line: 1, entry: entry(1) },
          { line: 3, entry: entry(3) },
          { line: 5, entry: entry(5) },
        ],
        problems: [problem, { line: 4, message: expect.stringMatching(/^a line of/) }],
      });
    } finally {
      await viewer.close();
    }
  });

  it("does not read a torn last line again until the file grows: little CPU while it waits", async () => {
    const path = join(tempDir(), "torn.jsonl");
    // 24 MB, ending in "}" but not a whole object: judging it again costs much.
    const torn = `{"type":"message","message":{"role":"user","content":"${"y".repeat(24_000_000)}","meta":{}}`;
    writeFileSync(path, line(entry(1)) + torn);
    const viewer = await viewerProcess(path, { pollInterval: 20, maxLineBytes: 64_000_000 });
    try {
      const reader = await pausedStream(
        `${new URL(viewer.url).origin}/api/events${viewer.token === null ? "" : `?token=${viewer.token}`}`,
      );
      const updates = await reader.read((received) => received.some((update) => update.partial !== undefined));
      expect(updates.at(-1)!.partial).toStrictEqual({ line: 2, bytes: torn.length });
      const before = await viewer.usage();
      await new Promise((resolve) => setTimeout(resolve, 3000));
      const after = await viewer.usage();
      console.log(`viewer CPU while a 24 MB torn last line waits: ${Math.round(after.cpuMs - before.cpuMs)} ms in 3 s`);
      expect(after.cpuMs - before.cpuMs).toBeLessThan(600);
      reader.response.destroy();
    } finally {
      await viewer.stop();
    }
  }, 60_000);
});
