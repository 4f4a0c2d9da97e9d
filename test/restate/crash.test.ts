import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectEveryCallAnsweredOnce, withoutTs } from "../helpers.ts";
import { inProcessRun, systemPrompt } from "./baseline.ts";
import { startCluster, type Cluster } from "./cluster.ts";
import { waitFor } from "./restate-server.ts";

// Real faults: the worker process running a step is killed with SIGKILL while it is held inside
// that step (a tool, a model call). Restate retries the invocation; the proxy sends it to a live
// worker, which replays the journal and finishes the run.
let cluster: Cluster;
beforeAll(async () => {
  cluster = await startCluster();
}, 120_000);
afterAll(async () => {
  await cluster?.stop();
}, 60_000);

describe("restateAgent: a worker killed in the middle of a run", () => {
  it("during a tool (its parallel sibling done): another worker finishes the run, each tool run once", async () => {
    const tag = "crash-tool";
    cluster.hold(`tool-${tag}-a1`);
    const { invocationId } = await cluster.client.start(tag, { system: systemPrompt, message: tag });
    const killed = await cluster.waitAt(`tool-${tag}-a1`);
    // The sibling finished and its step is journaled (stored by the server, not only run by the
    // worker: a step killed before the server has it runs again, as Restate promises) before the kill.
    await waitFor(
      () => cluster.effects().get(`tool ${tag}-a2`) === 1,
      30_000,
      () => "a2 did not finish",
    );
    await cluster.waitForSteps(invocationId, (names) => names.includes(`tool ${tag}-a2`), "a2's step");
    await cluster.killWorker(killed);
    await cluster.addWorker();
    cluster.release(`tool-${tag}-a1`);
    expect(await cluster.client.attach(invocationId)).toStrictEqual({ outcome: "done", response: `Done with ${tag}.` });
    expect(await cluster.waitAt(`tool-${tag}-a1`)).not.toBe(killed);
    const session = await cluster.client.session(tag);
    expect(withoutTs(session)).toStrictEqual(withoutTs(await inProcessRun(tag)));
    expectEveryCallAnsweredOnce(session);
    const effects = cluster.effects();
    for (const step of [
      `model ${tag} 0`,
      `model ${tag} 1`,
      `model ${tag} 2`,
      `tool ${tag}-a1`,
      `tool ${tag}-a2`,
      `tool ${tag}-b1`,
    ])
      expect(effects.get(step), step).toBe(1);
  }, 180_000); // a worker process started, Restate's retry and a replay: its waits alone allow 30 s each

  it("during a model call: the finished turns are not asked again, the interrupted one is, once more", async () => {
    const tag = "crash-model";
    cluster.hold(`model-${tag}-1`);
    const { invocationId } = await cluster.client.start(tag, { system: systemPrompt, message: tag });
    const killed = await cluster.waitAt(`model-${tag}-1`);
    await cluster.killWorker(killed);
    await cluster.addWorker();
    cluster.release(`model-${tag}-1`);
    expect(await cluster.client.attach(invocationId)).toStrictEqual({ outcome: "done", response: `Done with ${tag}.` });
    expect(await cluster.waitAt(`model-${tag}-1`)).not.toBe(killed);
    const session = await cluster.client.session(tag);
    expect(withoutTs(session)).toStrictEqual(withoutTs(await inProcessRun(tag)));
    expectEveryCallAnsweredOnce(session);
    const effects = cluster.effects();
    // The killed call started twice (killed, then again); every other step once.
    expect(effects.get(`model ${tag} 1`)).toBe(2);
    for (const step of [`model ${tag} 0`, `model ${tag} 2`, `tool ${tag}-a1`, `tool ${tag}-a2`, `tool ${tag}-b1`])
      expect(effects.get(step), step).toBe(1);
  }, 180_000);
});
