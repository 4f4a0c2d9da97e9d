import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { SubscribeRequestSchema, UnsubscribeRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { connectMcp, type McpConnection, type McpResourceUpdate } from "simple-agent-loop/mcp";
import { startHttpServer, type HttpFixture } from "./http-server.ts";
import { runTool, stdioServer } from "./helpers.ts";

const png = Buffer.from("not really a png").toString("base64");
const pdf = Buffer.from("%PDF-1.7 not really").toString("base64");

// Resources of three kinds, a subscription the test triggers, and a prompt with an argument.
function createLibraryServer(subscribed: string[]): McpServer {
  const server = new McpServer({ name: "library", version: "1.0.0" });
  server.registerResource("notes", "file:///notes.txt", { mimeType: "text/plain" }, (uri) => ({
    contents: [{ uri: uri.href, mimeType: "text/plain", text: "remember the milk" }],
  }));
  server.registerResource("chart", "file:///chart.png", { mimeType: "image/png" }, (uri) => ({
    contents: [{ uri: uri.href, mimeType: "image/png", blob: png }],
  }));
  server.registerResource("report", "file:///docs/report.pdf", { mimeType: "application/pdf" }, (uri) => ({
    contents: [{ uri: uri.href, mimeType: "application/pdf", blob: pdf }],
  }));
  server.registerPrompt(
    "review",
    { description: "Review a file.", argsSchema: { path: z.string().describe("the file") } },
    ({ path }) => ({
      description: `Review ${path}`,
      messages: [
        { role: "user", content: { type: "text", text: `Please review ${path}.` } },
        { role: "assistant", content: { type: "text", text: "Sure, send it." } },
        { role: "user", content: { type: "image", data: png, mimeType: "image/png" } },
      ],
    }),
  );
  server.server.registerCapabilities({ resources: { subscribe: true } });
  server.server.setRequestHandler(SubscribeRequestSchema, async (request) => {
    subscribed.push(request.params.uri);
    // Tell the subscriber at once that it changed, as a server would on its next change.
    setTimeout(() => void server.server.sendResourceUpdated({ uri: request.params.uri }), 50);
    return {};
  });
  server.server.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
    subscribed.push(`-${request.params.uri}`);
    return {};
  });
  return server;
}

describe("MCP resources and prompts", () => {
  let fixture: HttpFixture;
  let connection: McpConnection;
  const subscribed: string[] = [];
  beforeAll(async () => {
    fixture = await startHttpServer({ create: () => createLibraryServer(subscribed) });
    connection = await connectMcp(
      { library: { url: fixture.url }, local: stdioServer() },
      { resources: "tools", trust: false },
    );
  });
  afterAll(async () => {
    await connection.close();
    await fixture.close();
  });

  it("lists the resources of every server that has them, or of one", async () => {
    const expected = [
      { server: "library", uri: "file:///notes.txt", name: "notes", mimeType: "text/plain" },
      { server: "library", uri: "file:///chart.png", name: "chart", mimeType: "image/png" },
      { server: "library", uri: "file:///docs/report.pdf", name: "report", mimeType: "application/pdf" },
    ];
    expect(await connection.listResources()).toStrictEqual(expected);
    expect(await connection.listResources("library")).toStrictEqual(expected);
    await expect(connection.listResources("nowhere")).rejects.toThrow(/no server named "nowhere"/);
    await expect(connection.readResource("nowhere", "file:///notes.txt")).rejects.toThrow(/"nowhere"/);
  });

  it("reads a resource, and gives it as content parts: text, images as images, other blobs as files", async () => {
    expect(await connection.readResource("library", "file:///notes.txt")).toStrictEqual({
      contents: [{ uri: "file:///notes.txt", mimeType: "text/plain", text: "remember the milk" }],
    });
    expect(await connection.resourceParts("library", "file:///notes.txt")).toStrictEqual([
      { type: "text", text: "remember the milk" },
    ]);
    expect(await connection.resourceParts("library", "file:///chart.png")).toStrictEqual([
      { type: "image", mediaType: "image/png", data: png },
    ]);
    expect(await connection.resourceParts("library", "file:///docs/report.pdf")).toStrictEqual([
      { type: "file", mediaType: "application/pdf", data: pdf, filename: "report.pdf" },
    ]);
  });

  it("subscribes: onUpdated hears resources/updated; the unsubscribe function unsubscribes", async () => {
    const updates: McpResourceUpdate[] = [];
    const unsubscribe = await connection.subscribeResource("library", "file:///notes.txt", (update) =>
      updates.push(update),
    );
    await expect
      .poll(() => updates, { timeout: 10_000 })
      .toStrictEqual([{ server: "library", uri: "file:///notes.txt" }]);
    await unsubscribe();
    expect(subscribed).toStrictEqual(["file:///notes.txt", "-file:///notes.txt"]);
  });

  it("resources: 'tools' adds list_resources and read_resource; images come back as content parts", async () => {
    const names = connection.tools.map((tool) => tool.name);
    expect(names.slice(-2)).toStrictEqual(["list_resources", "read_resource"]);
    const listed = await runTool(connection.tools, "list_resources", { server: "library" });
    expect(listed.output).toStrictEqual(await connection.listResources("library"));
    const read = await runTool(connection.tools, "read_resource", { server: "library", uri: "file:///chart.png" });
    expect(read.content).toStrictEqual([{ type: "image", mediaType: "image/png", data: png }]);
    const unknown = await runTool(connection.tools, "read_resource", { server: "nowhere", uri: "x" });
    expect(unknown.isError).toBe(true);
  });

  it("lists prompts and fills one in as session messages", async () => {
    expect(await connection.listPrompts()).toStrictEqual([
      {
        server: "library",
        name: "review",
        description: "Review a file.",
        arguments: [{ name: "path", description: "the file", required: true }],
      },
    ]);
    expect(await connection.getPrompt("library", "review", { path: "a.ts" })).toStrictEqual({
      description: "Review a.ts",
      messages: [
        { role: "user", content: "Please review a.ts." },
        { role: "assistant", content: "Sure, send it." },
        { role: "user", content: [{ type: "image", mediaType: "image/png", data: png }] },
      ],
    });
    await expect(connection.getPrompt("nowhere", "review")).rejects.toThrow(/"nowhere"/);
  });
});
