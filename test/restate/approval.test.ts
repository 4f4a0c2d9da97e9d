import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentLoop, initSession, resolveApproval, type Session } from "simple-agent-loop";
import { isRestateAgentError } from "simple-agent-loop/restate";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expectEveryCallAnsweredOnce, withoutTs } from "../helpers.ts";
import { scriptModel, scriptTools } from "./agent-script.ts";
import { systemPrompt } from "./baseline.ts";
import { startCluster, type Cluster } from "./cluster.ts";
import { waitFor } from "./restate-server.ts";
import { startWorker } from "./worker-process.ts";

// Approvals are awakeables: the paused run's invocation suspends (no worker holds it), survives a
// restart of every process, and resumes when a decision arrives through `resolveApproval`.
let cluster: Cluster;
beforeAll(async () => {
  cluster = await startCluster();
}, 120_000);
afterAll(async () => {
  await cluster?.stop();
}, 60_000);

describe("restateAgent: human approval", () => {
  it("pauses; after the worker and the server restart, the approval resumes the run to its end", async () => {
    const tag = "approval-restart";
    const { invocationId } = await cluster.client.start(tag, { system: systemPrompt, message: tag });
    await waitPaused(tag);
    expect(await cluster.client.pendingApprovals(tag)).toStrictEqual([
      { id: `${tag}-c1`, path: `${tag}-c1`, name: "deploy", input: { target: "prod" } },
    ]);
    expect(await cluster.client.status(tag)).toStrictEqual({ state: "paused" });
    expect((await cluster.client.session(tag)).messages.at(-1)).toMatchObject({
      id: `${tag}-c1`,
      approval: { status: "pending" },
    });

    // Every process goes: the workers, then the server (SIGKILL); new ones come up.
    for (const worker of [...cluster.workers]) await cluster.killWorker(worker.pid);
    await cluster.server.restart();
    const worker = await startWorker(cluster.dir);
    cluster.workers.push(worker);
    cluster.proxy.upstreams.push(worker.port);
    expect(await cluster.client.pendingApprovals(tag)).toStrictEqual([
      { id: `${tag}-c1`, path: `${tag}-c1`, name: "deploy", input: { target: "prod" } },
    ]);

    expect(await cluster.client.resolveApproval(tag, `${tag}-c1`, { approved: true })).toStrictEqual({
      resolved: [`${tag}-c1`],
    });
    await expectRefused(
      cluster.client.resolveApproval(tag, `${tag}-c1`, { approved: true }),
      409,
      /already decided|not waiting/,
    );
    expect(await cluster.client.attach(invocationId)).toStrictEqual({ outcome: "done", response: `Done with ${tag}.` });
    const session = await cluster.client.session(tag);
    expect(withoutTs(session)).toStrictEqual(withoutTs(await inProcessApproval(tag, { approved: true })));
    expect(
      session.messages.find(
        (message) => "type" in message && message.type === "tool_result" && message.id === `${tag}-c1`,
      ),
    ).toMatchObject({ output: "deployed to prod" });
    expect(cluster.effects().get(`tool ${tag}-c1`)).toBe(1);
    expect(await cluster.client.pendingApprovals(tag)).toStrictEqual([]);
  });

  it("refuses malformed payloads, unknown or answered calls and a second decision, changing nothing", async () => {
    const tag = "approval-bad";
    const { invocationId } = await cluster.client.start(tag, { system: systemPrompt, message: tag });
    await waitPaused(tag);
    const before = await cluster.client.export(tag);
    const call = `${tag}-c1`;
    for (const payload of [
      {},
      { id: call },
      { id: call, approved: "yes" },
      { id: call, approved: true, reason: 5 },
      [],
      "approve",
      [
        { id: call, approved: true },
        { id: call, approved: false },
      ],
    ]) {
      const reply = await fetch(`${cluster.server.ingressUrl}/agent/${tag}/resolveApproval`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(payload),
      });
      expect(reply.status, JSON.stringify(payload)).toBe(400);
      expect(await reply.text(), JSON.stringify(payload)).toMatch(/resolveApproval: /);
    }
    await expectRefused(
      cluster.client.resolveApproval(tag, "no-such-call", { approved: true }),
      404,
      /no tool call "no-such-call"/,
    );
    await expectRefused(
      cluster.client.resolveApproval(tag, `${tag}-a1`, { approved: true }),
      409,
      /"approval-bad-a1" is not waiting for approval/,
    );
    // A list with one bad id changes nothing, not even for the good one.
    await expectRefused(
      cluster.client.resolveApproval(tag, [call, "no-such-call"], { approved: true }),
      404,
      /no tool call "no-such-call"/,
    );
    expect(await cluster.client.export(tag)).toBe(before);
    expect(await cluster.client.pendingApprovals(tag)).toStrictEqual([
      { id: call, path: call, name: "deploy", input: { target: "prod" } },
    ]);

    // Two decisions at once: exactly one gets through, the other is refused.
    const gatesBefore = (await forgetting()).length;
    const [first, second] = await Promise.allSettled(
      [0, 1].map(() => cluster.client.resolveApproval(tag, call, { approved: false, reason: "not on Fridays" })),
    );
    const outcomes = [first!, second!];
    expect(outcomes.filter((outcome) => outcome.status === "fulfilled").map((outcome) => outcome.value)).toStrictEqual([
      { resolved: [call] },
    ]);
    const refused = outcomes.find((outcome) => outcome.status === "rejected")!.reason as unknown;
    expect(refused).toMatchObject({ status: 409, message: expect.stringMatching(/already decided|not waiting/) });
    await expectRefused(
      cluster.client.resolveApproval(tag, call, { approved: true }),
      409,
      /already decided|not waiting/,
    );
    // The gate that let one decision through keeps it a day, then clears itself.
    const gates = (await forgetting()).slice(gatesBefore);
    expect(gates).toStrictEqual([
      { gate: expect.stringMatching(/^approval:/), status: "scheduled", scheduled_start_at: expect.any(String) },
    ]);
    const delay = Date.parse(String(gates[0]!.scheduled_start_at)) - Date.now();
    expect(delay).toBeGreaterThan(23 * 3600_000);
    expect(delay).toBeLessThanOrEqual(24 * 3600_000);
    expect(
      await cluster.server.query(
        `SELECT key FROM state WHERE service_name = 'agent' AND service_key = '${String(gates[0]!.gate)}'`,
      ),
    ).toStrictEqual([{ key: "decision" }]);
    expect(await cluster.client.attach(invocationId)).toMatchObject({ outcome: "done" });
    const session = await cluster.client.session(tag);
    expect(withoutTs(session)).toStrictEqual(
      withoutTs(await inProcessApproval(tag, { approved: false, reason: "not on Fridays" })),
    );
    expect(cluster.effects().get(`tool ${call}`)).toBeUndefined();
  });

  it("a run cancelled while it waits ends aborted, the waiting call answered", async () => {
    const tag = "approval-cancel";
    const { invocationId } = await cluster.client.start(tag, { system: systemPrompt, message: tag });
    await waitPaused(tag);
    await cluster.client.cancel(invocationId);
    expect(await cluster.client.attach(invocationId)).toStrictEqual({ outcome: "aborted" });
    const session = await cluster.client.session(tag);
    expectEveryCallAnsweredOnce(session);
    expect(withoutTs(session).slice(-2)).toStrictEqual([
      { type: "tool_result", id: `${tag}-c1`, output: "Error: aborted before the tool finished", isError: true },
      { role: "assistant", content: "", stopReason: "aborted" },
    ]);
    expect(await cluster.client.pendingApprovals(tag)).toStrictEqual([]);
    await expectRefused(cluster.client.resolveApproval(tag, `${tag}-c1`, { approved: true }), 409, /not waiting/);
  });
});

