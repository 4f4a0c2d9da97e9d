import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Session } from "simple-agent-loop";
import { loadSession } from "simple-agent-loop/store";
import { isRestateAgentError } from "simple-agent-loop/restate";
import { expectEveryCallAnsweredOnce, withoutTs } from "../helpers.ts";
import { inProcessRun, systemPrompt } from "./baseline.ts";
import { startCluster, type Cluster } from "./cluster.ts";
import { waitFor } from "./restate-server.ts";

// A real restate-server on loopback, two worker processes behind a TCP proxy, sessions run
// through the ingress with the script agent (agent-script.ts).
let cluster: Cluster;
beforeAll(async () => {
  cluster = await startCluster();
}, 120_000);
afterAll(async () => {
  await cluster?.stop();
}, 60_000);

describe("restateAgent: runs through a real Restate server", () => {
  it("ends a session as the in-process loop does, each step once, and exports the file store's JSONL", async () => {
    const result = await cluster.client.run("plain", { system: systemPrompt, message: "plain" });
    expect(result).toStrictEqual({ outcome: "done", response: "Done with plain." });
    const session = await cluster.client.session("plain");
    expect(withoutTs(session)).toStrictEqual(withoutTs(await inProcessRun("plain")));
    expectEveryCallAnsweredOnce(session);
    expectTimestamps(session);
    const effects = cluster.effects();
    for (const line of [
      "model plain 0",
      "model plain 1",
      "model plain 2",
      "tool plain-a1",
      "tool plain-a2",
      "tool plain-b1",
    ])
      expect(effects.get(line), line).toBe(1);
    expect(await cluster.client.status("plain")).toStrictEqual({ state: "done" });

    const dir = mkdtempSync(join(tmpdir(), "simple-agent-loop-restate-export-"));
    try {
      writeFileSync(join(dir, "plain.jsonl"), await cluster.client.export("plain"));
      expect(await loadSession(join(dir, "plain.jsonl"))).toStrictEqual(session);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a follow-up run continues the session; the session can be read while a run goes", async () => {
    await cluster.client.run("follow", { system: systemPrompt, message: "follow" });
    cluster.hold("tool-again-b1");
    const { invocationId } = await cluster.client.start("follow", { message: "again" });
    await cluster.waitAt("tool-again-b1");
    // The turn that called the held tool is in the state, and the results before it.
    const running = await cluster.client.session("follow");
    expect(running.messages.at(-1)).toMatchObject({ type: "tool_call", id: "again-b1" });
    expect(running.messages.at(-2)).toMatchObject({ type: "tool_result", id: "again-a2" });
    expect(
      running.messages
        .filter((message) => "role" in message && message.role === "user")
        .map((message) => "content" in message && message.content),
    ).toStrictEqual(["follow", "again"]);
    expect(await cluster.client.status("follow")).toStrictEqual({ state: "running" });
    cluster.release("tool-again-b1");
    expect(await cluster.client.attach(invocationId)).toStrictEqual({ outcome: "done", response: "Done with again." });
    expectEveryCallAnsweredOnce(await cluster.client.session("follow"));
  });

  it("a Restate cancellation ends the run aborted, as an abort ends an in-process run", async () => {
    cluster.hold("tool-cancel-b1");
    const { invocationId } = await cluster.client.start("cancel", { system: systemPrompt, message: "cancel" });
    await cluster.waitAt("tool-cancel-b1");
    await cluster.client.cancel(invocationId);
    expect(await cluster.client.attach(invocationId)).toStrictEqual({ outcome: "aborted" });
    const session = await cluster.client.session("cancel");
    expect(withoutTs(session)).toStrictEqual(withoutTs(await inProcessRun("cancel", { abortAt: "cancel-b1" })));
    expect(session.messages.at(-1)).toMatchObject({ role: "assistant", content: "", stopReason: "aborted" });
    expectEveryCallAnsweredOnce(session);
    expect(await cluster.client.status("cancel")).toStrictEqual({ state: "aborted" });
    expectTimestamps(session);
  });

  it("a tool timeout is decided inside the tool's step: the same error result as in process", async () => {
    const result = await cluster.client.run("timeout", { system: systemPrompt, message: "timeout" });
    expect(result).toStrictEqual({ outcome: "done", response: "Done with timeout." });
    const session = await cluster.client.session("timeout");
    expect(withoutTs(session)).toStrictEqual(withoutTs(await inProcessRun("timeout")));
    expect(
      session.messages.find(
        (message) => "type" in message && message.type === "tool_result" && message.id === "timeout-t1",
      ),
    ).toMatchObject({
      output: 'Error: tool "sleepy" timed out after 100 ms',
      isError: true,
    });
  });

  it("refuses bad input with a clear error and changes nothing", async () => {
    await cluster.client.run("bad", { system: systemPrompt, message: "bad" });
    const before = await cluster.client.export("bad");
    const refusals: [() => Promise<unknown>, number, RegExp][] = [
      [() => cluster.client.session("nobody"), 404, /no session "nobody"/],
      [() => cluster.client.export("nobody"), 404, /no session "nobody"/],
      [() => cluster.client.status("nobody"), 404, /no session "nobody"/],
      [() => cluster.client.pendingApprovals("nobody"), 404, /no session "nobody"/],
      [() => cluster.client.resolveApproval("nobody", "x", { approved: true }), 404, /no session "nobody"/],
      [() => cluster.client.run("nobody", {}), 404, /no session "nobody" to resume/],
      [() => cluster.client.run("nobody", { system: "You help." }), 400, /a new session needs a message/],
      [() => cluster.client.run("bad", { message: 42 } as never), 400, /message must be a non-empty string/],
      [
        () => cluster.client.run("bad", { system: "another prompt", message: "hi" }),
        400,
        /system is accepted only for a new session/,
      ],
      [
        () => cluster.client.resolveApproval("bad", "bad-a1", { approved: true }),
        409,
        /"bad-a1" is not waiting for approval/,
      ],
      [
        () => cluster.client.resolveApproval("bad", "no-such-call", { approved: true }),
        404,
        /no tool call "no-such-call"/,
      ],
    ];
    for (const [call, status, message] of refusals) {
      const error = await call().then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(isRestateAgentError(error), String(message)).toBe(true);
      expect(error, String(message)).toMatchObject({ status, message: expect.stringMatching(message) });
    }
    expect(await cluster.client.export("bad")).toBe(before);
    await expect(cluster.client.status("nobody")).rejects.toMatchObject({ status: 404 });
  });

  it("sessions run on both workers, concurrently", async () => {
    const tags = Array.from({ length: 12 }, (_, index) => `many-${index}`);
    const results = await Promise.all(
      tags.map((tag) => cluster.client.run(tag, { system: systemPrompt, message: tag })),
    );
    expect(results.map((result) => result.outcome)).toStrictEqual(tags.map(() => "done"));
    await waitFor(
      () => cluster.proxy.connections.size >= 2,
      10_000,
      () => "only one worker was reached",
    );
  });
});

// Every message has a ts, in order.
function expectTimestamps(session: Session): void {
  const stamps = session.messages.map((message) => message.ts);
  expect(stamps.every((stamp) => typeof stamp === "string" && !Number.isNaN(Date.parse(stamp)))).toBe(true);
  expect([...stamps].sort()).toStrictEqual(stamps);
}
