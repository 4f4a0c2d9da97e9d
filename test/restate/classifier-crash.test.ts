import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ToolCallMessage } from "simple-agent-loop";
import { restateAgentClient, type RestateAgentClient } from "simple-agent-loop/restate";
import { expectEveryCallAnsweredOnce } from "../helpers.ts";
import { startCluster, type Cluster } from "./cluster.ts";

// The script agent under an approval policy whose classifier judges every call (agent-script.ts,
// served as `judged`): each verdict is a journaled step `approval <call id>`, so a worker
// SIGKILLed after the classifier answered never has it asked (nor paid) again.
let cluster: Cluster;
let judged: RestateAgentClient;
beforeAll(async () => {
  cluster = await startCluster();
  judged = restateAgentClient({ url: cluster.server.ingressUrl, adminUrl: cluster.server.adminUrl, name: "judged" });
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
});
