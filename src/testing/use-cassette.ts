import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { InvokeModel } from "../model/invoke-model.ts";
import { assertCassetteUsed, cassette, type CassetteModel, type CassetteOptions } from "./cassette.ts";
import { CassetteError } from "./cassette-errors.ts";

/** A node:test `TestContext` (or anything with a name and an `after` hook): `useCassette(model, t)`. */
export type CassetteTestContext = { name: string; after?: (fn: () => void) => unknown };

/**
 * `cassette(invokeModel, { path })` for the running test: the file is
 * `__cassettes__/<name or the current test's name>.jsonl` beside the test file, and at the test's
 * end the cassette must have been used whole (`assertCassetteUsed`). Under vitest the test's name
 * and file are found on their own; under node:test pass the test context (`useCassette(model, t)`),
 * or a name and call `assertCassetteUsed` yourself.
 */
export function useCassette(
  invokeModel: InvokeModel,
  name?: string | CassetteTestContext,
  options: Omit<CassetteOptions, "path"> = {},
): CassetteModel {
  const state = vitestState();
  const testName = typeof name === "string" ? name : (name?.name ?? state?.currentTestName);
  if (testName === undefined || testName === "") {
    throw new CassetteError(
      "useCassette: no running vitest test was found: pass the cassette's name (or node:test's t)",
    );
  }
  const testFile = state?.testPath ?? callerFile();
  if (testFile === undefined) throw new CassetteError("useCassette: cannot tell which file the test is in");
  const model = cassette(invokeModel, {
    ...options,
    path: join(dirname(testFile), "__cassettes__", `${fileName(testName)}.jsonl`),
  });
  const check = (): void => assertCassetteUsed(model);
  if (typeof name === "object" && typeof name.after === "function") name.after(check);
  else if (state !== undefined && vitest?.onTestFinished !== undefined) vitest.onTestFinished(check);
  return model;
}

/** A test name as a file name: path separators and other unsafe characters become `-`. */
function fileName(testName: string): string {
  const safe = testName
    .replace(/[^A-Za-z0-9 ._(),-]+/g, "-")
    .replace(/\s+/g, " ")
    .trim()
    .replace(/^\.+/, "");
  return safe.slice(0, 180) || "cassette";
}

type VitestState = { currentTestName?: string; testPath?: string };

// vitest keeps the running test's name and file where jest did; read, never written.
function vitestState(): VitestState | undefined {
  const holder = (globalThis as Record<symbol, { state?: VitestState } | undefined>)[
    Symbol.for("$$jest-matchers-object")
  ];
  return holder?.state?.currentTestName === undefined ? undefined : holder.state;
}

// Only inside a vitest worker, where vitest is loaded already: its hook checks the cassette at the test's end.
const vitest: { onTestFinished?: (fn: () => void) => void } | undefined =
  "__vitest_worker__" in globalThis ? await importVitest() : undefined;

async function importVitest(): Promise<{ onTestFinished?: (fn: () => void) => void } | undefined> {
  const specifier = "vitest";
  try {
    return (await import(specifier)) as { onTestFinished?: (fn: () => void) => void };
  } catch {
    return undefined;
  }
}

/** The file of the first stack frame outside this module: the test that called `useCassette`. */
function callerFile(): string | undefined {
  const own = import.meta.url;
  for (const line of (new Error().stack ?? "").split("\n").slice(1)) {
    const match = /(file:\/\/[^\s)]+?|\/[^\s():]+?):\d+:\d+\)?$/.exec(line.trim());
    if (match === null) continue;
    const location = match[1]!;
    if (location === own || location === fileURLToPath(own)) continue;
    return location.startsWith("file://") ? fileURLToPath(location) : location;
  }
  return undefined;
}
