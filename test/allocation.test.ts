import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

// Bytes allocated per turn are deterministic where times are not (a young generation larger than
// a run, only runs without a collection counted: test/fixtures/allocation-probe.ts, the method of
// bench/allocation.ts), so they can be held in CI on a noisy machine. The bounds are about 1.5x
// what the loop allocates now (bench/README.md, "Bytes per turn"): a default that starts costing
// every turn (a watcher, a copy of the session, a closure per call) goes over them.
describe("bytes allocated per turn", () => {
  it("stay under their bounds with every default on, with a listener, and with everything off; flat in the session's length", async () => {
    const probe = fileURLToPath(new URL("fixtures/allocation-probe.ts", import.meta.url));
    const env = { ...process.env };
    // Coverage instruments the code it measures: the probe measures the loop as users run it.
    delete env.NODE_V8_COVERAGE;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        "--expose-gc",
        "--min-semi-space-size=128",
        "--max-semi-space-size=128",
        "--conditions=simple-agent-loop-source",
        probe,
      ],
      { env, timeout: 120_000 },
    );
    const bytes = JSON.parse(stdout) as Record<"defaults200" | "defaults1000" | "listening200" | "off200", number>;
    expect(bytes.defaults200, "every default on, T=200").toBeLessThan(6_000);
    expect(bytes.defaults1000, "every default on, T=1000").toBeLessThan(5_000);
    expect(bytes.listening200, "every default on and onEvent, T=200").toBeLessThan(9_000);
    expect(bytes.off200, "everything optional off, T=200").toBeLessThan(5_000);
    // What a turn costs does not grow with the session (a copy or walk of it each call would).
    expect(bytes.defaults1000, "T=1000 against T=200").toBeLessThan(1.5 * bytes.defaults200);
  }, 180_000);
});
