import { chmodSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  agentLoop,
  compactSession,
  extendSession,
  filePart,
  imagePart,
  initSession,
  send,
  tool,
  toolContent,
  type Session,
} from "simple-agent-loop";
import { closeSession, loadEntries, loadSession, openSession } from "simple-agent-loop/store";
import { scriptedModel } from "simple-agent-loop/testing";
import { fileBlobStore, blobHash } from "../../src/store/blobs.ts";
import { screenshot } from "./crash-agent.ts";
import { tempDir } from "./helpers.ts";

const image = screenshot(1);
const pdf = new TextEncoder().encode("%PDF-1.4\n".repeat(500));

async function recordedSession(path: string): Promise<Session> {
  const session = await openSession(path);
  for (const message of initSession("s", [
    { type: "text", text: "Compare these." },
    imagePart(image, "image/png"),
    filePart(pdf, "application/pdf", "report.pdf"),
    { type: "image", url: "https://example.com/cat.png" },
  ]).messages)
    extendSession(session, message);
  const shoot = tool({
    name: "shoot",
    description: "Screenshot.",
    inputSchema: { type: "object" },
    handler: () => toolContent([{ type: "text", text: "the page" }, imagePart(image, "image/png")]),
  });
  const model = scriptedModel([
    { type: "tool_call", id: "c1", name: "shoot", input: {} },
    { role: "assistant", content: "same" },
  ]);
  await agentLoop(model, [shoot], session);
  send(session, [{ type: "text", text: "and again" }, imagePart(image, "image/png")]);
  await closeSession(session);
  return session;
}

