// Files a user did not write (a cassette from a pull request, a session file, a store's log, a
// workspace's MCP config) may hold JSON nested far deeper than anything we write: each reader
// refuses it with its own clear error naming the file and the line, never a bare RangeError.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { agentLoop, extendSession, initSession, tool, type JsonObject } from "simple-agent-loop";
import { fromUIMessages } from "simple-agent-loop/http";
import { fileTokenStore, fileTrustStore, loadMcpConfig, isMcpConfigError } from "simple-agent-loop/mcp";
import { readPolicyFile } from "../src/cli/policy-presets.ts";
import { readJsonBody } from "../src/http/read-json-body.ts";
import { extendSessionBatch } from "../src/session.ts";
import { parseLogLine, type LogProblem, type LogRecord } from "../src/viewer/log-reader.ts";
import { closeSession, fileStore, isStoreError, loadEntries, loadSession, openSession } from "simple-agent-loop/store";
import { cassette, isCassetteError, scriptedModel } from "simple-agent-loop/testing";

const directory = (): string => mkdtempSync(join(tmpdir(), "sal-depth-"));
const echo = tool({ name: "echo", description: "d", inputSchema: { type: "object" }, handler: (input) => input });
const nested = (depth: number): string => `${"[".repeat(depth)}${"]".repeat(depth)}`;

describe("JSON nested 5,000 deep in a file we read", () => {
  it("a cassette is a CassetteError naming the file and the line", async () => {
    const path = join(directory(), "deep.jsonl");
    const recorded = scriptedModel([
      [{ type: "tool_call", id: "c", name: "echo", input: { deep: "@" } }],
      [{ role: "assistant", content: "done" }],
    ]);
    await agentLoop(cassette(recorded, { path, mode: "record" }), [echo], initSession("s", "hi"));
    writeFileSync(path, readFileSync(path, "utf8").replace('"@"', nested(5000)));
    // Read when the cassette is made, before any call.
    const error: unknown = await Promise.resolve()
      .then(() =>
        agentLoop(
          cassette(() => [], { path, mode: "replay" }),
          [echo],
          initSession("s", "hi"),
        ),
      )
      .catch((thrown: unknown) => thrown);
    expect(isCassetteError(error), String(error)).toBe(true);
    expect((error as Error).message).toBe(`cassette ${path}: line 1 is nested more than 1000 levels deep`);
  });

  it("a session file is a StoreError naming the file and the line, for loadSession, openSession and fileStore", async () => {
    const dir = directory();
    const path = join(dir, "s.jsonl");
    const session = await openSession(path);
    session.messages.push({ type: "tool_call", id: "c", name: "t", input: { deep: "@" } });
    session.messages.push({ type: "tool_result", id: "c", output: "ok" });
    await closeSession(session);
    writeFileSync(path, readFileSync(path, "utf8").replace('"@"', nested(5000)));
    const line =
      readFileSync(path, "utf8")
        .split("\n")
        .findIndex((text) => text.includes("[[[")) + 1;
    const refusals = [
      () => loadSession(path),
      () => openSession(path),
      () => fileStore(dir).load("s"),
      () => loadEntries(path),
    ];
    for (const load of refusals) {
      const error: unknown = await load().catch((thrown: unknown) => thrown);
      expect(isStoreError(error), String(error)).toBe(true);
      expect((error as Error).message).toBe(
        `${path}:${line}: nested more than 1000 levels deep; the file was left as it is`,
      );
    }
  });

  it("an MCP config is an McpConfigError naming the file", async () => {
    const path = join(directory(), "mcp.json");
    writeFileSync(path, `{"mcpServers":{"a":{"command":"x","args":${nested(5000)}}}}`);
    const error: unknown = await loadMcpConfig(path).catch((thrown: unknown) => thrown);
    expect(isMcpConfigError(error), String(error)).toBe(true);
    expect((error as Error).message).toBe(`MCP config ${path} is nested more than 1000 levels deep`);
  });

  it("the CLI's policy file, MCP pins (mcp-pins.json) and sign-ins (mcp-auth.json): an error naming the file", async () => {
    const policy = join(directory(), "policy.json");
    writeFileSync(policy, `{"rules":[{"id":"r","tool":"x","action":"allow","input":{"a":${nested(5000)}}}]}`);
    expect(() => readPolicyFile(policy)).toThrow(`--policy ${policy}: nested more than 1000 levels deep`);
    const pins = join(directory(), "mcp-pins.json");
    writeFileSync(pins, `{"server":{"tool":{"fingerprint":${nested(5000)}}}}`);
    await expect(fileTrustStore(pins).load()).rejects.toThrow(`${pins} is nested more than 1000 levels deep`);
    const auth = join(directory(), "mcp-auth.json");
    writeFileSync(auth, `{"https://a.example/mcp":{"tokens":${nested(5000)}}}`);
    await expect(fileTokenStore(auth).get("https://a.example/mcp")).rejects.toThrow(
      `${auth} is nested more than 1000 levels deep`,
    );
  });

  it("a line of a log the viewer shows is a problem of that line, and the next line still reads", () => {
    const records: LogRecord[] = [];
    const problems: LogProblem[] = [];
    parseLogLine(`{"type":"message","message":${nested(5000)}}`, 1, records, problems);
    parseLogLine(JSON.stringify({ type: "message", message: { role: "user", content: "hi" } }), 2, records, problems);
    expect(problems.map((problem) => [problem.line, problem.message.slice(0, 34)])).toStrictEqual([
      [1, "nested more than 1000 levels deep:"],
    ]);
    expect(records).toHaveLength(1);
  });

  it("nesting as deep as a session can be written still loads", async () => {
    const path = join(directory(), "ok.jsonl");
    const session = await openSession(path);
    const deep = JSON.parse(`{"a":${"[".repeat(900)}1${"]".repeat(900)}}`) as JsonObject;
    session.messages.push({ role: "user", content: "hi" }, { type: "tool_call", id: "c", name: "t", input: deep });
    session.messages.push({ type: "tool_result", id: "c", output: "ok" });
    await closeSession(session);
    expect((await loadSession(path)).messages[1]).toMatchObject({ input: deep });
  });
});

