import { describe, expect, it } from "vitest";
import { connectMcp } from "simple-agent-loop/mcp";
import { startHttpServer } from "./http-server.ts";
import { runTool } from "./helpers.ts";

describe("a stateless Streamable HTTP server (no Mcp-Session-Id, GET and DELETE answered 405)", () => {
  it("connects, calls and closes without error; the GET is not retried and close waits for no session", async () => {
    const fixture = await startHttpServer({ stateless: true });
    try {
      const errors: unknown[] = [];
      const connection = await connectMcp({ remote: { url: fixture.url } });
      expect(connection.tools.map((tool) => tool.name)).toContain("echo");
      const result = await runTool(connection.tools, "echo", { text: "hi" });
      expect(result).toStrictEqual({ type: "tool_result", id: "call", output: "echo: hi" });
      expect(connection.serverInfo("remote").protocolVersion).toBe("2025-11-25");
      // Time for a retry loop to show itself, were there one.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      const started = performance.now();
      await connection.close().catch((error: unknown) => errors.push(error));
      expect(performance.now() - started).toBeLessThan(1_900);
      expect(errors).toStrictEqual([]);
      expect(fixture.headers.every((headers) => headers["mcp-session-id"] === undefined)).toBe(true);
      expect(fixture.requests.filter((method) => method === "GET").length).toBeLessThanOrEqual(1);
      expect(fixture.requests.filter((method) => method === "DELETE")).toStrictEqual([]);
    } finally {
      await fixture.close();
    }
  });
});
