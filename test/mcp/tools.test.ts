import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentLoop, initSession, isToolResult, toolSchemas } from "simple-agent-loop";
import { connectMcp, isMcpConfigError, type McpConnection } from "simple-agent-loop/mcp";
import { scriptedModel } from "simple-agent-loop/testing";
import { startHttpServer, type HttpFixture } from "./http-server.ts";
import { runTool, schemaServer, stdioServer } from "./helpers.ts";

describe("MCP tools over stdio", () => {
  let connection: McpConnection;
  beforeAll(async () => {
    connection = await connectMcp({ local: stdioServer() });
  });
  afterAll(() => connection.close());

  it("lists each MCP tool as a loop tool with its name, description and input schema", () => {
    expect(connection.tools.map((tool) => tool.name)).toStrictEqual([
      "echo",
      "add",
      "fail",
      "media",
      "slow",
      "pid",
      "crash",
      "hangup",
      "reconnect",
      "dotted_name",
    ]);
    expect(toolSchemas(connection.tools)[0]).toStrictEqual({
      name: "echo",
      description: "Echo the text back.",
      input_schema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    });
    expect(toolSchemas(connection.tools)[2]).toStrictEqual({
      name: "fail",
      description: "Always fails.",
      input_schema: { type: "object", properties: {} },
    });
    // Only a tool the server marks read-only may start while the model is still streaming.
    expect(connection.tools.map((tool) => tool.eager)).toStrictEqual([
      undefined,
      false,
      false,
      false,
      false,
      false,
      false,
      false,
      false,
      false,
    ]);
    expect(Object.keys(connection.clients)).toStrictEqual(["local"]);
  });

  it("runs an MCP tool in a full agent loop and puts its result in the session", async () => {
    const model = scriptedModel([
      [{ type: "tool_call", id: "call-1", name: "echo", input: { text: "hello" } }],
      [{ role: "assistant", content: "done" }],
    ]);
    const session = await agentLoop(model, connection.tools, initSession("system", "say hello"));
    const result = session.messages.find(isToolResult);
    expect(result).toMatchObject({ type: "tool_result", id: "call-1", output: "echo: hello" });
    expect(result).not.toHaveProperty("isError");
    expect(model.toolsSeen[0]?.find((tool) => tool.name === "echo")).toStrictEqual(toolSchemas(connection.tools)[0]);
    expect(model.calls[1]?.messages.at(-1)).toMatchObject({ type: "tool_result", output: "echo: hello" });
  });

  it("gives structuredContent when the server sends it, and a result with an image as content parts the model is shown", async () => {
    expect(await runTool(connection.tools, "add", { a: 2, b: 3 })).toStrictEqual({
      type: "tool_result",
      id: "call",
      output: { sum: 5 },
    });
    const resource = JSON.stringify({
      type: "resource",
      uri: "file:///notes.txt",
      mimeType: "text/plain",
      text: "remember",
    });
    const link = JSON.stringify({
      type: "resource_link",
      uri: "file:///report.pdf",
      name: "report",
      mimeType: "application/pdf",
    });
    expect(await runTool(connection.tools, "media")).toStrictEqual({
      type: "tool_result",
      id: "call",
      output: ["a chart", resource, link].join("\n"),
      content: [
        { type: "text", text: "a chart" },
        { type: "image", mediaType: "image/png", data: Buffer.from("not really a png").toString("base64") },
        { type: "text", text: resource },
        { type: "text", text: link },
      ],
    });
  });

  it("turns an isError result into an error tool result carrying the server's text", async () => {
    const model = scriptedModel([
      [{ type: "tool_call", id: "call-1", name: "fail", input: {} }],
      [{ role: "assistant", content: "sorry" }],
    ]);
    const session = await agentLoop(model, connection.tools, initSession("system", "try"));
    const { ts: _ts, ...result } = session.messages.find(isToolResult)!;
    expect(result).toStrictEqual({
      type: "tool_result",
      id: "call-1",
      output: "Error: the disk is on fire",
      isError: true,
    });
  });

  it("calls a sanitized name by the server's own name", async () => {
    expect(await runTool(connection.tools, "dotted_name")).toStrictEqual({
      type: "tool_result",
      id: "call",
      output: "ok",
    });
  });
});

describe("MCP tools over Streamable HTTP", () => {
  let server: HttpFixture;
  let connection: McpConnection;
  beforeAll(async () => {
    server = await startHttpServer();
    connection = await connectMcp({ remote: { url: server.url, headers: { Authorization: "Bearer secret" } } });
  });
  afterAll(async () => {
    await connection.close();
    await server.close();
  });

  it("lists the tools and sends the configured headers", () => {
    expect(toolSchemas(connection.tools).find((tool) => tool.name === "add")).toStrictEqual({
      name: "add",
      description: "Add two numbers.",
      input_schema: {
        type: "object",
        properties: { a: { type: "number" }, b: { type: "number" } },
        required: ["a", "b"],
      },
    });
    expect(server.headers.length).toBeGreaterThan(0);
    for (const headers of server.headers) expect(headers.authorization).toBe("Bearer secret");
  });

  it("runs an MCP tool in a full agent loop", async () => {
    const model = scriptedModel([
      [{ type: "tool_call", id: "call-1", name: "add", input: { a: 40, b: 2 } }],
      [{ role: "assistant", content: "42" }],
    ]);
    const session = await agentLoop(model, connection.tools, initSession("system", "add"));
    expect(session.messages.find(isToolResult)).toMatchObject({ id: "call-1", output: { sum: 42 } });
  });

  it("rejects invalid input with the loop's schema validation, without calling the server", async () => {
    const callsBefore = server.methods.filter((method) => method === "tools/call").length;
    const result = await runTool(connection.tools, "add", { a: "forty", b: 2 });
    expect(result).toMatchObject({ type: "tool_result", id: "call", isError: true });
    expect(result.output).toMatch(/^Error: invalid input for tool "add": a/);
    expect(server.methods.filter((method) => method === "tools/call")).toHaveLength(callsBefore);
  });

  it("turns an isError result into an error tool result", async () => {
    expect(await runTool(connection.tools, "fail")).toStrictEqual({
      type: "tool_result",
      id: "call",
      output: "Error: the disk is on fire",
      isError: true,
    });
  });
});

