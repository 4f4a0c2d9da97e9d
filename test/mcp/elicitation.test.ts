import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterEach, describe, expect, it } from "vitest";
import {
  agentLoop,
  agentStream,
  initSession,
  isToolResult,
  type AgentEvent,
  type ElicitationRequest,
} from "simple-agent-loop";
import { connectMcp, type McpConnection, type McpElicitationHandler } from "simple-agent-loop/mcp";
import { createRunRegistry, elicitationRequestHandler } from "simple-agent-loop/http";
import { scriptedModel } from "simple-agent-loop/testing";
import { startHttpServer, type HttpFixture } from "./http-server.ts";
import { runTool } from "./helpers.ts";

const peopleSchema = {
  type: "object",
  properties: { people: { type: "integer", minimum: 1 }, note: { type: "string" } },
  required: ["people"],
};

// `book` asks how many people (a form); `login` asks the user to open a page (a URL). Each
// answers with what the client said, or the error it got.
function createBookingServer(): McpServer {
  const server = new McpServer({ name: "booking", version: "1.0.0" });
  server.registerTool("book", { description: "Books a table." }, async () => {
    const answer = await server.server.elicitInput({
      message: "How many people?",
      requestedSchema: peopleSchema as never,
    });
    return { content: [{ type: "text", text: JSON.stringify(answer) }] };
  });
  server.registerTool("login", { description: "Signs in to the booking site." }, async () => {
    const answer = await server.server.elicitInput({
      mode: "url",
      message: "Sign in to book.",
      url: "https://booking.example/login?session=1",
      elicitationId: "e-1",
    });
    return { content: [{ type: "text", text: JSON.stringify(answer) }] };
  });
  return server;
}

const opened: (McpConnection | HttpFixture)[] = [];
afterEach(async () => {
  for (const item of opened.splice(0).reverse()) await item.close();
});

async function connectBooking(
  options: Parameters<typeof connectMcp>[1],
): Promise<{ connection: McpConnection; fixture: HttpFixture }> {
  const fixture = await startHttpServer({ create: createBookingServer });
  opened.push(fixture);
  const connection = await connectMcp({ booking: { url: fixture.url } }, { trust: false, ...options });
  opened.push(connection);
  return { connection, fixture };
}

describe("MCP elicitation with a handler", () => {
  it("declares nothing without one: the server cannot ask", async () => {
    const { connection, fixture } = await connectBooking({});
    const result = await runTool(connection.tools, "book");
    expect(result.isError).toBe(true);
    expect(fixture.servers[0]!.server.getClientCapabilities()?.elicitation).toBeUndefined();
  });

  it("asks the handler with the form, the server and the call in flight; accepted content reaches the server", async () => {
    const asked: [ElicitationRequest, { server: string; toolCallId?: string }][] = [];
    const elicitation: McpElicitationHandler = (request, { server, toolCallId }) => {
      asked.push([request, { server, ...(toolCallId === undefined ? {} : { toolCallId }) }]);
      return { action: "accept", content: { people: 4 } };
    };
    const { connection, fixture } = await connectBooking({ elicitation });
    expect(fixture.servers[0]!.server.getClientCapabilities()?.elicitation).toStrictEqual({ form: {}, url: {} });
    const result = await runTool(connection.tools, "book");
    expect(result.output).toBe(JSON.stringify({ action: "accept", content: { people: 4 } }));
    expect(asked).toStrictEqual([
      [
        { mode: "form", message: "How many people?", requestedSchema: peopleSchema },
        { server: "booking", toolCallId: "call" },
      ],
    ]);
  });

  it("content that fails requestedSchema is never sent: the server gets invalid params naming the field", async () => {
    const { connection } = await connectBooking({
      elicitation: () => ({ action: "accept", content: { people: "four", secret: "kept" } }),
    });
    const result = await runTool(connection.tools, "book");
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.output)).toMatch(/-32602|[Ii]nvalid/);
    expect(JSON.stringify(result.output)).toMatch(/people/);
    expect(JSON.stringify(result.output)).not.toMatch(/four/);
  });

  it("a handler that throws, or answers nonsense, answers cancel; decline passes through", async () => {
    const throwing = await connectBooking({
      elicitation: () => {
        throw new Error("no terminal");
      },
    });
    expect((await runTool(throwing.connection.tools, "book")).output).toBe(JSON.stringify({ action: "cancel" }));
    const nonsense = await connectBooking({ elicitation: () => ({ action: "yes please" }) as never });
    expect((await runTool(nonsense.connection.tools, "book")).output).toBe(JSON.stringify({ action: "cancel" }));
    const declining = await connectBooking({ elicitation: async () => ({ action: "decline" }) });
    expect((await runTool(declining.connection.tools, "book")).output).toBe(JSON.stringify({ action: "decline" }));
  });

  it("a URL request reaches the handler as it is; an unanswered one is cancelled after elicitationTimeoutMs", async () => {
    const seen: ElicitationRequest[] = [];
    const { connection } = await connectBooking({
      elicitation: (request, { signal }) => {
        seen.push(request);
        return new Promise((resolve) => signal.addEventListener("abort", () => resolve({ action: "accept" })));
      },
      elicitationTimeoutMs: 200,
    });
    const result = await runTool(connection.tools, "login");
    expect(seen).toStrictEqual([
      {
        mode: "url",
        message: "Sign in to book.",
        url: "https://booking.example/login?session=1",
        elicitationId: "e-1",
      },
    ]);
    expect(result.output).toBe(JSON.stringify({ action: "cancel" }));
  });
});

