import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentLoop, initSession } from "simple-agent-loop";
import { restateAgentClient, type RestateAgentClient } from "simple-agent-loop/restate";
import { expectEveryCallAnsweredOnce, withoutTs } from "../helpers.ts";
import { startCluster, type Cluster } from "./cluster.ts";
import { screenshotDigest, shotsModel, shotsTools } from "./shots-script.ts";

// A tool's screenshot larger than a step is journaled as the tool's step (the parts without their
// bytes) and then chunk steps of its base64. A worker SIGKILLed once those are journaled: another
// worker replays them, the tool is not run again, the model is shown the same bytes.
let cluster: Cluster;
let shots: RestateAgentClient;
beforeAll(async () => {
  cluster = await startCluster();
  shots = restateAgentClient({ url: cluster.server.ingressUrl, adminUrl: cluster.server.adminUrl, name: "shots" });
}, 120_000);
afterAll(async () => {
  await cluster?.stop();
}, 60_000);

// The same run in process: what the session must be.
async function inProcessRun(tag: string) {
  const dir = mkdtempSync(join(tmpdir(), "simple-agent-loop-shots-"));
  writeFileSync(join(dir, "effects"), "");
  return agentLoop(shotsModel(dir), shotsTools(dir), initSession("Look.", tag));
}

describe("restateAgent: a screenshot journaled in chunk steps, the worker killed after them", () => {
  it("another worker replays the chunks: the same session, the tool run once, the image byte for byte", async () => {
    const tag = "crash-chunks";
    cluster.hold(`model-${tag}-1`);
    const { invocationId } = await shots.start(tag, { system: "Look.", message: tag });
    const killed = await cluster.waitAt(`model-${tag}-1`);
    // The chunk steps are in the server's journal (1.5 MB of image in 512 KB steps) before the kill.
    await cluster.waitForSteps(
      invocationId,
      (names) => names.filter((name) => name.startsWith(`tool ${tag}-s1 part `)).length >= 4,
      "chunk steps",
    );
    await cluster.killWorker(killed);
    await cluster.addWorker();
    cluster.release(`model-${tag}-1`);
    expect(await shots.attach(invocationId)).toStrictEqual({ outcome: "done", response: `Saw ${tag}.` });
    expect(await cluster.waitAt(`model-${tag}-1`)).not.toBe(killed);
    const session = await shots.session(tag);
    expect(withoutTs(session)).toStrictEqual(withoutTs(await inProcessRun(tag)));
    expectEveryCallAnsweredOnce(session);
    const effects = cluster.effects();
    expect(effects.get(`tool ${tag}-s1`)).toBe(1);
    // The killed call started twice, and was shown the screenshot's very bytes both times.
    expect(effects.get(`model ${tag} 1`)).toBe(2);
    expect(effects.get(`seen ${tag} ${screenshotDigest}`)).toBe(2);
    expect([...effects.keys()].filter((line) => line.startsWith(`seen ${tag} `))).toStrictEqual([
      `seen ${tag} ${screenshotDigest}`,
    ]);
  }, 180_000);
});
