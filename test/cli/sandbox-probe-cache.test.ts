// The sandbox probe's answer kept in the CLI's home between starts: used while bwrap and the
// machine stay the same, probed again when they change. A stand-in bwrap (a script that fails
// the way bwrap fails without user namespaces) tells a probe from a kept answer.
import { chmodSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { detectSandbox } from "../../src/cli/sandbox/detect-sandbox.ts";
import { probeKey } from "../../src/cli/sandbox/probe-cache.ts";
import { tempDirectory } from "./helpers.ts";

describe.runIf(process.platform === "linux")("detectSandbox with a cache file", () => {
  let directory: ReturnType<typeof tempDirectory>;
  let bwrap = "";
  let homes = 0;
  // detectSandbox answers once per process for a PATH and a cache file: a new CLI home (so a new
  // cache file) stands for a later start.
  const newHome = (kept?: string): string => {
    const home = join(directory.path, `home-${++homes}`);
    mkdirSync(home);
    const file = join(home, "sandbox-probe.json");
    if (kept !== undefined) writeFileSync(file, kept);
    return file;
  };
  const detect = (cacheFile: string) => detectSandbox({ PATH: directory.path }, { cacheFile });
  const standIn = (message: string) => {
    writeFileSync(bwrap, `#!/bin/sh\necho '${message}' >&2\nexit 1\n`);
    chmodSync(bwrap, 0o755);
  };
  const noNamespaces = {
    available: false,
    reason: "bwrap cannot create a sandbox here: bwrap: No permissions to create new namespace",
  };

  beforeEach(() => {
    directory = tempDirectory("sandbox-probe-cache-");
    bwrap = join(directory.path, "bwrap");
    standIn("bwrap: No permissions to create new namespace");
  });
  afterEach(() => directory.remove());

  it("probes once and keeps the answer; a later start reads it instead of running bwrap", async () => {
    const first = newHome();
    expect(await detect(first)).toEqual(noNamespaces);
    const kept = JSON.parse(readFileSync(first, "utf8")) as { key: string; answer: unknown };
    expect(kept).toEqual({ key: await probeKey(bwrap), answer: noNamespaces });
    // An answer no probe of this stand-in gives: seeing it means bwrap was not run.
    const later = newHome(JSON.stringify({ key: kept.key, answer: { available: false, reason: "kept" } }));
    expect(await detect(later)).toEqual({ available: false, reason: "kept" });
  });

  it("probes again once bwrap changes (an upgrade), and keeps the new answer", async () => {
    const first = newHome();
    await detect(first);
    const before = JSON.parse(readFileSync(first, "utf8")) as { key: string };
    standIn("bwrap: setting up uid map: Permission denied");
    utimesSync(bwrap, new Date(), new Date(Date.now() + 5_000));
    const key = await probeKey(bwrap);
    expect(key).not.toBe(before.key);
    const later = newHome(readFileSync(first, "utf8"));
    expect(await detect(later)).toEqual({
      available: false,
      reason: "bwrap cannot create a sandbox here: bwrap: setting up uid map: Permission denied",
    });
    expect(JSON.parse(readFileSync(later, "utf8"))).toMatchObject({ key });
  });

  it("probes where the kept answer is not one (edited by hand, another bwrap's, not JSON)", async () => {
    const key = await probeKey(bwrap);
    const otherBwrap = { available: true, bwrap: "/elsewhere/bwrap", processLimit: { kind: "none" } };
    for (const kept of [JSON.stringify({ key, answer: otherBwrap }), JSON.stringify({ key, answer: 1 }), "{"])
      expect(await detect(newHome(kept))).toEqual(noNamespaces);
  });
});
