// The CLI against an MCP server over HTTP behind OAuth, both in this process (the SDK's server,
// and the authorization server of test/mcp/oauth-servers.ts): `mcp login` / `mcp logout` with
// their exit codes, tokens in <home>/mcp-auth.json, the sign-in page opened with $BROWSER (a
// script that follows it as a user would) and printed, and a run using the kept tokens.
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startOAuthServers, type OAuthServers } from "../mcp/oauth-servers.ts";
import { startFakeOpenAI, type FakeOpenAI } from "./fake-openai.ts";
import { cliEnvironment, fakeBrowser, runCli, tempDirectory } from "./helpers.ts";

let model: FakeOpenAI;
let servers: OAuthServers;
let workspace: ReturnType<typeof tempDirectory>;
let home: ReturnType<typeof tempDirectory>;
let env: Record<string, string>;

beforeEach(async () => {
  model = await startFakeOpenAI();
  servers = await startOAuthServers();
  workspace = tempDirectory("mcp-sign-in-ws-");
  home = tempDirectory("mcp-sign-in-home-");
  const browser = fakeBrowser(home.path);
  env = cliEnvironment(home.path, {
    OPENAI_BASE_URL: model.baseURL,
    BROWSER: browser.command,
    FAKE_BROWSER_LOG: browser.log,
  });
  writeFileSync(join(workspace.path, "mcp.json"), JSON.stringify({ mcpServers: { remote: { url: servers.mcpUrl } } }));
  writeFileSync(
    join(workspace.path, "all.json"),
    JSON.stringify({
      mcpServers: {
        remote: { url: servers.mcpUrl },
        local: { command: "true" },
        off: { url: servers.mcpUrl, auth: false },
      },
    }),
  );
});

afterEach(async () => {
  await model.close();
  await servers.close();
  workspace.remove();
  home.remove();
});

const cli = (args: string[]) => runCli(args, { cwd: workspace.path, env });
const authFile = () => join(home.path, "mcp-auth.json");
const kept = () =>
  JSON.parse(readFileSync(authFile(), "utf8")) as Record<string, { tokens?: { access_token?: string } }>;

describe("simple-agent-loop mcp login / logout", () => {
  it("signs in with $BROWSER, keeps the tokens in <home>/mcp-auth.json (0600), runs from them without a browser, and signs out", async () => {
    const login = await cli(["mcp", "login", "remote", "--mcp-config", "mcp.json"]);
    expect(login.code, login.stderr).toBe(0);
    expect(login.stdout).toContain("MCP server remote needs you to sign in");
    // The address is printed whole, for a browser on another machine, its host set apart.
    expect(login.stdout).toMatch(/sign in \(at 127\.0\.0\.1:\d+\)[^\n]*\n {2}http:\/\/127\.0\.0\.1:\d+\/authorize\?/);
    expect(login.stdout).toContain("Signed in to MCP server remote");
    expect(servers.authorizations).toBe(1);
    expect(readFileSync(join(home.path, "opened.log"), "utf8")).toMatch(/\/authorize\?.*code_challenge_method=S256/);
    expect(statSync(authFile()).mode & 0o777).toBe(0o600);
    expect(kept()[servers.mcpUrl]?.tokens?.access_token).toMatch(/^access-/);
    // Nothing of the sign-in reaches the output: no token, code or verifier.
    for (const secret of servers.secrets.filter((value) => value.length >= 16))
      expect(login.stdout + login.stderr).not.toContain(secret);

    model.enqueue({ toolCalls: [{ name: "remote__echo", arguments: { text: "hi" } }] }, { text: "Echoed." });
    const run = await cli(["--model", "test-model", "--mcp-config", "mcp.json", "--allow", "remote__echo", "echo hi"]);
    expect(run.code, run.stderr).toBe(0);
    expect(servers.authorizations).toBe(1);
    expect(model.bodies()[1]!.messages.find((message) => message.role === "tool")?.content).toBe("echo: hi");

    const logout = await cli(["mcp", "logout", "remote", "--mcp-config", "mcp.json"]);
    expect(logout.code, logout.stderr).toBe(0);
    expect(logout.stdout).toContain("Signed out of MCP server remote");
    expect(kept()[servers.mcpUrl]).toBeUndefined();
    const again = await cli(["mcp", "logout", "remote", "--mcp-config", "mcp.json"]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("not signed in");

    // Signed out, without a terminal: the run fails at once, saying how to sign in.
    const refused = await cli(["--model", "test-model", "--mcp-config", "mcp.json", "echo hi"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/remote.*mcp login remote/);
    expect(servers.authorizations).toBe(1);
  }, 120_000);

  it("exits 1 when the sign-in fails, keeping nothing, and 2 for a usage error", async () => {
    servers.refuseWith = "access_denied";
    const failed = await cli(["mcp", "login", "remote", "--mcp-config", "mcp.json"]);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/remote.*access_denied/);
    expect(existsSync(authFile())).toBe(false);

    const usages = [
      ["mcp"],
      ["mcp", "login"],
      ["mcp", "sing-in", "remote"],
      ["mcp", "login", "remote", "extra"],
      ["mcp", "login", "nosuch", "--mcp-config", "all.json"],
      ["mcp", "login", "local", "--mcp-config", "all.json"],
      ["mcp", "logout", "off", "--mcp-config", "all.json"],
      ["mcp", "login", "remote", "--frobnicate"],
    ];
    for (const args of usages) {
      const result = await cli(args);
      expect({ args, code: result.code }).toStrictEqual({ args, code: 2 });
    }
    const unknown = await cli(["mcp", "login", "nosuch", "--mcp-config", "all.json"]);
    expect(unknown.stderr).toContain("it has remote, local, off");
    const missing = await cli(["mcp", "login", "remote", "--mcp-config", "nothing.json"]);
    expect(missing.code).toBe(1);
  }, 120_000);
});
