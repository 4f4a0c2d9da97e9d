import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
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
});
