import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("..", import.meta.url));

// What users get: the built dist/ through the package's exports map (built by `prepare` on install).
describe.skipIf(!existsSync(`${root}/dist/index.js`))("published package", () => {
  it("the main and ./testing entry points import by name from dist and run an agent", async () => {
    const script = `
      import { agentLoop, initSession, response, tool } from "simple-agent-loop";
      import { scriptedModel } from "simple-agent-loop/testing";
      const add = tool({ name: "add", description: "Add.", inputSchema: { type: "object" }, handler: (i) => i.a + i.b });
      const model = scriptedModel([[{ type: "tool_call", id: "1", name: "add", input: { a: 2, b: 3 } }], (s) => [{ role: "assistant", content: String(s.messages.at(-1).output) }]]);
      const session = await agentLoop(model, [add], initSession("s", "u"));
      console.log(JSON.stringify({ answer: response(session).content, resolved: import.meta.resolve("simple-agent-loop") }));
    `;
    const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script], { cwd: root });
    const result = JSON.parse(stdout) as { answer: string; resolved: string };
    expect(result.answer).toBe("5");
    expect(result.resolved).toMatch(/\/dist\/index\.js$/);
  });

  it("every subpath export resolves to dist and loads; the bin runs from dist", async () => {
    const { exports } = JSON.parse(await readFile(`${root}/package.json`, "utf8")) as { exports: Record<string, unknown> };
    const subpaths = Object.keys(exports).filter((key) => key !== "./package.json").map((key) => `simple-agent-loop${key.slice(1)}`);
    expect(subpaths).toEqual(expect.arrayContaining(["simple-agent-loop/mcp", "simple-agent-loop/viewer", "simple-agent-loop/restate", "simple-agent-loop/otel"]));
    const script = `
      const out = {};
      for (const name of ${JSON.stringify(subpaths)}) out[name] = { resolved: import.meta.resolve(name), exports: Object.keys(await import(name)).length };
      console.log(JSON.stringify(out));
    `;
    const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script], { cwd: root });
    const loaded = JSON.parse(stdout) as Record<string, { resolved: string; exports: number }>;
    for (const name of subpaths) {
      expect(loaded[name]!.resolved, name).toMatch(/\/dist\/.+\.js$/);
      expect(loaded[name]!.exports, name).toBeGreaterThan(0);
    }
    const { bin } = JSON.parse(await readFile(`${root}/package.json`, "utf8")) as { bin: Record<string, string> };
    const { stdout: version } = await promisify(execFile)(process.execPath, [`${root}/${bin["simple-agent-loop"]!}`, "--version"], { cwd: root });
    expect(version.trim()).toMatch(/^(simple-agent-loop )?\d+\.\d+\.\d+$/);
  });

  it("main and types point into dist, for tools that do not read exports", async () => {
    const { main, types } = JSON.parse(await readFile(`${root}/package.json`, "utf8")) as { main: string; types: string };
    expect(existsSync(`${root}/${main}`), main).toBe(true);
    expect(existsSync(`${root}/${types}`), types).toBe(true);
  });
});
