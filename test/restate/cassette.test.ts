import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tool, type InvokeModel, type Session } from "simple-agent-loop";
import { restateAgent, restateAgentClient } from "simple-agent-loop/restate";
import { assertCassetteUsed, cassette } from "simple-agent-loop/testing";
import { withoutTs } from "../helpers.ts";
import { serveInProcess, startRestateServer, type RestateServer } from "./restate-server.ts";

// A cassette recorded by one durable run replays another through a real Restate server: the
// model is never called (it throws), the tool's handler never runs (`tools: "record"`), and the
// session the replay leaves is the recorded one.
const dir = mkdtempSync(join(tmpdir(), "sal-restate-cassette-"));
const path = join(dir, "durable.jsonl");
const calls = { model: 0, tool: 0 };
const lookup = tool({
  name: "lookup",
  description: "Looks a key up.",
  inputSchema: { type: "object", properties: { key: { type: "string" } }, required: ["key"] },
  handler: (input) => {
    calls.tool++;
    return `value of ${String(input.key)}`;
  },
});
const results = (session: Session): number =>
  session.messages.filter((message) => "type" in message && message.type === "tool_result").length;
const liveModel: InvokeModel = (_tools, session) => {
  calls.model++;
  return results(session) === 0
    ? [
        { type: "tool_call", id: "k1", name: "lookup", input: { key: "alpha" } },
        { type: "tool_call", id: "k2", name: "lookup", input: { key: "beta" } },
      ]
    : [{ role: "assistant", content: `found ${results(session)}` }];
};
const offline: InvokeModel = () => {
  throw new Error("the network was reached while replaying");
};
const recording = cassette(liveModel, { path, mode: "record", tools: "record" });

let server: RestateServer;
const endpoints: (() => Promise<void>)[] = [];
beforeAll(async () => {
  server = await startRestateServer();
}, 120_000);
afterAll(async () => {
  for (const close of endpoints) await close();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

async function serve(agent: ReturnType<typeof restateAgent>): Promise<void> {
  endpoints.push(await serveInProcess(server, [agent]));
}

describe("cassettes through a Restate durable run", () => {
  it("records a durable run, then replays it in another without the model or the tools", async () => {
    await serve(restateAgent({ name: "recorder", invokeModel: recording, tools: [lookup] }));
    const recorder = restateAgentClient({ url: server.ingressUrl, name: "recorder" });
    const input = { system: "You look things up.", message: "look up alpha and beta" };
    expect(await recorder.run("s1", input)).toStrictEqual({ outcome: "done", response: "found 2" });
    expect(calls).toStrictEqual({ model: 2, tool: 2 });
    const recorded = readFileSync(path, "utf8").trim().split("\n");
    // Two model calls and two tool calls, each one entry.
    expect(recorded).toHaveLength(4);
    assertCassetteUsed(recording);

    // A cassette reads its file when it is made: the replaying worker starts after the recording.
    const replaying = cassette(offline, { path, mode: "replay", tools: "record" });
    await serve(restateAgent({ name: "replayer", invokeModel: replaying, tools: [lookup] }));
    const replayer = restateAgentClient({ url: server.ingressUrl, name: "replayer" });
    expect(await replayer.run("s1", input)).toStrictEqual({ outcome: "done", response: "found 2" });
    expect(calls).toStrictEqual({ model: 2, tool: 2 });
    assertCassetteUsed(replaying);
    expect(withoutTs(await replayer.session("s1"))).toStrictEqual(withoutTs(await recorder.session("s1")));
  });
});