describe("tool names across servers", () => {
  let server: HttpFixture;
  beforeAll(async () => {
    server = await startHttpServer();
  });
  afterAll(() => server.close());

  it("refuses two servers with the same tool name, suggesting prefix: true", async () => {
    const connecting = connectMcp({ local: stdioServer(), remote: { url: server.url } });
    await expect(connecting).rejects.toSatisfy(isMcpConfigError);
    await expect(connecting).rejects.toThrow(
      'MCP servers "local" and "remote" both have a tool named "echo"; pass { prefix: true }',
    );
  });

  it("refuses a server tool named as one the loop offers itself; prefix: true takes it", async () => {
    for (const name of ["search_tools", "recall_output", "run_code"]) {
      const connecting = connectMcp({ shadow: schemaServer(name) });
      await expect(connecting).rejects.toSatisfy(isMcpConfigError);
      await expect(connecting).rejects.toThrow(
        `MCP tool "${name}" of server "shadow" would be named "${name}", the name of a tool the loop offers itself; pass { prefix: true }`,
      );
    }
    await using connection = await connectMcp({ shadow: schemaServer("search_tools") }, { prefix: true });
    expect(connection.tools.map((tool) => tool.name)).toContain("shadow__search_tools");
  });

  it("names tools <server>__<tool> with prefix: true", async () => {
    await using connection = await connectMcp(
      { "local files": stdioServer(), remote: { url: server.url } },
      { prefix: true },
    );
    const names = connection.tools.map((tool) => tool.name);
    expect(names.slice(0, 2)).toStrictEqual(["local_files__echo", "local_files__add"]);
    expect(names).toContain("local_files__dotted_name");
    expect(names).toContain("remote__echo");
    for (const name of names) expect(name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    expect(await runTool(connection.tools, "remote__echo", { text: "hi" })).toMatchObject({ output: "echo: hi" });
    expect(await runTool(connection.tools, "local_files__echo", { text: "ho" })).toMatchObject({ output: "echo: ho" });
  });
});

describe("input schemas as servers send them", () => {
  let connection: McpConnection;
  beforeAll(async () => {
    connection = await connectMcp({ schemas: schemaServer() });
  });
  afterAll(() => connection.close());

  it("gives an object schema without properties an empty one (OpenAI rejects it otherwise)", async () => {
    expect(toolSchemas(connection.tools)[0]).toStrictEqual({
      name: "no_parameters",
      description: "Takes nothing.",
      input_schema: { type: "object", properties: {} },
    });
    expect(await runTool(connection.tools, "no_parameters")).toStrictEqual({
      type: "tool_result",
      id: "call",
      output: "{}",
    });
  });

  it("keeps $ref and $defs, and validates input through them", async () => {
    expect(toolSchemas(connection.tools)[1]?.input_schema).toStrictEqual({
      type: "object",
      properties: { item: { $ref: "#/$defs/Item" } },
      required: ["item"],
      $defs: { Item: { type: "object", properties: { id: { type: "integer" } }, required: ["id"] } },
    });
    expect(await runTool(connection.tools, "referenced", { item: { id: 7 } })).toStrictEqual({
      type: "tool_result",
      id: "call",
      output: '{"item":{"id":7}}',
    });
    const invalid = await runTool(connection.tools, "referenced", { item: { id: "seven" } });
    expect(invalid).toMatchObject({ isError: true });
    expect(invalid.output).toMatch(/^Error: invalid input for tool "referenced": item\.id: /);
  });
});

describe("MCP tools deferred per server", () => {
  it("a server with deferred: true has its tools loaded by search_tools, then called through the loop", async () => {
    const connection = await connectMcp({ local: { ...stdioServer(), deferred: true } });
    try {
      expect(connection.tools.every((tool) => tool.deferred === true)).toBe(true);
      const sent: string[][] = [];
      const model = scriptedModel([
        [{ type: "tool_call", id: "s1", name: "search_tools", input: { query: "echo text back" } }],
        [{ type: "tool_call", id: "e1", name: "echo", input: { text: "hi" } }],
        [{ role: "assistant", content: "done" }],
      ]);
      const session = await agentLoop(
        (tools, current, context) => {
          sent.push(tools.map((tool) => tool.name));
          return model(tools, current, context);
        },
        connection.tools,
        initSession("system", "echo hi"),
      );
      expect(sent[0]).toStrictEqual(["search_tools"]);
      expect(sent[1]).toStrictEqual(["search_tools", "echo"]);
      expect(session.messages.filter(isToolResult).at(-1)!.output).toBe("echo: hi");
    } finally {
      await connection.close();
    }
  });
});