describe("file store: content parts' data in content-addressed blobs", () => {
  it("keeps each distinct part's bytes once, beside the log, and loadSession restores the session exactly", async () => {
    const directory = tempDir();
    const path = join(directory, "s.jsonl");
    const session = await recordedSession(path);

    expect(await loadSession(path)).toStrictEqual(session);
    expect(JSON.parse(JSON.stringify(await loadSession(path)))).toStrictEqual(JSON.parse(JSON.stringify(session)));
    // Three references to the image, one to the PDF: two blobs, holding the raw bytes.
    const blobs = join(directory, "s.blobs");
    expect(readdirSync(blobs).sort()).toStrictEqual([blobHash(image), blobHash(pdf)].sort());
    expect(new Uint8Array(readFileSync(join(blobs, blobHash(image))))).toStrictEqual(image);
    const log = readFileSync(path, "utf8");
    expect(log).not.toMatch(/"data":/);
    expect(log).toContain(`"blob":"${blobHash(image)}"`);
    // The log stays small: the 48 KB image three times and a 4.5 KB PDF take no room in it.
    expect(log.length).toBeLessThan(3000);
    expect((await loadEntries(path))[1]).toMatchObject({
      type: "message",
      message: { role: "user", content: [{}, { data: imagePart(image, "image/png").data }, {}, {}] },
    });
  });

  it("makes the blob directory and files owner-only, as the log", async () => {
    const directory = tempDir();
    await recordedSession(join(directory, "s.jsonl"));
    expect(statSync(join(directory, "s.blobs")).mode & 0o777).toBe(0o700);
    for (const name of readdirSync(join(directory, "s.blobs")))
      expect(statSync(join(directory, "s.blobs", name)).mode & 0o777).toBe(0o600);
  });

  it("resumes in the same file, adding blobs as the session grows", async () => {
    const directory = tempDir();
    const path = join(directory, "s.jsonl");
    const first = await recordedSession(path);
    const session = await openSession(path);
    expect(session).toStrictEqual(first);
    send(session, [imagePart(screenshot(2), "image/png")]);
    await closeSession(session);
    expect(await loadSession(path)).toStrictEqual(session);
    expect(readdirSync(join(directory, "s.blobs"))).toHaveLength(3);
  });

  it("records compaction's replacements of messages with parts through blobs too", async () => {
    const directory = tempDir();
    const path = join(directory, "s.jsonl");
    const session = await openSession(path);
    extendSession(session, { role: "system", content: "s" });
    for (let turn = 0; turn < 4; turn++) {
      send(session, [
        { type: "text", text: `turn ${turn} ${"x".repeat(3000)}` },
        imagePart(screenshot(turn), "image/png"),
      ]);
      extendSession(session, { role: "assistant", content: "y".repeat(3000) });
    }
    compactSession(session, { keepTurns: 1, maxLength: 100 });
    await closeSession(session);
    expect(await loadSession(path)).toStrictEqual(session);
    expect(readFileSync(path, "utf8")).not.toMatch(/"data":/);
  });

  it("refuses base64 that is not canonical, and a part with a blob field, before anything is written", async () => {
    const directory = tempDir();
    const path = join(directory, "s.jsonl");
    const session = await openSession(path);
    // "iVBORw0KGgp=" decodes to the same bytes as "iVBORw0KGgo=": a blob would read back as the latter.
    expect(() => send(session, [{ type: "image", mediaType: "image/png", data: "iVBORw0KGgp=" }])).toThrow(
      'user message content[0]: "data" is not canonical base64 (the bits after the last byte must be zero)',
    );
    const other = "0".repeat(64);
    const smuggled = { type: "image", mediaType: "image/png", data: "iVBORw0KGgo=", blob: other } as never;
    expect(() => send(session, [smuggled])).toThrow(
      'user message content[0]: an image part has no field "blob" (it takes type, mediaType, data, url)',
    );
    send(session, "after");
    await closeSession(session);
    expect(session.messages.map((message) => ("content" in message ? message.content : ""))).toStrictEqual(["after"]);
    expect(await loadSession(path)).toStrictEqual(session);
  });

  it("refuses a log whose part holds a blob reference beside data: not one the store wrote", async () => {
    const directory = tempDir();
    const path = join(directory, "s.jsonl");
    await recordedSession(path);
    const lines = readFileSync(path, "utf8").split("\n");
    const forged = join(directory, "forged.jsonl");
    writeFileSync(forged, `${lines[1]!.replace(/"blob":"([0-9a-f]+)"/, '"data":"iVBORw0KGgp=","blob":"$1"')}\n`);
    await expect(loadSession(forged)).rejects.toMatchObject({
      code: "malformed",
      message: expect.stringMatching(/forged\.jsonl:1: .*"blob" beside "data" or "url"/) as unknown,
    });
  });

  it("refuses a log that refers to a missing blob or to a name that is not a hash, naming file and line", async () => {
    const directory = tempDir();
    const path = join(directory, "s.jsonl");
    await recordedSession(path);
    const lines = readFileSync(path, "utf8").split("\n");
    const missing = join(directory, "missing.jsonl");
    writeFileSync(missing, `${lines[0]}\n${lines[1]}\n`);
    await expect(loadSession(missing)).rejects.toMatchObject({
      code: "malformed",
      message: expect.stringMatching(/missing\.jsonl:2: .*missing\.blobs\/[0-9a-f]{64}: no such blob/) as unknown,
    });
    const hostile = join(directory, "hostile.jsonl");
    writeFileSync(hostile, `${lines[1]!.replace(/"blob":"[0-9a-f]+"/, '"blob":"../s.jsonl"')}\n`);
    await expect(loadSession(hostile)).rejects.toMatchObject({
      code: "malformed",
      message: expect.stringMatching(/hostile\.jsonl:1: "\.\.\/s\.jsonl" is not a blob hash/) as unknown,
    });
  });

  it("writes no line when its blob cannot be written: a line never refers to a missing blob", async () => {
    if (process.getuid?.() === 0) return; // root writes into a read-only directory
    const directory = tempDir();
    const path = join(directory, "s.jsonl");
    const session = await openSession(path);
    send(session, "first");
    send(session, [imagePart(screenshot(1), "image/png")]);
    chmodSync(join(directory, "s.blobs"), 0o500);
    try {
      expect(() => send(session, [imagePart(screenshot(2), "image/png")])).toThrow(/could not write a blob/);
    } finally {
      chmodSync(join(directory, "s.blobs"), 0o700);
    }
    await closeSession(session);
    const loaded = await loadSession(path);
    expect(loaded.messages).toHaveLength(2);
    expect(loaded.messages).toStrictEqual(session.messages.slice(0, 2));
  });

  it("fileBlobStore: writes once by hash, reads back, refuses names that are not hashes", () => {
    const blobs = fileBlobStore(join(tempDir(), "x.blobs"), { sync: true });
    const hash = blobs.write(new TextEncoder().encode("large tool output"));
    expect(blobs.write(new TextEncoder().encode("large tool output"))).toBe(hash);
    expect(new TextDecoder().decode(blobs.read(hash))).toBe("large tool output");
    expect(() => blobs.read("../../etc/passwd")).toThrow(/is not a blob hash/);
    expect(() => blobs.read("0".repeat(64))).toThrow(/no such blob/);
  });
});
