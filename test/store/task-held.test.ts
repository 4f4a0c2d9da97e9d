import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { agentLoop, tool, type JsonObject, type ToolCallMessage } from "simple-agent-loop";
import { closeSession, loadSession, openSession } from "simple-agent-loop/store";
import { scriptedModel } from "simple-agent-loop/testing";
import { sleep } from "../helpers.ts";

const inputSchema: JsonObject = { type: "object", properties: { path: { type: "string" } }, required: ["path"] };
let directory: string;
afterEach(() => rmSync(directory, { recursive: true, force: true }));

// A task started after a call that waits for approval is held with that turn's results, and its
// record is updated where it is held when it settles: the log a store writes must load again.
describe("a background task held behind a call waiting for approval", () => {
  it("is written to the log as held, settles there, and the log loads with its outcome; a malformed held task is refused", async () => {
    directory = mkdtempSync(join(tmpdir(), "task-held-"));
    const path = join(directory, "session.jsonl");
    const deploy = tool({
      name: "deploy",
      description: "Deploys.",
      inputSchema,
      requireApproval: true,
      handler: () => "deployed",
    });
    const build = tool({
      name: "build",
      description: "Builds.",
      inputSchema,
      background: true,
      handler: async () => {
        await sleep(20);
        return "built";
      },
    });
    const session = await openSession(path);
    session.messages.push({ role: "user", content: "deploy, then build" });
    await agentLoop(
      scriptedModel([
        [
          { type: "tool_call", id: "d1", name: "deploy", input: { path: "." } },
          { type: "tool_call", id: "b1", name: "build", input: { path: "." } },
        ],
      ]),
      [deploy, build],
      session,
      { backgroundTasks: { whenIdle: "end" } },
    );
    const held = session.messages.find(
      (message): message is ToolCallMessage => "type" in message && message.type === "tool_call" && message.id === "b1",
    );
    expect(held?.heldResult?.task).toMatchObject({ status: "running" });
    await sleep(200);
    await closeSession(session);
    const loaded = await loadSession(path);
    expect(loaded.messages.find((message) => "id" in message && message.id === "b1")).toMatchObject({
      heldResult: { task: { status: "completed", output: "built" } },
    });
    const entries = readFileSync(path, "utf8")
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as { message?: { heldResult?: { task?: unknown } } });
    for (const entry of entries) if (entry.message?.heldResult?.task !== undefined) entry.message.heldResult.task = "x";
    writeFileSync(path, entries.map((entry) => `${JSON.stringify(entry)}\n`).join(""));
    await expect(loadSession(path)).rejects.toThrow(/"heldResult\.task" to be a task record/);
  });
});
