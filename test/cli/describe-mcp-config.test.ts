// What an MCP config would run and send, as the trust prompt and the permission checks see it.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createStyle } from "../../src/cli/ansi.ts";
import { describeMcpConfig, looksLikeCredential, mcpRuns } from "../../src/cli/describe-mcp-config.ts";
import { tempDirectory } from "./helpers.ts";

let directory: ReturnType<typeof tempDirectory>;
beforeEach(() => {
  directory = tempDirectory("describe-mcp-");
  mkdirSync(join(directory.path, "tools"));
  writeFileSync(join(directory.path, "tools", "server.py"), "");
  writeFileSync(join(directory.path, "run.sh"), "");
});
afterEach(() => directory.remove());

describe("describeMcpConfig", () => {
  it("marks where the user's variables go, lists them, flags credentials, and never shows their values", () => {
    const content = JSON.stringify({
      mcpServers: {
        api: {
          url: "https://example.com/mcp?k=${env:GH_TOKEN}",
          headers: { Authorization: "Bearer ${API_SECRET}", "X-User": "${USER_NAME:-anonymous}" },
        },
        cli: { command: "${HOME}/bin/server", args: ["--port", "${PORT:-80}"], env: { DEBUG: "1" } },
      },
    });
    const env = { GH_TOKEN: "ghp_value", API_SECRET: "s3cret", HOME: "/home/me" };
    const description = describeMcpConfig(content, "/w/mcp.json", env, createStyle(false));
    expect(description.text).toBe(
      "  api: https://example.com/mcp?k=${GH_TOKEN}\n      header Authorization: Bearer ${API_SECRET}\n      header X-User: anonymous\n" +
        "  cli: ${HOME}/bin/server --port 80\n      env DEBUG=1\n" +
        "  (commands also get HOME, LOGNAME, PATH, SHELL, TERM, USER from your environment)\n",
    );
    expect(description.variables).toStrictEqual(["GH_TOKEN", "API_SECRET", "HOME"]);
    expect(description.credentials).toStrictEqual(["GH_TOKEN", "API_SECRET"]);
    for (const value of Object.values(env)) expect(description.text).not.toContain(value);
  });

  it("tells credentials by their names", () => {
    for (const name of [
      "OPENAI_API_KEY",
      "GITHUB_TOKEN",
      "AWS_SECRET_ACCESS_KEY",
      "DB_PASSWORD",
      "DB_PASS",
      "DB_PWD",
      "AUTH_HEADER",
      "SESSION_COOKIE",
    ])
      expect(looksLikeCredential(name), name).toBe(true);
    for (const name of ["HOME", "PATH", "PWD", "OLDPWD", "BUILD_MODE", "PORT"])
      expect(looksLikeCredential(name), name).toBe(false);
  });
});

describe("mcpRuns", () => {
  it("lists a command given as a path and the arguments that name files, in the server's directory", () => {
    const runs = mcpRuns(
      {
        script: { command: "./run.sh" },
        python: { command: "python3", args: ["-u", "server.py", "--name", "x"], cwd: "tools" },
        remote: { url: "https://example.com/mcp" },
      },
      directory.path,
    );
    expect(runs).toStrictEqual([join(directory.path, "run.sh"), join(directory.path, "tools", "server.py")]);
  });
});