describe("JSON nested past what a session may hold, from a page or a tool", () => {
  const deepInput = (depth: number): JsonObject => JSON.parse(`{"deep":${nested(depth)}}`) as JsonObject;

  it("a request body is a 400 naming the depth, before it is parsed", async () => {
    const request = (body: string): Request =>
      new Request("http://localhost/", { method: "POST", headers: { "content-type": "application/json" }, body });
    const deep = await readJsonBody(request(`{"id":"c1","x":${nested(5000)}}`), 1024 * 1024);
    expect("response" in deep && deep.response.status).toBe(400);
    expect("response" in deep && ((await deep.response.json()) as { error: string }).error).toBe(
      "the request body nests more than 1000 levels deep",
    );
    // Depth in a string is not nesting.
    const inString = await readJsonBody(request(JSON.stringify({ text: "[".repeat(5000) })), 1024 * 1024);
    expect(inString).toStrictEqual({ value: { text: "[".repeat(5000) } });
  });

  it("fromUIMessages refuses a tool part nested too deep with an AgentError naming the part", () => {
    const messages = [
      { role: "user", parts: [{ type: "text", text: "hi" }] },
      {
        role: "assistant",
        parts: [
          { type: "tool-echo", toolCallId: "c1", state: "output-available", input: deepInput(5000), output: "ok" },
        ],
      },
    ];
    expect(() => fromUIMessages(messages)).toThrow(/message 1.*nests more than 992 levels deep/);
    (messages[1]!.parts[0] as { input: JsonObject }).input = deepInput(900);
    expect(fromUIMessages(messages).messages).toHaveLength(3);
  });

  it("a stored session refuses the message before it enters; the log goes on and loads back equal", async () => {
    const path = join(directory(), "s.jsonl");
    const session = await openSession(path);
    extendSession(session, { role: "user", content: "hi" });
    expect(() =>
      extendSession(session, { type: "tool_call", id: "c1", name: "echo", input: deepInput(200_000) }),
    ).toThrow('tool_call "c1" nests more than 992 levels deep');
    expect(() =>
      extendSessionBatch(session, [{ type: "tool_call", id: "c2", name: "echo", input: deepInput(1200) }]),
    ).toThrow('tool_call "c2" nests more than 992 levels deep');
    extendSession(session, { type: "tool_call", id: "c3", name: "echo", input: deepInput(900) });
    extendSession(session, { type: "tool_result", id: "c3", output: "ok" });
    await closeSession(session);
    expect(
      session.messages.map((message) => ("id" in message ? message.id : "role" in message && message.role)),
    ).toStrictEqual(["user", "c3", "c3"]);
    expect((await loadSession(path)).messages).toStrictEqual(session.messages);
    // A session no store listens to holds what its owner puts in it.
    const inMemory = initSession("s", "hi");
    extendSession(inMemory, { type: "tool_call", id: "c4", name: "echo", input: deepInput(1200) });
    expect(inMemory.messages).toHaveLength(3);
  });
});
