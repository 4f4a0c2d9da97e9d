// The viewer serves the images and files a log's content parts keep as blobs (`<log>.blobs/<sha256>`):
// only with its token, only what is really in the log's blob directory, a raster image as what its
// bytes are, anything else as a download that cannot run as a page.
import { mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { describe, expect, it } from "vitest";
import { filePart, imagePart, send } from "simple-agent-loop";
import { closeSession, openSession } from "simple-agent-loop/store";
import { createHash } from "node:crypto";
import { address, withViewer, tempDir } from "./helpers.ts";

// A real 1×1 PNG.
const png = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64",
);
const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
const pdf = Buffer.from("%PDF-1.4\n%%EOF\n");
const hashOf = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex");

async function storedSession(directory: string): Promise<string> {
  const path = join(directory, "s.jsonl");
  const session = await openSession(path);
  send(session, [
    { type: "text", text: "look" },
    imagePart(png, "image/png"),
    // A part that claims to be a PNG but is an SVG with a script.
    imagePart(svg, "image/png"),
    filePart(pdf, "application/pdf", "report.pdf"),
  ]);
  await closeSession(session);
  return path;
}

describe("GET /api/blob", () => {
  it("serves a PNG inline as image/png, nosniff and sandboxed, only with the token", async () => {
    const path = await storedSession(tempDir());
    expect(readdirSync(`${path.slice(0, -".jsonl".length)}.blobs`).sort()).toStrictEqual(
      [hashOf(png), hashOf(svg), hashOf(pdf)].sort(),
    );
    await withViewer(path, async (viewer) => {
      const url = address(viewer, `api/blob?file=s.jsonl&hash=${hashOf(png)}`);
      const response = await fetch(url);
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toBe("image/png");
      expect(response.headers.get("x-content-type-options")).toBe("nosniff");
      expect(response.headers.get("content-disposition")).toBe("inline");
      expect(response.headers.get("content-security-policy")).toBe("default-src 'none'; sandbox");
      expect(Buffer.from(await response.arrayBuffer())).toStrictEqual(png);
      const withoutToken = await fetch(url.replace(/[?&]token=[^&]+/, ""));
      expect(withoutToken.status).toBe(403);
      // The page's way: the token in a header.
      const byHeader = await fetch(url.replace(/[?&]token=[^&]+/, ""), { headers: { "x-viewer-token": viewer.token } });
      expect(byHeader.status).toBe(200);
      const head = await fetch(url, { method: "HEAD" });
      expect(head.headers.get("content-length")).toBe(String(png.length));
    });
  });

  it("serves an SVG or a PDF only as a download (application/octet-stream), whatever the part said", async () => {
    const path = await storedSession(tempDir());
    await withViewer(path, async (viewer) => {
      for (const bytes of [svg, pdf]) {
        const response = await fetch(address(viewer, `api/blob?file=s.jsonl&hash=${hashOf(bytes)}`));
        expect(response.status).toBe(200);
        expect(response.headers.get("content-type")).toBe("application/octet-stream");
        expect(response.headers.get("content-disposition")).toBe(`attachment; filename="${hashOf(bytes)}"`);
        expect(response.headers.get("x-content-type-options")).toBe("nosniff");
        expect(Buffer.from(await response.arrayBuffer())).toStrictEqual(bytes);
      }
    });
  });

  it("refuses what is not a blob hash, a missing blob, and links leading out of the blob directory", async () => {
    const directory = tempDir();
    const path = await storedSession(directory);
    const outside = tempDir();
    writeFileSync(join(outside, hashOf(Buffer.from("secret"))), "secret");
    const blobs = join(directory, "s.blobs");
    symlinkSync(join(outside, hashOf(Buffer.from("secret"))), join(blobs, hashOf(Buffer.from("secret"))));
    mkdirSync(join(blobs, "f".repeat(64)));
    await withViewer(path, async (viewer) => {
      const status = async (query: string): Promise<number> =>
        (await fetch(address(viewer, `api/blob?${query}`))).status;
      expect(await status(`file=s.jsonl&hash=../../etc/passwd`)).toBe(400);
      expect(await status(`file=s.jsonl&hash=${hashOf(png).toUpperCase()}`)).toBe(400);
      expect(await status(`file=s.jsonl`)).toBe(400);
      expect(await status(`file=s.jsonl&hash=${"0".repeat(64)}`)).toBe(404);
      expect(await status(`file=s.jsonl&hash=${hashOf(Buffer.from("secret"))}`)).toBe(404);
      expect(await status(`file=s.jsonl&hash=${"f".repeat(64)}`)).toBe(404);
      expect(await status(`file=other.jsonl&hash=${hashOf(png)}`)).toBe(404);
    });
    // The blob directory itself swapped for a link to elsewhere.
    rmSync(blobs, { recursive: true });
    mkdirSync(join(outside, "elsewhere"));
    writeFileSync(join(outside, "elsewhere", hashOf(png)), png);
    symlinkSync(join(outside, "elsewhere"), blobs);
    await withViewer(path, async (viewer) => {
      expect((await fetch(address(viewer, `api/blob?file=s.jsonl&hash=${hashOf(png)}`))).status).toBe(404);
    });
  });

  it("serves the blobs of a session chosen from a directory by name", async () => {
    const directory = tempDir();
    const path = await storedSession(directory);
    await withViewer(directory, async (viewer) => {
      const response = await fetch(address(viewer, `api/blob?file=${basename(path)}&hash=${hashOf(png)}`));
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toBe("image/png");
      expect((await fetch(address(viewer, `api/blob?file=..%2Fs.jsonl&hash=${hashOf(png)}`))).status).toBe(400);
    });
  });
});
