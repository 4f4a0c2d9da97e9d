import * as restate from "@restatedev/restate-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tool, type InvokeModel, type Session } from "simple-agent-loop";
import { restateAgent, restateAgentClient } from "simple-agent-loop/restate";
import { withoutTs } from "../helpers.ts";
import { startRestateServer, type RestateServer } from "./restate-server.ts";

// A step larger than the server accepts would be refused and run again, forever: over
// `maxStepBytes` a tool's output becomes an error result (the tool ran once) and a model's answer
// fails the run.
const maxStepBytes = 64 * 1024;
let toolRuns = 0;
const results = (session: Session): number =>
  session.messages.filter((message) => "type" in message && message.type === "tool_result").length;
const huge = tool({
  name: "huge",
  description: "Returns too much.",
  inputSchema: { type: "object", properties: {} },
  handler: () => {
    toolRuns++;
    return "x".repeat(100 * 1024);
  },
});
const toolModel: InvokeModel = (_tools, session) =>
  results(session) === 0
    ? [{ type: "tool_call", id: "h1", name: "huge", input: {} }]
    : [{ role: "assistant", content: "noted" }];
let failingRuns = 0;
const failing = tool({
  name: "failing",
  description: "Fails with a long text.",
  inputSchema: { type: "object", properties: {} },
  handler: () => {
    failingRuns++;
    throw new Error("z".repeat(100 * 1024));
  },
});
const failingModel: InvokeModel = (_tools, session) =>
  results(session) === 0
    ? [{ type: "tool_call", id: "f1", name: "failing", input: {} }]
    : [{ role: "assistant", content: "noted" }];
const chattyModel: InvokeModel = () => [{ role: "assistant", content: "y".repeat(100 * 1024) }];

let server: RestateServer;
let endpoint: { close: () => Promise<void> } | undefined;
beforeAll(async () => {
  server = await startRestateServer();
  const http2 = await import("node:http2");
  const handler = restate
    .endpoint()
    .setLogger(() => undefined)
    .bind(restateAgent({ name: "hugeTool", invokeModel: toolModel, tools: [huge], maxStepBytes }))
    .bind(restateAgent({ name: "hugeAnswer", invokeModel: chattyModel, maxStepBytes }))
    .bind(restateAgent({ name: "hugeError", invokeModel: failingModel, tools: [failing], maxStepBytes: 2048 }))
    .http2Handler();
  const listener = http2.createServer(handler);
  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
  endpoint = { close: () => new Promise<void>((resolve) => listener.close(() => resolve())) };
  await server.register(`http://127.0.0.1:${(listener.address() as { port: number }).port}`);
}, 120_000);
afterAll(async () => {
  await endpoint?.close();
  await server?.stop();
}, 60_000);

describe("restateAgent: steps too large to journal", () => {
  it("a tool output over maxStepBytes is an error result; the tool ran once", async () => {
    const client = restateAgentClient({ url: server.ingressUrl, name: "hugeTool" });
    expect(await client.run("s", { message: "go" })).toStrictEqual({ outcome: "done", response: "noted" });
    expect(toolRuns).toBe(1);
    expect(withoutTs(await client.session("s"))[2]).toStrictEqual({
      type: "tool_result",
      id: "h1",
      output: expect.stringMatching(
        new RegExp(
          `^Error: the tool's output is too large to journal \\(\\d+ bytes, over maxStepBytes ${maxStepBytes}\\)$`,
        ),
      ),
      isError: true,
    });
  });

  it("an error text over maxStepBytes is cut to fit: the step is journaled and the tool ran once", async () => {
    const client = restateAgentClient({ url: server.ingressUrl, name: "hugeError" });
    expect(await client.run("s", { message: "go" })).toStrictEqual({ outcome: "done", response: "noted" });
    expect(failingRuns).toBe(1);
    const result = withoutTs(await client.session("s"))[2] as { output: string; isError: boolean };
    expect(result).toMatchObject({
      type: "tool_result",
      id: "f1",
      isError: true,
      output: expect.stringMatching(/^Error: z+… \(cut to fit maxStepBytes\)$/),
    });
    expect(Buffer.byteLength(result.output)).toBeLessThan(2048);
  }, 60_000);

  it("a model answer over maxStepBytes fails the run with a clear error", async () => {
    const client = restateAgentClient({ url: server.ingressUrl, name: "hugeAnswer" });
    await expect(client.run("s", { message: "go" })).rejects.toMatchObject({
      status: 500,
      message: expect.stringMatching(/model's answer is too large to journal/),
    });
    expect(await client.status("s")).toMatchObject({ state: "failed" });
  });
});
