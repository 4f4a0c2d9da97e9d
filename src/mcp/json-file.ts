import { jsonNestedDeeperThan, maxJsonDepth } from "../session.ts";
import { randomBytes } from "node:crypto";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { errorMessage } from "../errors.ts";

/**
 * The JSON object in `path`, or `undefined` when there is no file. A file that is not a JSON
 * object throws, naming the file: a store must not mistake a damaged file for an empty one and
 * overwrite it.
 */
export async function readJsonFile(path: string): Promise<Record<string, unknown> | undefined> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as { code?: unknown }).code === "ENOENT") return undefined;
    throw new Error(`cannot read ${path}: ${errorMessage(error)}`, { cause: error });
  }
  if (jsonNestedDeeperThan(text)) throw new Error(`${path} is nested more than ${maxJsonDepth} levels deep`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new Error(`${path} is not valid JSON: ${errorMessage(error)}`, { cause: error });
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    throw new Error(`${path} does not hold a JSON object`);
  return parsed as Record<string, unknown>;
}

/**
 * Writes `value` as JSON to `path` with mode 0600 (its directory 0700 when made): written whole to
 * a new file beside it, then renamed over it, so a crash leaves the old file or the new one, never
 * half of one, and no moment exists where other users could read it.
 */
export async function writeJsonFile(path: string, value: unknown): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${randomBytes(6).toString("hex")}.tmp`;
  try {
    await writeFile(temporary, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600, flag: "wx" });
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

/** Runs `work` after every earlier call's work has settled: one file, one writer at a time. */
export function serially(): <T>(work: () => Promise<T>) => Promise<T> {
  let last: Promise<unknown> = Promise.resolve();
  return <T>(work: () => Promise<T>): Promise<T> => {
    const next = last.then(work, work);
    last = next.catch(() => undefined);
    return next;
  };
}
