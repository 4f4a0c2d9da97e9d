// The sandbox as the CLI uses it: a model's bash call cannot read the user's secrets, write
// outside the workspace or reach the network (unless --allow-network); --sandbox off says so at
// start; and where bwrap cannot run, the CLI says so once and asks about every bash call,
// without offering "always".
import { existsSync, mkdirSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "./fake-openai.ts";
import { cliEnvironment, runCli, tempDirectory } from "./helpers.ts";
import { fakeHome, support } from "./sandbox-support.ts";
import { terminalFixture } from "./terminal-fixture.ts";

let workspace: ReturnType<typeof tempDirectory>;
let home: ReturnType<typeof fakeHome>;
let server: FakeOpenAI;

const toolOutput = (): string => toolOutputOf(server);

describe.skipIf(!support.available)("the CLI's bash in the sandbox", () => {
  beforeEach(async () => {
    workspace = tempDirectory("sandbox-cli-ws-");
    home = fakeHome();
    server = await startFakeOpenAI();
  });
  afterEach(async () => {
    await server.close();
    workspace.remove();
    home.remove();
  });

  const runWith = async (args: string[], command: string) => {
    server.enqueue({ toolCalls: [{ name: "bash", arguments: { command } }] }, { text: "Done." });
    return runCli(["--model", "test-model", "--allow", "bash", ...args, "look around"], {
      cwd: workspace.path,
      env: cliEnvironment(home.path, { OPENAI_BASE_URL: server.baseURL, SIMPLE_AGENT_LOOP_HOME: home.cliHome }),
    });
  };
  const port = (): string => new URL(server.baseURL).port;

  it("by default: no secrets, no writes outside the workspace, no network; the workspace written", async () => {
    const { code, stderr } = await runWith(
      [],
      `cat ~/.ssh/id_ed25519; echo x > ~/outside.txt; echo made > inside.txt; cat ~/notes.txt; exec 3<>/dev/tcp/127.0.0.1/${port()} && echo connected`,
    );
    expect(code, stderr).toBe(0);
    expect(stderr).not.toContain("warning");
    const output = toolOutput();
    expect(output).toContain(".ssh/id_ed25519: No such file or directory");
    expect(output).not.toContain("SSH-SECRET-KEY");
    expect(output).toContain("outside.txt: Read-only file system");
    expect(output).toContain("plain notes");
    expect(output).not.toContain("connected");
    expect(readFileSync(join(workspace.path, "inside.txt"), "utf8")).toBe("made\n");
    expect(existsSync(join(home.path, "outside.txt"))).toBe(false);
  }, 60_000);

  it("with --allow-network the command reaches a server; with --sandbox read-only it cannot write the workspace", async () => {
    const network = await runWith(["--allow-network"], `exec 3<>/dev/tcp/127.0.0.1/${port()} && echo connected`);
    expect(network.code, network.stderr).toBe(0);
    expect(toolOutput()).toContain("connected");
    server.requests.length = 0;
    const readOnly = await runWith(["--sandbox", "read-only"], "echo made > inside.txt");
    expect(readOnly.code, readOnly.stderr).toBe(0);
    expect(toolOutput()).toContain("inside.txt: Read-only file system");
    expect(existsSync(join(workspace.path, "inside.txt"))).toBe(false);
  }, 90_000);

  it("with --allow-host the command reaches that host through the proxy, and another is refused with how to allow it", async () => {
    // A GET through $HTTP_PROXY with the node that runs the tests (the sandbox shows the root read-only).
    const get = (host: string): string =>
      `${JSON.stringify(process.execPath)} -e 'const proxy = new URL(process.env.HTTP_PROXY); require("node:http").get({ host: proxy.hostname, port: proxy.port, path: process.argv[1] }, (r) => { let b = ""; r.on("data", (c) => b += c); r.on("end", () => console.log(host_label, r.statusCode, b.slice(0, 300))); })'`.replace(
        "host_label",
        JSON.stringify(host),
      ) + ` http://${host}:${port()}/v1/models`;
    // The proxy's forwarder listens on a random port of the sandbox's own loopback: on the rare run
    // where it drew the fake server's port number, the direct connection reaches the forwarder (the
    // proxy, which decides), not the server, so that run says so instead of "connected".
    const direct = `if [ "$HTTP_PROXY" = "http://127.0.0.1:${port()}" ]; then echo same-port; else exec 3<>/dev/tcp/127.0.0.1/${port()} && echo connected; fi`;
    const command = `${get("api.localhost")}; ${get("elsewhere.localhost")}; ${direct}`;
    // The fake server answers the command's GET too, in turn: with the second of three answers.
    server.enqueue(
      { toolCalls: [{ name: "bash", arguments: { command } }] },
      { text: "the command's answer" },
      { text: "Done." },
    );
    const { code, stderr } = await runCli(
      ["--model", "test-model", "--allow", "bash", "--allow-host", "api.localhost", "look around"],
      {
        cwd: workspace.path,
        env: cliEnvironment(home.path, { OPENAI_BASE_URL: server.baseURL, SIMPLE_AGENT_LOOP_HOME: home.cliHome }),
      },
    );
    expect(code, stderr).toBe(0);
    const output = toolOutput();
    // The fake server's streamed answer, reached through the proxy.
    expect(output).toContain('api.localhost 200 data: {"id":"chatcmpl-2"');
    expect(output).toContain(
      "elsewhere.localhost 403 the sandbox refused elsewhere.localhost:" +
        port() +
        ": bash commands reach only the hosts of --allow-host (api.localhost). To allow it, run simple-agent-loop with --allow-host elsewhere.localhost",
    );
    expect(output).not.toContain("connected");
    expect(output).toContain(
      `[the sandbox refused network access to elsewhere.localhost:${port()}: not in --allow-host`,
    );
    // The model's request went through the proxy to the fake server: it saw the path.
    expect(server.requests.map((request) => `${request.method} ${request.url}`)).toContain("GET /v1/models");
  }, 60_000);

  it("with --sandbox off runs the command unconfined and warns at start", async () => {
    const { code, stderr } = await runWith(["--sandbox", "off"], "cat ~/.ssh/id_ed25519");
    expect(code, stderr).toBe(0);
    expect(stderr).toContain("warning: --sandbox off: bash commands run unconfined");
    expect(toolOutput()).toContain("SSH-SECRET-KEY");
  }, 60_000);
});

describe("the CLI where bwrap cannot run", () => {
  const fixture = terminalFixture("sandbox-missing");
  let bin: ReturnType<typeof tempDirectory>;
  beforeEach(() => {
    // A PATH with the shells the CLI runs and no bwrap.
    bin = tempDirectory("sandbox-missing-bin-");
    mkdirSync(join(bin.path, "bin"));
    for (const name of ["bash", "sh", "touch"]) symlinkSync(`/bin/${name}`, join(bin.path, "bin", name));
  });
  afterEach(() => bin.remove());

  it("says so once at start, and asks about each bash call without offering always", { timeout: 90_000 }, async () => {
    fixture
      .server()
      .enqueue(
        { toolCalls: [{ name: "bash", arguments: { command: "touch FIRST" } }] },
        { toolCalls: [{ name: "bash", arguments: { command: "touch SECOND" } }] },
        { text: "all done" },
      );
    const terminal = fixture.start([], { PATH: join(bin.path, "bin") });
    const start = await terminal.waitFor("> ");
    expect(start).toContain("warning: no sandbox for bash: bwrap is not installed");
    terminal.type("run\r");
    const first = await terminal.waitFor("Allow bash?");
    expect(first).toContain("bash has no sandbox here");
    expect(first).not.toContain("always for bash");
    terminal.type("y");
    await terminal.waitFor(/touch SECOND[^]*Allow bash\?/);
    terminal.type("y");
    const end = await terminal.waitFor("all done");
    expect(end.split("no sandbox for bash")).toHaveLength(2);
    expect(existsSync(join(fixture.workspace(), "FIRST"))).toBe(true);
    expect(existsSync(join(fixture.workspace(), "SECOND"))).toBe(true);
  });

  for (const flags of [["--allow", "bash"], ["--yes"], ["--mode", "yolo"]])
    it(`asks about each bash call with ${flags.join(" ")} too`, { timeout: 90_000 }, async () => {
      fixture
        .server()
        .enqueue({ toolCalls: [{ name: "bash", arguments: { command: "touch ASKED" } }] }, { text: "all done" });
      const terminal = fixture.start(flags, { PATH: join(bin.path, "bin") });
      await terminal.waitFor(/> $/);
      terminal.type("run\r");
      const asked = await terminal.waitFor("Allow bash?");
      expect(asked).toContain("--sandbox off runs them unasked");
      expect(existsSync(join(fixture.workspace(), "ASKED"))).toBe(false);
      terminal.type("n");
      await terminal.waitFor("Why?");
      terminal.type("\r");
      await terminal.waitFor("all done");
      expect(existsSync(join(fixture.workspace(), "ASKED"))).toBe(false);
    });

  it("without a terminal, refuses bash whatever --yes says and names --sandbox off; --sandbox off runs it", async () => {
    const server = await startFakeOpenAI();
    const workspace = tempDirectory("sandbox-missing-ws-");
    try {
      const run = async (args: string[]) => {
        server.requests.length = 0;
        server.enqueue({ toolCalls: [{ name: "bash", arguments: { command: "touch RAN" } }] }, { text: "Done." });
        const result = await runCli(["--model", "test-model", ...args, "run it"], {
          cwd: workspace.path,
          env: cliEnvironment(workspace.path, { OPENAI_BASE_URL: server.baseURL, PATH: join(bin.path, "bin") }),
        });
        return { ...result, toolOutput: toolOutputOf(server) };
      };
      for (const flags of [["--yes"], ["--allow", "bash"], ["--mode", "yolo"], ["--json", "--yes"]]) {
        const refused = await run(flags);
        expect(refused.code, refused.stderr).toBe(0);
        expect(refused.stderr).toContain("warning: no sandbox for bash: bwrap is not installed");
        expect(refused.toolOutput).toContain("bash cannot run: there is no sandbox for it here");
        expect(refused.toolOutput).toContain("Run the CLI with --sandbox off");
        expect(existsSync(join(workspace.path, "RAN"))).toBe(false);
      }
      const unconfined = await run(["--yes", "--sandbox", "off"]);
      expect(unconfined.code, unconfined.stderr).toBe(0);
      expect(unconfined.stderr).toContain("warning: --sandbox off: bash commands run unconfined");
      expect(existsSync(join(workspace.path, "RAN"))).toBe(true);
    } finally {
      await server.close();
      workspace.remove();
    }
  }, 120_000);
});

// The first tool result the model was sent.
function toolOutputOf(fake: FakeOpenAI): string {
  for (const body of fake.bodies()) {
    const result = (body?.messages ?? []).find((message) => message.role === "tool");
    if (result !== undefined) return String(result.content);
  }
  return "(no tool result was sent)";
}
