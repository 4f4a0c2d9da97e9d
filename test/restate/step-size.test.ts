import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { imagePart, tool, toolContent, type InvokeModel, type Session } from "simple-agent-loop";
import { restateAgent, restateAgentClient } from "simple-agent-loop/restate";
import { withoutTs } from "../helpers.ts";
import { serveInProcess, startRestateServer, type RestateServer } from "./restate-server.ts";

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
// A 2 MB screenshot (2.7 MB of base64) under a 1 MB step limit: journaled in chunks, kept as a blob.
const screenshotBytes = Uint8Array.from({ length: 2 * 1024 * 1024 }, (_, index) => (index * 7919) % 251);
const screenshot = imagePart(screenshotBytes, "image/png");
let screenshotRuns = 0;
const shoot = tool({
  name: "shoot",
  description: "Screenshots the page.",
  inputSchema: { type: "object", properties: {} },
  handler: () => {
    screenshotRuns++;
    return toolContent([{ type: "text", text: "screenshot of /" }, screenshot]);
  },
});
// What the model was shown of the image, each call.
const shownImages: (string | undefined)[] = [];
const lookingModel: InvokeModel = (_tools, session) => {
  const result = session.messages.find((message) => "type" in message && message.type === "tool_result");
  if (result === undefined) return [{ type: "tool_call", id: "s1", name: "shoot", input: {} }];
  const image = "content" in result ? result.content?.find((part) => part.type === "image") : undefined;
  shownImages.push(image !== undefined && "data" in image ? image.data : undefined);
  return [{ role: "assistant", content: "a page" }];
};

let server: RestateServer;
let endpoint: { close: () => Promise<void> } | undefined;
beforeAll(async () => {
  server = await startRestateServer();
  const close = await serveInProcess(server, [
    restateAgent({ name: "hugeTool", invokeModel: toolModel, tools: [huge], maxStepBytes }),
    restateAgent({ name: "hugeAnswer", invokeModel: chattyModel, maxStepBytes }),
    restateAgent({ name: "hugeError", invokeModel: failingModel, tools: [failing], maxStepBytes: 2048 }),
    restateAgent({ name: "screenshot", invokeModel: lookingModel, tools: [shoot], maxStepBytes: 1024 * 1024 }),
  ]);
  endpoint = { close };
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

  it("a tool result with a 2 MB image works under a 1 MB maxStepBytes: chunked in the journal, a blob in the state", async () => {
    const client = restateAgentClient({ url: server.ingressUrl, name: "screenshot" });
    expect(await client.run("s", { message: "what is on the page?" })).toStrictEqual({
      outcome: "done",
      response: "a page",
    });
    expect(screenshotRuns).toBe(1);
    // The model was shown the whole image, byte for byte.
    expect(shownImages).toHaveLength(1);
    expect(shownImages[0] === screenshot.data).toBe(true);
    // The session read back from the object's state has it too, as the tool returned it.
    const session = withoutTs(await client.session("s"));
    expect(session[2]).toMatchObject({ type: "tool_result", id: "s1", output: "screenshot of /" });
    const parts = (session[2] as { content?: { type: string; data?: string }[] }).content;
    expect(parts?.map((part) => part.type)).toStrictEqual(["text", "image"]);
    expect(parts?.[1]?.data === screenshot.data).toBe(true);
    // A second run in the same session reads the image back from the state's blob.
    expect(await client.run("s", { message: "and now?" })).toStrictEqual({ outcome: "done", response: "a page" });
    expect(screenshotRuns).toBe(1);
    expect(shownImages[1] === screenshot.data).toBe(true);
  }, 120_000);
});
