import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isAgentError } from "simple-agent-loop";
import { connectMcp } from "simple-agent-loop/mcp";
import { otelObserver } from "simple-agent-loop/otel";
import { fileStore, isStoreError, loadSession, openSession } from "simple-agent-loop/store";
import { serveViewer } from "simple-agent-loop/viewer";
import { parseCliArgs } from "../src/cli/args.ts";

const directory = mkdtempSync(join(tmpdir(), "simple-agent-loop-options-"));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
const log = join(directory, "a.jsonl");
writeFileSync(log, "");

// What a caller from plain JavaScript, a config file or a query string may pass where a number,
// a switch or a choice belongs: every one is refused where it enters, naming the option.
const notNumbers: unknown[] = [true, "1", [1000], null, Number.NaN, {}, -1];

async function refusal(run: () => unknown): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe("every public option of every subpath is checked as the loop's are", () => {
  for (const option of ["pollInterval", "port", "maxConnections", "maxLineBytes"])
    for (const value of notNumbers)
      it(`serveViewer refuses ${option}: ${JSON.stringify(value)}`, async () => {
        const error = await refusal(() => serveViewer(log, { [option]: value }));
        expect(isAgentError(error)).toBe(true);
        expect((error as Error).message).toContain(option);
      });

  it("serveViewer refuses a host or token that is not a string", async () => {
    for (const options of [{ host: 127 }, { token: 1234567890123456 }, { token: ["a".repeat(20)] }]) {
      const error = await refusal(() => serveViewer(log, options as never));
      expect(isAgentError(error), JSON.stringify(options)).toBe(true);
    }
  });

  it("the store refuses a sync mode it does not have and an onWarning that is no function", async () => {
    for (const [where, run] of [
      ["openSession", (options: never) => openSession(join(directory, "b.jsonl"), options)],
      ["loadSession", (options: never) => loadSession(log, options)],
      ["fileStore", (options: never) => fileStore(directory, options)],
    ] as const)
      for (const options of [{ sync: "always" }, { sync: true }, { onWarning: "console" }, "turn"]) {
        const error = await refusal(() => run(options as never));
        expect(isStoreError(error) && error.code === "invalid-argument", `${where} ${JSON.stringify(options)}`).toBe(
          true,
        );
        expect((error as Error).message).toContain(where);
      }
  });

  it("connectMcp refuses a timeout, prefix or stderr of the wrong kind before starting any server", async () => {
    const marker = join(directory, "started");
    const server = {
      command: process.execPath,
      args: ["-e", `require("fs").writeFileSync(${JSON.stringify(marker)}, "")`],
    };
    for (const options of [
      { timeout: "5000" },
      { timeout: true },
      { timeout: [1000] },
      { timeout: 0 },
      { prefix: "false" },
      { prefix: 1 },
      { stderr: "pipe" },
      { clientInfo: "me" },
    ]) {
      const error = await refusal(() => connectMcp({ one: server }, options as never));
      expect(isAgentError(error), JSON.stringify(options)).toBe(true);
      expect((error as Error).message).toContain(Object.keys(options)[0]);
    }
    expect(() => writeFileSync(marker, "", { flag: "wx" })).not.toThrow();
  });

  it('otelObserver refuses recordContent that is not a boolean ("false" would record content)', () => {
    for (const options of [{ recordContent: "false" }, { recordContent: 1 }, { model: 5 }, { agents: "x" }]) {
      let error: unknown;
      try {
        otelObserver(options as never);
      } catch (caught) {
        error = caught;
      }
      expect(isAgentError(error), JSON.stringify(options)).toBe(true);
    }
  });

  it("the CLI's numeric flags take digits only", () => {
    for (const value of ["", " 5", "0x10", "1e3", "2.5", "-1", "99999999999999999999"])
      expect(() => parseCliArgs(["--max-turns", value, "task"]), JSON.stringify(value)).toThrow(/--max-turns/);
    expect(parseCliArgs(["--max-turns", "7", "task"])).toMatchObject({ maxTurns: 7 });
  });
});
