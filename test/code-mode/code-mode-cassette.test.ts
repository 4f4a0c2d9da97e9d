import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  agentLoop,
  codeModeName,
  initSession,
  tool,
  type InvokeModel,
  type ToolResultMessage,
} from "simple-agent-loop";
import { assertCassetteUsed, cassette, scriptedModel, type CassetteEntry } from "simple-agent-loop/testing";
import { withoutTs } from "../helpers.ts";

// A model that must not be reached: replay answers from the file alone.
const unreachable: InvokeModel = () => {
  throw new Error("the live model was called during replay");
};

// Fresh tools each run, counting what really ran.
function lookupTool(runs: string[]) {
  return tool({
    name: "lookup",
    description: "Looks up.",
    inputSchema: { type: "object", properties: { key: { type: "string" } }, required: ["key"] },
    handler: (input) => {
      runs.push(String(input.key));
      if (input.key === "missing") throw new Error("no such key");
      return `value of ${String(input.key)} (run ${runs.length})`;
    },
  });
}

const program = [
  "const a = await tools.lookup({ key: 'a' });",
  "let b;",
  "try { b = await tools.lookup({ key: 'missing' }); } catch (error) { b = 'failed: ' + error.output; }",
  "console.log('two calls');",
  "return { a, b };",
].join("\n");

function script() {
  return scriptedModel([
    [{ type: "tool_call", id: "call_7", name: codeModeName, input: { code: program } }],
    [{ role: "assistant", content: "done" }],
  ]);
}

const lines = (path: string): CassetteEntry[] =>
  readFileSync(path, "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as CassetteEntry);

const savedCi = process.env.CI;
afterEach(() => {
  if (savedCi === undefined) delete process.env.CI;
  else process.env.CI = savedCi;
});

describe("code mode with a cassette recording tools", () => {
  for (const ci of [false, true]) {
    it(`records each program call as a tool entry and replays them: the program runs again, its tools do not (CI ${ci ? "set" : "unset"})`, async () => {
      // Recording is explicit (mode "record"), so CI does not refuse it; replay works either way.
      if (ci) process.env.CI = "true";
      else delete process.env.CI;
      const path = join(mkdtempSync(join(tmpdir(), "sal-code-cassette-")), "run.jsonl");
      const runs: string[] = [];
      const recorded = await agentLoop(
        cassette(script(), { path, mode: "record", tools: "record" }),
        [lookupTool(runs)],
        initSession("s", "u"),
        { codeMode: true },
      );
      expect(runs).toStrictEqual(["a", "missing"]);
      const tools = lines(path).flatMap((entry) => (entry.kind === "tool" ? [[entry.id, entry.name]] : []));
      expect(tools).toStrictEqual([
        ["call_7.1", "lookup"],
        ["call_7.2", "lookup"],
      ]);

      const replaying = cassette(unreachable, { path, mode: "replay", tools: "record" });
      const replayed = await agentLoop(replaying, [lookupTool(runs)], initSession("s", "u"), { codeMode: true });
      expect(runs).toStrictEqual(["a", "missing"]);
      expect(withoutTs(replayed)).toStrictEqual(withoutTs(recorded));
      const result = replayed.messages.find(
        (message): message is ToolResultMessage =>
          "type" in message && message.type === "tool_result" && message.id === "call_7",
      )!;
      expect(result.output).toStrictEqual({ a: "value of a (run 1)", b: "failed: Error: no such key" });
      expect(result.programCalls?.map((call) => [call.id, call.isError === true])).toStrictEqual([
        ["call_7.1", false],
        ["call_7.2", true],
      ]);
      expect(result.logs).toStrictEqual(["two calls"]);
      assertCassetteUsed(replaying);
    });
  }
});
