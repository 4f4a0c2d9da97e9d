// What a start loads: the optional parts (the MCP SDK, the session viewer, Restate,
// OpenTelemetry, zod) only where they are used, so that a start without them neither pays for
// them nor needs them installed. A loader hook passed with --import records every module the
// CLI process loads; a start with an MCP config shows that the hook sees the SDK when it is used.
import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import * as nodeModule from "node:module";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "./fake-openai.ts";
import { cliEnvironment, tempDirectory } from "./helpers.ts";
import { repositoryRoot } from "./terminal.ts";

// module.registerHooks (Node 22.15+) runs the hook in the CLI's own thread, before its first import.
const hooksAvailable = "registerHooks" in nodeModule;
if (!hooksAvailable)
  console.warn(`SKIPPED test/cli/start-modules.test.ts: Node ${process.version} has no module.registerHooks`);

const hook = `
import { registerHooks } from "node:module";
import { appendFileSync } from "node:fs";
registerHooks({
  load(url, context, nextLoad) {
    appendFileSync(process.env.LOADED_MODULES_FILE, url + "\\n");
    return nextLoad(url, context);
  },
});
`;

// Loaded only where they are used (the peers are optional; the viewer is the `view` command's).
const optional = [
  /\/node_modules\/@modelcontextprotocol\//,
  /\/node_modules\/zod\//,
  /\/node_modules\/@opentelemetry\//,
  /\/node_modules\/@restatedev\//,
  /\/src\/viewer\//,
  /\/src\/restate\//,
  /\/src\/otel\//,
];

describe.runIf(hooksAvailable)("the modules a CLI start loads", () => {
  let server: FakeOpenAI;
  let workspace: ReturnType<typeof tempDirectory>;
  let home: ReturnType<typeof tempDirectory>;

  beforeEach(async () => {
    server = await startFakeOpenAI();
    workspace = tempDirectory("start-modules-ws-");
    home = tempDirectory("start-modules-home-");
    writeFileSync(join(home.path, "hook.mjs"), hook);
  });
  afterEach(async () => {
    await server.close();
    workspace.remove();
    home.remove();
  });

  /** Runs the CLI (sources, no terminal) with `args`; resolves with its exit code and the URLs of the modules it loaded. */
  const loaded = (args: string[]): Promise<{ code: number; stderr: string; modules: string[] }> => {
    const file = join(home.path, "loaded.txt");
    writeFileSync(file, "");
    return new Promise((resolve, reject) => {
      const child = execFile(
        process.execPath,
        [
          "--import",
          join(home.path, "hook.mjs"),
          "--conditions=simple-agent-loop-source",
          `${repositoryRoot}src/cli/main.ts`,
          ...args,
        ],
        {
          cwd: workspace.path,
          env: cliEnvironment(home.path, { OPENAI_BASE_URL: server.baseURL, LOADED_MODULES_FILE: file }),
          timeout: 60_000,
        },
        (error, _stdout, stderr) => {
          if (error !== null && typeof error.code !== "number") reject(error);
          else
            resolve({
              code: error === null ? 0 : (error.code as number),
              stderr,
              modules: readFileSync(file, "utf8").split("\n").filter(Boolean),
            });
        },
      );
      child.stdin?.end();
    });
  };
  const optionalIn = (modules: string[]) => modules.filter((url) => optional.some((pattern) => pattern.test(url)));

  it("--help loads none of the optional parts", async () => {
    const { code, modules } = await loaded(["--help"]);
    expect(code).toBe(0);
    expect(modules.some((url) => url.endsWith("/src/cli/args.ts"))).toBe(true);
    expect(optionalIn(modules)).toEqual([]);
  });

  it("a task with an OpenAI-compatible provider and no MCP config loads none of them", async () => {
    server.enqueue({ text: "Hello." });
    const { code, stderr, modules } = await loaded(["--model", "test-model", "say hello"]);
    expect(code, stderr).toBe(0);
    expect(modules.some((url) => url.endsWith("/src/providers/openai/chat.ts"))).toBe(true);
    expect(optionalIn(modules)).toEqual([]);
  });

  it("a start with an MCP config loads the MCP SDK (the hook sees what is used)", async () => {
    const echo = {
      command: process.execPath,
      args: ["--conditions=simple-agent-loop-source", `${repositoryRoot}test/cli/mcp-echo-server.ts`, workspace.path],
    };
    mkdirSync(join(workspace.path, ".simple-agent-loop"));
    const config = join(workspace.path, ".simple-agent-loop", "mcp.json");
    writeFileSync(config, JSON.stringify({ mcpServers: { echo } }));
    server.enqueue({ text: "Hello." });
    const { code, stderr, modules } = await loaded(["--model", "test-model", "--mcp-config", config, "say hello"]);
    expect(code, stderr).toBe(0);
    expect(stderr).toContain("MCP: echo (1 tool)");
    expect(modules.some((url) => /\/node_modules\/@modelcontextprotocol\/sdk\//.test(url))).toBe(true);
  });
});
