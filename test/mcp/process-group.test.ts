import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { connectMcp } from "simple-agent-loop/mcp";

const parentServer = fileURLToPath(new URL("./parent-server.ts", import.meta.url));
const connectModule = fileURLToPath(new URL("../../src/mcp/index.ts", import.meta.url));

// Process groups and /proc are Linux's (and the CI's); elsewhere the test says why it skips.
describe.skipIf(process.platform !== "linux")("an MCP stdio server's own children", () => {
  it("are gone once the connection is closed", async () => {
    const pidFile = join(mkdtempSync(join(tmpdir(), "mcp-group-")), "child.pid");
    const connection = await connectMcp({ parent: { command: process.execPath, args: [parentServer, pidFile] } });
    const child = Number(readFileSync(pidFile, "utf8"));
    expect(await running(child)).toBe(true);
    await connection.close();
    await untilGone(child);
    expect(await running(child)).toBe(false);
  });

  it("are gone once the process that started the server exits without closing", async () => {
    const directory = mkdtempSync(join(tmpdir(), "mcp-group-"));
    const pidFile = join(directory, "child.pid");
    const script = `
      const { connectMcp } = await import(${JSON.stringify(connectModule)});
      await connectMcp({ parent: { command: process.execPath, args: [${JSON.stringify(parentServer)}, ${JSON.stringify(pidFile)}] } });
      process.exit(0);`;
    const host = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: "inherit" });
    const code = await new Promise((resolve) => host.once("exit", resolve));
    expect(code).toBe(0);
    const child = Number(readFileSync(pidFile, "utf8"));
    await untilGone(child);
    expect(await running(child)).toBe(false);
  });
});

// A killed process is a zombie until its new parent reaps it: it counts as gone.
async function running(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => undefined);
  if (stat === undefined) return false;
  return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
}

// Polls until the process is gone; the test's own timeout bounds the wait.
async function untilGone(pid: number): Promise<void> {
  while (await running(pid)) await new Promise((resolve) => setTimeout(resolve, 20));
}
