import { mkdtempSync, rmSync } from "node:fs";
import { serveViewer, type Viewer } from "simple-agent-loop/viewer";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import type { LogUpdate } from "simple-agent-loop/viewer";

// The page's own reading of an event (the page's script, a browser module that runs in Node too): the stream sends the log's lines unparsed.
const pageStream: string = new URL("../../src/viewer/page/stream.js", import.meta.url).href;
const { readUpdate } = (await import(pageStream)) as { readUpdate: (data: string[]) => LogUpdate };

const created: string[] = [];
afterAll(() => {
  for (const directory of created.splice(0)) rmSync(directory, { recursive: true, force: true });
});

/** A fresh temporary directory, removed after the test file. */
export function tempDir(): string {
  const directory = mkdtempSync(join(tmpdir(), "simple-agent-loop-viewer-"));
  created.push(directory);
  return directory;
}

/** `path` (relative to the viewer's root, e.g. `api/events?file=a.jsonl`) on `viewer`, with its token. */
export function address(viewer: Viewer, path: string): string {
  return `${new URL(viewer.url).origin}/${path}${path.includes("?") ? "&" : "?"}token=${viewer.token}`;
}

/** A `lines` event of the viewer's event stream (its `data:` lines, without the prefix) read as the page reads it. */
export function readLinesEvent(data: string[]): LogUpdate {
  return readUpdate(data);
}

/** A log line as `openSession` writes it. */
export function line(entry: unknown): string {
  return `${JSON.stringify(entry)}\n`;
}

/** A `message` entry's line, with a fixed `ts`. */
export function messageLine(message: Record<string, unknown>, ts = "2025-01-01T00:00:00.000Z"): string {
  return line({ type: "message", message: { ...message, ts } });
}

/**
 * The `lines` events of the viewer's event stream at `url`, as they arrive, each read as the page
 * reads it (a `LogUpdate`). `next()` waits (up to `timeout` ms) for the next one; `close()` ends the
 * stream. `raw` holds every event as sent: its fields, in order.
 */
export async function openEventStream(
  url: string,
  timeout = 20_000,
): Promise<{ next: () => Promise<LogUpdate>; close: () => void; contentType: string | null; raw: string[][] }> {
  const controller = new AbortController();
  const response = await fetch(url, { signal: controller.signal });
  if (!response.ok || response.body === null) throw new Error(`${url}: ${response.status} ${await response.text()}`);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  const queued: LogUpdate[] = [];
  const raw: string[][] = [];
  let wake = (): void => {};
  let ended: unknown;
  void (async () => {
    let buffer = "";
    try {
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
        buffer += chunk.value;
        for (let end = buffer.indexOf("\n\n"); end !== -1; end = buffer.indexOf("\n\n")) {
          const fields = buffer.slice(0, end).split("\n");
          buffer = buffer.slice(end + 2);
          raw.push(fields);
          const data = fields
            .filter((field) => field.startsWith("data: "))
            .map((field) => field.slice("data: ".length));
          if (fields[0] === "event: lines") queued.push(readUpdate(data));
        }
        wake();
      }
      ended = new Error(`${url}: the stream ended`);
    } catch (error) {
      ended = error;
    }
    wake();
  })();
  const next = async (): Promise<LogUpdate> => {
    const deadline = Date.now() + timeout;
    while (queued.length === 0) {
      if (ended !== undefined) throw ended;
      if (Date.now() >= deadline) throw new Error(`no event from ${url} within ${timeout} ms`);
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, deadline - Date.now());
      });
    }
    return queued.shift()!;
  };
  return { next, close: () => controller.abort(), contentType: response.headers.get("content-type"), raw };
}

/** The entries of an update, without line numbers. */
export function entriesOf(update: LogUpdate): unknown[] {
  return update.records.map((record) => record.entry);
}

/** Serves `path` for `test`, closed after it whatever happens. */
export async function withViewer(path: string, test: (viewer: Viewer) => Promise<void>): Promise<void> {
  const viewer = await serveViewer(path);
  try {
    await test(viewer);
  } finally {
    await viewer.close();
  }
}
