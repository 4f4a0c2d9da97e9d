import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ToolCallMessage } from "simple-agent-loop";
import { restateAgentClient, type RestateAgentClient } from "simple-agent-loop/restate";
import { expectEveryCallAnsweredOnce } from "../helpers.ts";
import { startCluster, type Cluster } from "./cluster.ts";
import { waitFor } from "./restate-server.ts";

// The script agent under an approval policy whose classifier judges every call (agent-script.ts,
// served as `judged`): each verdict is a journaled step `approval <call id>`, so a worker
// SIGKILLed after the classifier answered never has it asked (nor paid) again.
let cluster: Cluster;
let judged: RestateAgentClient;
let judgedAgents: RestateAgentClient;
beforeAll(async () => {
  cluster = await startCluster();
  judged = restateAgentClient({ url: cluster.server.ingressUrl, adminUrl: cluster.server.adminUrl, name: "judged" });
  judgedAgents = restateAgentClient({ url: cluster.server.ingressUrl, name: "judgedAgents" });
}, 120_000);
afterAll(async () => {
  await cluster?.stop();
}, 60_000);

describe("restateAgent: the approval classifier is a journaled step", () => {
  it("a worker killed after the classifier answered: the resumed run does not ask it again", async () => {
    const tag = "judge-crash";
    cluster.hold(`model-${tag}-1`);
    const { invocationId } = await judged.start(tag, { system: "You are a test agent.", message: tag });
    const killed = await cluster.waitAt(`model-${tag}-1`);
    await cluster.waitForSteps(
      invocationId,
      (names) => names.includes(`approval ${tag}-a1`) && names.includes(`approval ${tag}-a2`),
      "the classifier's steps",
    );
    expect(cluster.effects().get(`classifier ${tag}-a1`)).toBe(1);
    await cluster.killWorker(killed);
    await cluster.addWorker();
    cluster.release(`model-${tag}-1`);
    expect(await judged.attach(invocationId)).toStrictEqual({ outcome: "done", response: `Done with ${tag}.` });
    const effects = cluster.effects();
    for (const id of ["a1", "a2", "b1"]) {
      expect(effects.get(`classifier ${tag}-${id}`)).toBe(1);
      expect(effects.get(`tool ${tag}-${id}`)).toBe(1);
    }
    const session = await judged.session(tag);
    expectEveryCallAnsweredOnce(session);
    const calls = session.messages.filter(
      (message): message is ToolCallMessage => "type" in message && message.type === "tool_call",
    );
    expect(calls.map((call) => call.approval?.decidedBy)).toStrictEqual(
      ["a1", "a2", "b1"].map(() => ({
        by: "classifier",
        name: "script-judge",
        decision: "allow",
        reason: "lookup is harmless",
        usage: { inputTokens: 7, outputTokens: 2 },
      })),
    );
  }, 240_000);

  it("a classifier that throws is unsure with its error (journaled): the run pauses, and after a kill the human decides without the classifier asked again", async () => {
    const tag = "judge-throws";
    const throwing = `${tag}-a2-throws`;
    const { invocationId } = await judged.start(tag, { system: "You are a test agent.", message: tag });
    await waitFor(
      async () => (await judged.pendingApprovals(tag).catch(() => [])).length > 0,
      60_000,
      () => `${tag}: the run did not pause`,
    );
    expect(await judged.pendingApprovals(tag)).toStrictEqual([
      { id: throwing, path: throwing, name: "lookup", input: { key: "beta" } },
    ]);
    const unsure = {
      by: "classifier",
      name: "script-judge",
      decision: "unsure",
      reason: "the classifier failed",
      error: `judge down for ${throwing}`,
    };
    const pending = (await judged.session(tag)).messages.find(
      (message): message is ToolCallMessage =>
        "type" in message && message.type === "tool_call" && message.id === throwing,
    );
    expect(pending?.approval).toMatchObject({ status: "pending", consulted: [unsure] });
    expect(pending?.approval?.decidedBy).toBeUndefined();

    // Every worker goes while the run waits; a new one replays the journal when the decision comes.
    for (const worker of [...cluster.workers]) await cluster.killWorker(worker.pid);
    await cluster.addWorker();
    expect(await judged.resolveApproval(tag, throwing, { approved: true, by: "ops" })).toStrictEqual({
      resolved: [throwing],
    });
    expect(await judged.attach(invocationId)).toStrictEqual({ outcome: "done", response: `Done with ${tag}.` });
    const effects = cluster.effects();
    for (const id of ["a1", "a2-throws", "b1"]) {
      expect(effects.get(`classifier ${tag}-${id}`), id).toBe(1);
      expect(effects.get(`tool ${tag}-${id}`), id).toBe(1);
    }
    const session = await judged.session(tag);
    expectEveryCallAnsweredOnce(session);
    const decided = session.messages.find(
      (message): message is ToolCallMessage =>
        "type" in message && message.type === "tool_call" && message.id === throwing,
    );
    expect(decided?.approval).toMatchObject({
      status: "approved",
      decidedBy: { by: "human", user: "ops" },
      consulted: [unsure],
    });
  }, 240_000);

  it("a handoff agent's classifier is a journaled step too: a worker killed in the specialist's tool, the specialist's call judged once", async () => {
    const tag = "handoff-judged";
    cluster.hold(`tool-${tag}-s1`);
    const { invocationId } = await judgedAgents.start(tag, { message: tag });
    const killed = await cluster.waitAt(`tool-${tag}-s1`);
    await cluster.waitForSteps(
      invocationId,
      (names) => names.includes(`approval ${tag}-s1`),
      "the specialist's classifier step",
    );
    expect(cluster.effects().get(`classifier ${tag}-s1`)).toBe(1);
    await cluster.killWorker(killed);
    await cluster.addWorker();
    cluster.release(`tool-${tag}-s1`);
    expect(await judgedAgents.attach(invocationId)).toStrictEqual({
      outcome: "done",
      response: `billing done with ${tag} (1 user messages).`,
      agent: "billing",
    });
    const effects = cluster.effects();
    expect(effects.get(`classifier ${tag}-s1`)).toBe(1);
    expect(effects.get(`tool ${tag}-s1`)).toBe(1);
    // The specialist's policy is its own: triage's handoff was not judged.
    expect(effects.get(`classifier ${tag}-h1`)).toBeUndefined();
    const session = await judgedAgents.session(tag);
    expectEveryCallAnsweredOnce(session);
    const call = session.messages.find(
      (message): message is ToolCallMessage =>
        "type" in message && message.type === "tool_call" && message.id === `${tag}-s1`,
    );
    expect(call?.agent).toBe("billing");
    expect(call?.approval?.decidedBy).toStrictEqual({
      by: "classifier",
      name: "script-judge",
      decision: "allow",
      reason: "lookup is harmless",
      usage: { inputTokens: 7, outputTokens: 2 },
    });
  }, 240_000);
});
