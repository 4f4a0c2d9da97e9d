import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isMcpConfigError, loadMcpConfig, withMcp, type McpConfigError } from "simple-agent-loop/mcp";
import { runTool, stdioServer } from "./helpers.ts";

describe("loadMcpConfig", () => {
  let directory: string;
  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), "mcp-config-"));
  });
  afterAll(() => rm(directory, { recursive: true, force: true }));

  async function file(name: string, content: unknown): Promise<string> {
    const path = join(directory, name);
    await writeFile(path, typeof content === "string" ? content : JSON.stringify(content));
    return path;
  }

  async function failure(path: string): Promise<McpConfigError> {
    const error = await loadMcpConfig(path, { env: {} }).then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(isMcpConfigError(error)).toBe(true);
    return error as McpConfigError;
  }

  it("a server named __proto__ or constructor is a server like any other, never the map's prototype", async () => {
    const path = await file(
      "prototype.json",
      '{"mcpServers": {"__proto__": {"command": "evil"}, "constructor": {"command": "also"}, "ok": {"command": "fine"}}}',
    );
    const servers = await loadMcpConfig(path, { env: {} });
    expect(Object.keys(servers).sort()).toStrictEqual(["__proto__", "constructor", "ok"]);
    expect(Object.getPrototypeOf(servers)).toBe(Object.prototype);
    const inherited: string[] = [];
    for (const name in servers) inherited.push(name);
    expect(inherited.sort()).toStrictEqual(["__proto__", "constructor", "ok"]);
    expect(({} as Record<string, unknown>).command).toBeUndefined();
  });

  it("fills ${NAME} only from the environment's own variables, never from inherited properties", async () => {
    const path = await file("inherited.json", {
      mcpServers: { s: { command: "run", args: ["${constructor}", "${toString:-fallback}", "${HOME_SET}"] } },
    });
    await expect(loadMcpConfig(path, { env: { HOME_SET: "yes" } })).rejects.toMatchObject({
      message: expect.stringMatching(/\$\{constructor\}, which is not set/),
    });
    const fallback = await file("inherited-fallback.json", {
      mcpServers: { s: { command: "run", args: ["${toString:-fallback}", "${HOME_SET}"] } },
    });
    expect(await loadMcpConfig(fallback, { env: { HOME_SET: "yes" } })).toStrictEqual({
      s: { command: "run", args: ["fallback", "yes"] },
    });
  });

  it("reads the Claude Desktop / Claude Code format, keeping only what it uses and expanding ${VAR}", async () => {
    const path = await file("valid.json", {
      mcpServers: {
        files: {
          command: "npx",
          args: ["-y", "@modelcontextprotocol/server-filesystem", "${HOME_DIR}"],
          env: { DEBUG: "1" },
          disabled: false,
        },
        local: { type: "stdio", command: "./server", cwd: "/srv" },
        remote: { type: "http", url: "https://example.com/mcp", headers: { Authorization: "Bearer ${TOKEN}" } },
        plain: { url: "http://127.0.0.1:8080/mcp?region=${REGION:-eu}" },
      },
    });
    expect(await loadMcpConfig(path, { env: { HOME_DIR: "/home/ada", TOKEN: "t0ken" } })).toStrictEqual({
      files: {
        command: "npx",
        args: ["-y", "@modelcontextprotocol/server-filesystem", "/home/ada"],
        env: { DEBUG: "1" },
      },
      local: { command: "./server", cwd: "/srv" },
      remote: { url: "https://example.com/mcp", headers: { Authorization: "Bearer t0ken" } },
      plain: { url: "http://127.0.0.1:8080/mcp?region=eu" },
    });
  });

  it("reads VS Code's \"servers\" and Cursor's ${env:VAR}, and leaves out disabled servers", async () => {
    const path = await file("editors.json", {
      servers: {
        remote: { type: "http", url: "https://example.com/mcp", headers: { Authorization: "Bearer ${env:TOKEN}" } },
        off: { command: "./server", disabled: true },
        on: { command: "./server", args: ["${env:MODE:-fast}"], disabled: false },
      },
    });
    expect(await loadMcpConfig(path, { env: { TOKEN: "t0ken" } })).toStrictEqual({
      remote: { url: "https://example.com/mcp", headers: { Authorization: "Bearer t0ken" } },
      on: { command: "./server", args: ["fast"] },
    });
  });

  it("reads an HTTP entry's auth (a pre-registered client or false) and refuses a malformed one", async () => {
    const path = await file("auth.json", {
      mcpServers: {
        signed: {
          url: "https://example.com/mcp",
          auth: { clientId: "app", clientSecret: "${SECRET}", scopes: ["read"] },
        },
        open: { url: "https://example.com/open", auth: false },
      },
    });
    expect(await loadMcpConfig(path, { env: { SECRET: "s3cret" } })).toStrictEqual({
      signed: { url: "https://example.com/mcp", auth: { clientId: "app", clientSecret: "s3cret", scopes: ["read"] } },
      open: { url: "https://example.com/open", auth: false },
    });
    const bad = await file("bad-auth.json", {
      mcpServers: { signed: { url: "https://example.com/mcp", auth: { scopes: "read" } } },
    });
    expect((await failure(bad)).message).toMatch(/auth\.clientId/);
  });

  it("reads deferred: true per server, and refuses a deferred that is not a boolean", async () => {
    const path = await file("deferred.json", {
      mcpServers: {
        many: { command: "./many", deferred: true },
        few: { url: "http://localhost/mcp", deferred: false },
      },
    });
    expect(await loadMcpConfig(path, { env: {} })).toStrictEqual({
      many: { command: "./many", deferred: true },
      few: { url: "http://localhost/mcp", deferred: false },
    });
    const wrong = await file("deferred-wrong.json", { mcpServers: { many: { command: "./many", deferred: "yes" } } });
    expect((await failure(wrong)).message).toMatch(/server "many": "deferred" must be true or false/);
  });

  it("gives a configuration connectMcp accepts", async () => {
    const path = await file("fixture.json", { mcpServers: { fixture: { ...stdioServer(), unknownKey: true } } });
    const output = await withMcp(
      await loadMcpConfig(path),
      async (tools) => (await runTool(tools, "echo", { text: "from file" })).output,
    );
    expect(output).toBe("echo: from file");
  });

  it("names the file when it is missing or not JSON", async () => {
    const missing = join(directory, "missing.json");
    expect((await failure(missing)).message).toMatch(new RegExp(`^cannot read MCP config ${escape(missing)}: ENOENT`));
    const malformed = await file("malformed.json", '{ "mcpServers": { "files": { "command": "npx", } } }');
    const error = await failure(malformed);
    expect(error.message).toMatch(new RegExp(`^MCP config ${escape(malformed)} is not valid JSON: `));
    expect(error.path).toBe(malformed);
  });

  it("names the file and the server entry when an entry is wrong", async () => {
    const cases: [unknown, string][] = [
      [{ mcp: {} }, 'expected an object with "mcpServers": { "<name>": { … } }'],
      [
        { mcpServers: { files: "npx" } },
        'server "files": expected an object with "command" (stdio) or "url" (Streamable HTTP)',
      ],
      [
        { mcpServers: { files: { args: ["x"] } } },
        'server "files": needs "command" (stdio) or "url" (Streamable HTTP)',
      ],
      [
        { mcpServers: { files: { command: "npx", args: "-y server" } } },
        'server "files": "args" must be an array of strings',
      ],
      [
        { mcpServers: { files: { command: "npx", env: { PORT: 8080 } } } },
        'server "files": "env" must be an object of strings',
      ],
      [
        { mcpServers: { both: { command: "npx", url: "http://x" } } },
        'server "both": has both "command" and "url"; give one',
      ],
      [
        { mcpServers: { web: { type: "sse", url: "http://x/sse" } } },
        'server "web": the HTTP+SSE transport ("type": "sse") is not supported',
      ],
      [{ mcpServers: { web: { url: "ftp://x" } } }, 'server "web": "url" must be an http(s) URL, got "ftp://x"'],
      [
        { mcpServers: { web: { url: "https://x", headers: { Authorization: "Bearer ${TOKEN}" } } } },
        'server "web": "headers.Authorization" uses ${TOKEN}, which is not set',
      ],
      [
        { mcpServers: { web: { url: "https://x", headers: { Authorization: "Bearer ${env:TOKEN}" } } } },
        'server "web": "headers.Authorization" uses ${env:TOKEN}, which is not set',
      ],
      [
        { servers: { web: { url: "https://x", headers: { Authorization: "Bearer ${input:token}" } } } },
        'server "web": "headers.Authorization" uses ${input:token}; only ${NAME}, ${NAME:-default} and ${env:NAME} are filled in',
      ],
    ];
    for (const [index, [content, problem]] of cases.entries()) {
      const path = await file(`wrong-${index}.json`, content);
      const error = await failure(path);
      expect(error.message).toContain(`MCP config ${path}: ${problem}`);
      expect(error.path).toBe(path);
    }
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
