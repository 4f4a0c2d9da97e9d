import { createHash, randomBytes } from "node:crypto";
import { closeSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";
import { fromBase64, toBase64, type ContentPart } from "../content-parts.ts";
import { errorMessage } from "../errors.ts";
import type { Message } from "../session.ts";
import { StoreError } from "./store-error.ts";

/**
 * Content-addressed blobs: bytes kept once under their SHA-256 (lowercase hex), beside a session's
 * log. The file store keeps content parts' data here so a log line holds a reference, not
 * megabytes of base64; other stores (or a context strategy offloading large output) can reuse it.
 */
export type BlobStore = {
  /** Stores `bytes` (once: an existing blob is left as it is) and returns their hash. Throws a `write-failed` StoreError. */
  write: (bytes: Uint8Array) => string;
  /** The bytes stored under `hash`. Throws a `not-found` StoreError when there is none, `invalid-argument` for a malformed hash. */
  read: (hash: string) => Uint8Array;
};

/** The directory of a log's blobs: `<session>.blobs` beside `<session>.jsonl` (any other name gets `.blobs` appended). */
export function blobDirectory(logPath: string): string {
  return `${logPath.endsWith(".jsonl") ? logPath.slice(0, -".jsonl".length) : logPath}.blobs`;
}

/** The SHA-256 of `bytes`, lowercase hex: a blob's name. */
export function blobHash(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** Whether `hash` can name a blob (64 lowercase hex digits): anything else could name a file elsewhere. */
export function isBlobHash(hash: unknown): hash is string {
  return typeof hash === "string" && blobHashPattern.test(hash);
}

/**
 * Blobs as files in `directory` (created on the first write, owner-only, as the files). A blob is
 * written to a temporary file and linked to its name only when whole, so a crash leaves a blob
 * whole or absent. With `sync`, the blob and the directory entry are forced to the disk before
 * `write` returns: a log line written after it never refers to a blob a power cut lost.
 */
export function fileBlobStore(directory: string, options: { sync: boolean }): BlobStore {
  let created = false;
  const write = (bytes: Uint8Array): string => {
    const hash = blobHash(bytes);
    const path = join(directory, hash);
    try {
      if (!created) {
        mkdirSync(directory, { recursive: true, mode: 0o700 });
        created = true;
      }
      if (exists(path)) return hash;
      const temporary = join(directory, `.${hash}.${randomBytes(6).toString("hex")}.tmp`);
      const fd = openSync(temporary, "wx", 0o600);
      try {
        for (let written = 0; written < bytes.length;) written += writeSync(fd, bytes, written);
        if (options.sync) fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      try {
        // A link, not a rename: a blob already there (written meanwhile) is never replaced.
        linkSync(temporary, path);
      } catch (error) {
        if ((error as { code?: unknown }).code !== "EEXIST") throw error;
      } finally {
        unlinkSync(temporary);
      }
      if (options.sync) syncDirectory(directory);
      return hash;
    } catch (error) {
      throw new StoreError(`${path}: could not write a blob: ${errorMessage(error)}`, {
        code: "write-failed",
        path,
        cause: error,
      });
    }
  };
  const read = (hash: string): Uint8Array => {
    if (!isBlobHash(hash))
      throw new StoreError(`${JSON.stringify(String(hash).slice(0, 80))} is not a blob hash (64 hex digits)`, {
        code: "invalid-argument",
      });
    const path = join(directory, hash);
    try {
      return readFileSync(path);
    } catch (error) {
      if ((error as { code?: unknown }).code === "ENOENT")
        throw new StoreError(`${path}: no such blob`, { code: "not-found", path, cause: error });
      throw error;
    }
  };
  return { write, read };
}

/**
 * The message as a log line holds it: each content part's base64 `data` stored as a blob and
 * replaced by `blob: <hash>` in the same place. Returns the message itself when it has no data to
 * store. Data that does not round-trip through bytes unchanged (base64 that is not canonical) stays inline,
 * so reading restores exactly what was written.
 */
export function partsToBlobs(message: Message, blobs: Pick<BlobStore, "write">): Message {
  return mapMessageParts(message, (part) => {
    if (typeof part === "object" && part !== null && "blob" in part)
      throw new StoreError(
        'a content part with a "blob" field: a store writes its own blob references and takes none from a part',
        { code: "invalid-argument" },
      );
    if (part.type === "text" || !("data" in part) || typeof part.data !== "string") return part;
    const bytes = fromBase64(part.data);
    if (toBase64(bytes) !== part.data) return part;
    const hash = blobs.write(bytes);
    return renameKey(part, "data", "blob", hash) as unknown as ContentPart;
  });
}

/**
 * The message with every `blob: <hash>` of its content parts replaced by the blob's bytes as base64
 * `data`, in the same place: the inverse of `partsToBlobs`. Throws a StoreError (from `read`) for a
 * missing blob or a malformed hash.
 */
export function partsFromBlobs<M>(message: M, blobs: Pick<BlobStore, "read">): M {
  return mapMessageParts(message as Message, (part) => {
    const stored = part as unknown as Record<string, unknown>;
    if (!("blob" in stored)) return part;
    // A reference the store wrote replaced the data: one beside data or a URL was not written by a store.
    if ("data" in stored || "url" in stored)
      throw new StoreError('a content part holds "blob" beside "data" or "url": not a reference a store wrote', {
        code: "malformed",
      });
    return renameKey(stored, "blob", "data", toBase64(blobs.read(stored["blob"] as string))) as unknown as ContentPart;
  }) as M;
}

/**
 * The entry as a log line holds it: the content parts of each message in it stored as blobs (see
 * `partsToBlobs`), and so is a tool output kept aside for `recall_output` (a `kept` entry's
 * `output`, the `previous` output of a result a clearing replaced): `blob` (and `json: true` for an
 * output that is not a string) in its place.
 */
export function entryToBlobs<E>(entry: E, blobs: Pick<BlobStore, "write">): E {
  return keptOutputToBlob(
    mapEntryMessages(entry, (message) => partsToBlobs(message, blobs)),
    blobs,
  );
}

/** An entry as read from a log line, with the blobs it refers to read back (see `partsFromBlobs`). */
export function entryFromBlobs<E>(entry: E, blobs: Pick<BlobStore, "read">): E {
  return keptOutputFromBlob(
    mapEntryMessages(entry, (message) => partsFromBlobs(message, blobs)),
    blobs,
  );
}

// Where a kept output is in an entry: a `kept` entry itself, or a cleared result's `previous`.
function keptOutputHolder(entry: Record<string, unknown>): Record<string, unknown> | undefined {
  if (entry["type"] === "kept") return entry;
  const message = entry["message"] as { kept?: unknown } | undefined;
  const previous = entry["previous"];
  if (entry["type"] !== "replace" || message?.kept !== "cleared") return undefined;
  return typeof previous === "object" && previous !== null ? (previous as Record<string, unknown>) : undefined;
}

function keptOutputToBlob<E>(entry: E, blobs: Pick<BlobStore, "write">): E {
  if (typeof entry !== "object" || entry === null) return entry;
  const holder = keptOutputHolder(entry as Record<string, unknown>);
  if (holder === undefined || !("output" in holder)) return entry;
  const output = holder["output"];
  const json = typeof output !== "string";
  const hash = blobs.write(new TextEncoder().encode(json ? JSON.stringify(output) : output));
  const stored = renameKey(holder, "output", "blob", hash);
  if (json) stored["json"] = true;
  return (holder === entry ? stored : { ...entry, previous: stored }) as E;
}

function keptOutputFromBlob<E>(entry: E, blobs: Pick<BlobStore, "read">): E {
  if (typeof entry !== "object" || entry === null) return entry;
  const holder = keptOutputHolder(entry as Record<string, unknown>);
  if (holder === undefined || !("blob" in holder)) return entry;
  const text = new TextDecoder().decode(blobs.read(holder["blob"] as string));
  const { json, ...rest } = holder;
  const restored = renameKey(rest, "blob", "output", "");
  try {
    restored["output"] = json === true ? (JSON.parse(text) as unknown) : text;
  } catch (error) {
    throw new StoreError(`the blob ${String(holder["blob"])} of a kept output is not JSON: ${errorMessage(error)}`, {
      code: "malformed",
    });
  }
  return (holder === entry ? restored : { ...entry, previous: restored }) as E;
}

/**
 * The message with `change` applied to each part of its content parts (a user message's content, a
 * tool result's content, a result held on a tool call); the message itself when nothing changed.
 */
export function mapMessageParts(message: Message, change: (part: ContentPart) => ContentPart): Message {
  if (typeof message !== "object" || message === null) return message;
  if ("role" in message) {
    if (message.role !== "user" || !Array.isArray(message.content)) return message;
    const content = mapParts(message.content, change);
    return content === message.content ? message : { ...message, content };
  }
  if (message.type === "tool_result" && Array.isArray(message.content)) {
    const content = mapParts(message.content, change);
    return content === message.content ? message : { ...message, content };
  }
  if (message.type === "tool_call" && Array.isArray(message.heldResult?.content)) {
    const content = mapParts(message.heldResult.content, change);
    return content === message.heldResult.content
      ? message
      : { ...message, heldResult: { ...message.heldResult, content } };
  }
  return message;
}

const blobHashPattern = /^[0-9a-f]{64}$/;

// The messages an entry holds: `message` (and a replacement's `previous`), a splice's `removed` and `inserted`.
function mapEntryMessages<E>(entry: E, change: (message: Message) => Message): E {
  if (typeof entry !== "object" || entry === null) return entry;
  const fields = entry as Record<string, unknown>;
  let copy: Record<string, unknown> | undefined;
  for (const key of ["message", "previous"]) {
    const value = fields[key];
    if (typeof value !== "object" || value === null) continue;
    const next = change(value as Message);
    if (next !== value) (copy ??= { ...fields })[key] = next;
  }
  for (const key of ["removed", "inserted"]) {
    const value = fields[key];
    if (!Array.isArray(value)) continue;
    const next = value.map((message: unknown) =>
      typeof message === "object" && message !== null ? change(message as Message) : message,
    );
    if (next.some((message, index) => message !== value[index])) (copy ??= { ...fields })[key] = next;
  }
  return (copy ?? entry) as E;
}

function mapParts(parts: ContentPart[], change: (part: ContentPart) => ContentPart): ContentPart[] {
  let changed = false;
  const mapped = parts.map((part) => {
    const next = typeof part === "object" && part !== null ? change(part) : part;
    if (next !== part) changed = true;
    return next;
  });
  return changed ? mapped : parts;
}

// A copy with `from` renamed to `to` (holding `value`) where `from` was: the key order is kept, so
// a restored part serializes exactly as the original did.
function renameKey(object: object, from: string, to: string, value: string): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const [key, existing] of Object.entries(object)) {
    if (key === from) copy[to] = value;
    else if (key !== to) copy[key] = existing;
  }
  return copy;
}

function exists(path: string): boolean {
  try {
    closeSync(openSync(path, "r"));
    return true;
  } catch {
    return false;
  }
}

function syncDirectory(directory: string): void {
  try {
    const fd = openSync(directory, "r");
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // Best effort: not every platform can sync a directory.
  }
}