describe('MCP elicitation as "events"', () => {
  const script = (): ReturnType<typeof scriptedModel> =>
    scriptedModel([
      [{ type: "tool_call", id: "call-1", name: "book", input: {} }],
      [{ role: "assistant", content: "booked" }],
    ]);

  it("becomes the run's elicitation-request event, answered with run.answerElicitation", async () => {
    const { connection } = await connectBooking({ elicitation: "events" });
    const run = agentStream(script(), connection.tools, initSession("system", "book a table"));
    const requests: AgentEvent[] = [];
    for await (const event of run) {
      if (event.type !== "elicitation-request") continue;
      requests.push(event);
      expect(run.answerElicitation("elicitation-unknown", { action: "cancel" })).toBe(false);
      expect(() => run.answerElicitation(event.id, { action: "maybe" } as never)).toThrow(/answerElicitation/);
      expect(run.answerElicitation(event.id, { action: "accept", content: { people: 2 } })).toBe(true);
    }
    expect(requests).toStrictEqual([
      {
        type: "elicitation-request",
        id: expect.any(String),
        server: "booking",
        toolCallId: "call-1",
        request: { mode: "form", message: "How many people?", requestedSchema: peopleSchema },
      },
    ]);
    const result = (await run.result).messages.find(isToolResult);
    expect(result?.output).toBe(JSON.stringify({ action: "accept", content: { people: 2 } }));
  });

  it("aborting the run cancels the question; a call outside any run is cancelled", async () => {
    const { connection } = await connectBooking({ elicitation: "events" });
    const run = agentStream(script(), connection.tools, initSession("system", "book a table"));
    for await (const event of run) if (event.type === "elicitation-request") run.abort();
    const session = await run.result;
    expect(session.messages.find(isToolResult)).toBeDefined();
    expect((await runTool(connection.tools, "book")).output).toBe(JSON.stringify({ action: "cancel" }));
  });

  it("agentLoop, which has no handle to answer with, cancels the question at once even with onEvent", async () => {
    const { connection } = await connectBooking({ elicitation: "events" });
    const events: AgentEvent[] = [];
    const session = await agentLoop(script(), connection.tools, initSession("system", "book a table"), {
      onEvent: (event) => void events.push(event),
    });
    expect(events.some((event) => event.type === "elicitation-request")).toBe(false);
    expect(session.messages.find(isToolResult)?.output).toBe(JSON.stringify({ action: "cancel" }));
  });

  it("a page answers through elicitationRequestHandler, with approvalRequestHandler's refusals", async () => {
    const { connection } = await connectBooking({ elicitation: "events" });
    const registry = createRunRegistry();
    const stream = agentStream(script(), connection.tools, initSession("system", "book a table"));
    const runId = registry.start(stream);
    const handler = elicitationRequestHandler({
      registry,
      authorize: (request) => request.headers.get("authorization") === "Bearer ok",
    });
    const post = (body: unknown, authorization = "Bearer ok", run = runId): Promise<Response> =>
      handler(
        new Request("http://app.example/answer", {
          method: "POST",
          headers: { "content-type": "application/json", authorization },
          body: JSON.stringify(body),
        }),
        run,
      );
    const answer = { id: "elicitation-1", answer: { action: "accept", content: { people: 3 } } };
    expect((await post(answer, "Bearer no")).status).toBe(403);
    expect((await post({ id: 1 })).status).toBe(400);
    expect((await post({ id: "elicitation-1", answer: { action: "maybe" } })).status).toBe(400);
    expect((await post(answer, "Bearer ok", "no-such-run")).status).toBe(404);
    expect((await handler(new Request("http://app.example/answer"), runId)).status).toBe(405);
    await expect.poll(async () => (await post(answer)).status, { timeout: 10_000 }).toBe(204);
    expect((await post(answer)).status).toBe(409);
    const result = (await stream.result).messages.find(isToolResult);
    expect(result?.output).toBe(JSON.stringify({ action: "accept", content: { people: 3 } }));
  });
});
