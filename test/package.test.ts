import { execFile } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sse, sseHeaders } from "./providers/replay-server.ts";

const run = promisify(execFile);
const root = fileURLToPath(new URL("..", import.meta.url));
const rootManifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
  exports: Record<string, unknown>;
  bin: Record<string, string>;
  devDependencies: Record<string, string>;
};

// The package as a user meets it: packed (in a copy of the repository, so the build it runs never
// races the other test files), installed from the tarball into an empty ESM project with npm, its
// subpaths imported by name, the bin run, and the README's first example type-checked with the
// settings `tsc --init` writes. Slow (an install and two builds): about half a minute.
describe("the packed package, installed into a new project", () => {
  let work = "";
  let copy = "";
  let project = "";
  let installLog = "";
  let manifest: { scripts?: Record<string, string>; main: string; types: string; files?: string[] } = {
    main: "",
    types: "",
  };

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "sal-pack-"));
    copy = join(work, "repository");
    for (const entry of [
      "package.json",
      "tsconfig.json",
      "tsconfig.build.json",
      "bundle-cli.ts",
      "README.md",
      "LICENSE",
      "src",
    ]) {
      cpSync(join(root, entry), join(copy, entry), { recursive: true });
    }
    symlinkSync(join(root, "node_modules"), join(copy, "node_modules"));
    await run("npm", ["pack", "--pack-destination", work], { cwd: copy, env: npmEnvironment() });
    const tarball = join(
      work,
      readdirSync(work).find((name) => name.endsWith(".tgz"))!,
    );
    await run("tar", ["-xzf", tarball, "-C", work]);
    manifest = JSON.parse(readFileSync(join(work, "package", "package.json"), "utf8")) as typeof manifest;

    project = join(work, "project");
    mkdirSync(project);
    writeFileSync(
      join(project, "package.json"),
      JSON.stringify({ name: "new-project", private: true, type: "module" }),
    );
    const peers = [
      "@types/node",
      "@modelcontextprotocol/sdk",
      "@opentelemetry/api",
      "@restatedev/restate-sdk",
      "pg",
      "vitest",
      "zod",
    ].map((name) => `${name}@${rootManifest.devDependencies[name]!}`);
    const install = await run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", tarball, ...peers], {
      cwd: project,
      env: npmEnvironment(),
    });
    installLog = `${install.stdout}\n${install.stderr}`;
  }, 300_000);

  // The project's node_modules is large (the peers, vitest among them): removing it takes a while on a loaded machine.
  afterAll(() => {
    if (work !== "") rmSync(work, { recursive: true, force: true });
  }, 120_000);

  it("ships no install-time script (a library's users see no warning of ours) and points main, types and bin into dist", () => {
    const scripts = manifest.scripts ?? {};
    // `prepare` builds dist/ for an install from git or a clone (where tsconfig.build.json is); in a
    // package, which ships dist/ and no tsconfig, it does nothing. npm 11 still lists it as a script
    // to approve: that is the only line of the install naming this package.
    for (const hook of ["preinstall", "install", "postinstall"]) expect(scripts[hook], hook).toBeUndefined();
    expect(scripts.prepare).toContain("npm run build");
    expect(manifest.files).not.toContain("tsconfig.build.json");
    expect(
      installLog.split("\n").filter((text) => text.includes("simple-agent-loop") && !text.includes("(prepare: ")),
    ).toStrictEqual([]);
    expect(manifest.main).toMatch(/^\.\/dist\//);
    expect(readdirSync(join(project, "node_modules", "simple-agent-loop", "dist")).length).toBeGreaterThan(0);
  });

  // `npm pack` ran `prepare`, which built dist/ in the copy as `npm run build` does in a clone.
  it("leaves the bin executable after a build: run by its path in the checkout, as a link to it runs it", async () => {
    const bin = join(copy, "dist", "cli", "bin.js");
    expect(statSync(bin).mode & 0o111).toBe(0o111);
    const { stdout } = await run(bin, ["--version"], { cwd: copy });
    expect(stdout.trim()).toMatch(/\d+\.\d+\.\d+$/);
  });

  it("runs an agent and loads every subpath export by name from dist; the bin runs", async () => {
    const subpaths = Object.keys(rootManifest.exports)
      .filter((key) => key !== "./package.json")
      .map((key) => `simple-agent-loop${key.slice(1)}`);
    const script = `
      import { agentLoop, initSession, response, tool } from "simple-agent-loop";
      import { scriptedModel } from "simple-agent-loop/testing";
      const add = tool({ name: "add", description: "Add.", inputSchema: { type: "object" }, handler: (i) => i.a + i.b });
      const model = scriptedModel([[{ type: "tool_call", id: "1", name: "add", input: { a: 2, b: 3 } }], (s) => [{ role: "assistant", content: String(s.messages.at(-1).output) }]]);
      const session = await agentLoop(model, [add], initSession("s", "u"));
      const loaded = {};
      for (const name of ${JSON.stringify(subpaths)}) loaded[name] = { resolved: import.meta.resolve(name), exports: Object.keys(await import(name)).length };
      console.log(JSON.stringify({ answer: response(session).content, loaded }));
    `;
    const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], { cwd: project });
    const result = JSON.parse(stdout) as {
      answer: string;
      loaded: Record<string, { resolved: string; exports: number }>;
    };
    expect(result.answer).toBe("5");
    for (const name of subpaths) {
      expect(result.loaded[name]!.resolved, name).toMatch(/\/node_modules\/simple-agent-loop\/dist\/.+\.js$/);
      expect(result.loaded[name]!.exports, name).toBeGreaterThan(0);
    }
    const { stdout: version } = await run(join(project, "node_modules", ".bin", "simple-agent-loop"), ["--version"], {
      cwd: project,
    });
    expect(version.trim()).toMatch(/^(simple-agent-loop )?\d+\.\d+\.\d+$/);
  });

  it("ends a run with npx simple-agent-loop --resume <id>, which, run as printed in the app, lands in the same session", async () => {
    await expectHintRunsAsPrinted(project, join(work, "home"));
  });

  // A `file:` dependency on a local clone (what `npm install ../simple-agent-loop` writes, and
  // what `npm link` makes): npm symlinks the clone and links its bin into the app's
  // node_modules/.bin, but only if dist/cli/bin.js exists when the app installs (README: build
  // the clone first). The clone here is the copy `npm pack` just built; npm installs nothing into
  // a linked folder outside the app, so the copy's node_modules is left as it is.
  it("in an app linked to the checkout (a file: dependency), runs npx simple-agent-loop through the linked bin and its printed hint", async () => {
    const linked = join(work, "linked-app");
    mkdirSync(linked);
    writeFileSync(
      join(linked, "package.json"),
      JSON.stringify({
        name: "linked-app",
        private: true,
        type: "module",
        dependencies: { "simple-agent-loop": "file:../repository" },
      }),
    );
    await run("npm", ["install", "--offline", "--no-audit", "--no-fund", "--ignore-scripts"], {
      cwd: linked,
      env: npmEnvironment(),
    });
    expect(realpathSync(join(linked, "node_modules", "simple-agent-loop"))).toBe(realpathSync(copy));
    expect(realpathSync(join(linked, "node_modules", ".bin", "simple-agent-loop"))).toBe(
      realpathSync(join(copy, "dist", "cli", "bin.js")),
    );
    const { stdout } = await run("npx", ["simple-agent-loop", "--version"], { cwd: linked, env: npmEnvironment() });
    expect(stdout.trim()).toMatch(/\d+\.\d+\.\d+$/);
    await expectHintRunsAsPrinted(linked, join(work, "linked-home"));
  });

  it("type-checks the README's first example with the settings tsc --init writes", async () => {
    const example = /```ts\n([\s\S]*?)```/.exec(readFileSync(join(root, "README.md"), "utf8"))![1]!;
    expect(example).toContain('from "simple-agent-loop"');
    writeFileSync(join(project, "index.ts"), example);
    const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
    await run(process.execPath, [tsc, "--init"], { cwd: project });
    const checked = await run(process.execPath, [tsc, "--noEmit", "-p", "."], { cwd: project }).catch(
      (error: { stdout: string }) => error,
    );
    expect(checked.stdout).toBe("");
  });

  // Node strips a .ts file's types itself from 22.18 / 23.6 on; older Node cannot run them as written.
  it("type-checks every snippet of the README and the guide as written in a project set up as the README says, and runs each against a stand-in provider", async () => {
    const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
    const runsTypeScript = major > 23 || (major === 23 && minor >= 6) || (major === 22 && minor >= 18);
    const folder = join(project, "readme");
    mkdirSync(folder);
    const provider = await standInAnthropic();
    try {
      const snippets = ["README.md", "docs/guide.md"].flatMap((page) =>
        [...readFileSync(join(root, page), "utf8").matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!),
      );
      expect(snippets.length).toBeGreaterThan(10);
      // The tsconfig tsc --init writes, with the one change the README asks for.
      const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
      await run(process.execPath, [tsc, "--init"], { cwd: folder });
      const config = readFileSync(join(folder, "tsconfig.json"), "utf8");
      expect(config).toContain('"types": []');
      writeFileSync(join(folder, "tsconfig.json"), config.replace('"types": []', '"types": ["node"]'));
      snippets.forEach((snippet, index) => writeFileSync(join(folder, `snippet-${index + 1}.ts`), snippet));
      const checked = await run(process.execPath, [tsc, "--noEmit", "-p", "."], { cwd: folder }).catch(
        (error: { stdout: string }) => error,
      );
      expect(checked.stdout).toBe("");
      if (!runsTypeScript) {
        console.warn(`Node ${process.versions.node} cannot run .ts files: the README snippets were only type-checked`);
        return;
      }
      // What the snippets read: a screenshot (a 1x1 PNG).
      writeFileSync(
        join(folder, "screenshot.png"),
        Buffer.from(
          "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg==",
          "base64",
        ),
      );
      const environment = Object.fromEntries(
        Object.entries(process.env).filter(([name]) => !/^(ANTHROPIC_|OPENAI_|GEMINI_|GOOGLE_|SAL_|CI$)/.test(name)),
      );
      const failures: string[] = [];
      for (const [index, snippet] of snippets.entries()) {
        const file = `snippet-${index + 1}.ts`;
        await run(process.execPath, [file], {
          cwd: folder,
          timeout: 60_000,
          env: { ...environment, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: provider.url },
        }).catch((error: { stderr?: string; message: string }) =>
          failures.push(`${file}: ${error.stderr ?? error.message}\n${snippet}`),
        );
      }
      expect(failures).toStrictEqual([]);
      expect(provider.requests()).toBeGreaterThan(5);
    } finally {
      await provider.close();
    }
  }, 300_000);
});