// Polls until the run waits (the session may not exist yet: a 404 then).
// The scheduled clean-ups of decision gates, oldest first.
async function forgetting(): Promise<Record<string, unknown>[]> {
  const rows = await cluster.server.query(
    "SELECT * FROM sys_invocation WHERE target_service_name = 'agent' AND target_handler_name = 'forget' ORDER BY created_at",
  );
  return rows.map((row) => ({
    gate: row.target_service_key,
    status: row.status,
    scheduled_start_at: row.scheduled_start_at,
  }));
}

async function waitPaused(tag: string): Promise<void> {
  const waiting = async (): Promise<boolean> => (await cluster.client.pendingApprovals(tag).catch(() => [])).length > 0;
  await waitFor(waiting, 30_000, () => `${tag}: the run did not pause`);
}

async function expectRefused(call: Promise<unknown>, status: number, message: RegExp): Promise<void> {
  const error = await call.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(isRestateAgentError(error)).toBe(true);
  expect(error).toMatchObject({ status, message: expect.stringMatching(message) });
}

// The same approval in process: run until it pauses, decide, run again.
async function inProcessApproval(tag: string, decision: { approved: boolean; reason?: string }): Promise<Session> {
  const dir = mkdtempSync(join(tmpdir(), "simple-agent-loop-restate-baseline-"));
  try {
    writeFileSync(join(dir, "effects"), "");
    const session = initSession(systemPrompt, tag);
    await agentLoop(scriptModel(dir), scriptTools(dir), session);
    resolveApproval(session, `${tag}-c1`, decision);
    await agentLoop(scriptModel(dir), scriptTools(dir), session);
    return session;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
