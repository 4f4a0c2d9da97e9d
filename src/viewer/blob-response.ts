import { constants, existsSync } from "node:fs";
import { open, readlink, realpath, type FileHandle } from "node:fs/promises";
import type { ServerResponse } from "node:http";
import { basename, dirname, join } from "node:path";
import { pipeline } from "node:stream/promises";
import { sniffBytes, sniffMediaType } from "../content-parts.ts";
import { blobDirectory, isBlobHash } from "../store/blobs.ts";

/** Images a browser draws without running anything: served inline as what their bytes say they are. */
const drawnImages: ReadonlySet<string> = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

/**
 * Answers with the blob `hash` of the log at `logPath` (its file store's `<log>.blobs/<hash>`): a
 * PNG, JPEG, GIF or WebP, as its bytes say (never as the log says), inline; anything else (a PDF, an
 * SVG, whatever a part claims) as `application/octet-stream`, to be downloaded. Every answer says
 * `nosniff` and carries a sandboxing Content-Security-Policy, so nothing in a blob can run as a page
 * of the viewer. Refused: a `hash` that is not 64 lowercase hex digits (400), a blob directory that
 * is a link or a blob that is a link, a directory or a special file (404).
 */
export async function sendBlob(
  response: ServerResponse,
  logPath: string,
  hash: string | null,
  headers: Record<string, string>,
  headOnly: boolean,
): Promise<{ status: number; error: string } | undefined> {
  if (!isBlobHash(hash)) return { status: 400, error: "hash must be a blob's 64 lowercase hex digits" };
  const directory = blobDirectory(logPath);
  const missing = { status: 404, error: `no blob ${hash} beside ${basename(logPath)}` };
  // The log's own path is real; its blob directory must be the very directory beside it, not a link.
  if ((await realpath(directory).catch(() => undefined)) !== join(dirname(logPath), basename(directory)))
    return missing;
  const handle = await open(
    join(directory, hash),
    constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
  ).catch(() => undefined);
  if (handle === undefined) return missing;
  try {
    const stats = await handle.stat();
    if (!stats.isFile() || !(await opensInside(handle, directory))) return missing;
    const head = Buffer.alloc(sniffBytes);
    const { bytesRead } = await handle.read(head, 0, sniffBytes, 0);
    const type = sniffMediaType(head.subarray(0, bytesRead));
    const drawn = type !== undefined && drawnImages.has(type);
    response.writeHead(200, {
      ...headers,
      "content-type": drawn ? type : "application/octet-stream",
      "content-length": stats.size,
      "content-disposition": drawn ? "inline" : `attachment; filename="${hash}"`,
      "content-security-policy": "default-src 'none'; sandbox",
      "cross-origin-resource-policy": "same-origin",
    });
    if (headOnly) return void response.end();
    await pipeline(handle.createReadStream({ start: 0, autoClose: false }), response);
    return undefined;
  } finally {
    await handle.close();
  }
}

// Linux names an open descriptor's file: it must be in the blob directory, whatever was swapped in.
async function opensInside(handle: FileHandle, directory: string): Promise<boolean> {
  if (!existsSync("/proc/self/fd")) return true;
  const actual = await readlink(`/proc/self/fd/${handle.fd}`).catch(() => undefined);
  return actual !== undefined && dirname(actual) === directory;
}