// Runs `npx simple-agent-loop <task>` in `cwd` against a stand-in provider, then the resume hint
// it printed, as printed (through sh, the next task on stdin: no terminal here, or the prompt
// would open), and checks the second run continued the first one's session.
async function expectHintRunsAsPrinted(cwd: string, home: string): Promise<void> {
  const provider = await standInAnthropic();
  const environment = {
    ...npmEnvironment(),
    SIMPLE_AGENT_LOOP_HOME: home,
    ANTHROPIC_API_KEY: "test-key",
    ANTHROPIC_BASE_URL: provider.url,
  };
  const shell = (command: string, input: string): Promise<{ stdout: string }> =>
    new Promise((resolve, reject) => {
      const child = execFile("/bin/sh", ["-c", command], { cwd, env: environment }, (error, stdout) =>
        error === null ? resolve({ stdout }) : reject(error),
      );
      child.stdin?.end(input);
    });
  try {
    const first = await shell("npx simple-agent-loop 'what is here?'", "");
    const id = readdirSync(join(home, "sessions"))[0]!.replace(/\.jsonl$/, "");
    const hint = /To go on with this session: (.+)\n/.exec(first.stdout)?.[1];
    expect(hint).toBe(`npx simple-agent-loop --resume ${id}`);
    const second = await shell(hint!, "go on");
    expect(second.stdout).toContain(`session ${id} (resumed`);
    expect(readdirSync(join(home, "sessions")).filter((name) => name.endsWith(".jsonl"))).toHaveLength(1);
    expect(provider.requests()).toBe(2);
  } finally {
    await provider.close();
  }
}

// An Anthropic Messages endpoint that answers every request with one short text (valid JSON, so
// the structured-output snippet gets what it asks for).
async function standInAnthropic(): Promise<{ url: string; requests: () => number; close: () => Promise<void> }> {
  let count = 0;
  const server = createServer((request, reply) => {
    request.resume();
    request.on("end", () => {
      count++;
      reply.writeHead(200, sseHeaders);
      const text = JSON.stringify({ score: 1, reason: "the sky is blue" });
      for (const chunk of sse(
        [
          {
            type: "message_start",
            message: { id: `msg_${count}`, model: "claude-sonnet-4-5", usage: { input_tokens: 10, output_tokens: 1 } },
          },
          { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
          { type: "content_block_delta", index: 0, delta: { type: "text_delta", text } },
          { type: "content_block_stop", index: 0 },
          { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 12 } },
          { type: "message_stop" },
        ],
        { withEventNames: true },
      ))
        reply.write(chunk);
      reply.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => count,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** npm without the repository's own PATH tweaks: quiet, and never asking. */
function npmEnvironment(): NodeJS.ProcessEnv {
  return { ...process.env, npm_config_update_notifier: "false", npm_config_yes: "true" };
}
