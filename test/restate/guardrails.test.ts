import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectEveryCallAnsweredOnce, withoutTs } from "../helpers.ts";
import { inProcessRun, systemPrompt } from "./baseline.ts";
import { startCluster, type Cluster } from "./cluster.ts";

// The script agent's guardrails (agent-script.ts: `screen` on input, `review` on answers) through
// a real restate-server: each verdict is a journaled step, so a worker killed after a guardrail
// answered never has it asked again.
let cluster: Cluster;
beforeAll(async () => {
  cluster = await startCluster();
}, 120_000);
afterAll(async () => {
  await cluster?.stop();
}, 60_000);

describe("restateAgent: guardrails are journaled steps", () => {
  it("a worker killed after the input guardrail answered: the resumed run does not ask it again", async () => {
    const tag = "guard-crash";
    cluster.hold(`tool-${tag}-a1`);
    const { invocationId } = await cluster.client.start(tag, { system: systemPrompt, message: tag });
    const killed = await cluster.waitAt(`tool-${tag}-a1`);
    // The guardrail's step is stored by the server (not only run by the worker) before the kill.
    await cluster.waitForSteps(
      invocationId,
      (names) => names.includes("guardrail screen"),
      "the screen guardrail's step",
    );
    expect(cluster.effects().get(`guardrail screen ${tag}`)).toBe(1);
    await cluster.killWorker(killed);
    await cluster.addWorker();
    cluster.release(`tool-${tag}-a1`);
    expect(await cluster.client.attach(invocationId)).toStrictEqual({ outcome: "done", response: `Done with ${tag}.` });
    const effects = cluster.effects();
    expect(effects.get(`guardrail screen ${tag}`)).toBe(1);
    expect(effects.get(`guardrail review Done with ${tag}.`)).toBe(1);
    const session = await cluster.client.session(tag);
    expect(withoutTs(session)).toStrictEqual(withoutTs(await inProcessRun(tag)));
    expectEveryCallAnsweredOnce(session);
    // Every verdict is in the session's log (the JSONL export), as a store records it.
    const verdicts = (await cluster.client.export(tag))
      .split("\n")
      .filter((line) => line.includes('"type":"guardrail"'))
      .map((line) => JSON.parse(line) as { name: string; kind: string; action: string });
    expect(verdicts.map(({ name, kind, action }) => [name, kind, action])).toStrictEqual([
      ["screen", "input", "allow"],
      ["review", "output", "allow"],
    ]);
  }, 180_000);

  it("a blocked input ends the durable run blocked, the model never called", async () => {
    const tag = "forbidden-topic";
    expect(await cluster.client.run(tag, { system: systemPrompt, message: tag })).toStrictEqual({ outcome: "blocked" });
    expect(cluster.effects().get(`model ${tag} 0`)).toBeUndefined();
    expect(await cluster.client.status(tag)).toStrictEqual({ state: "blocked" });
    const session = await cluster.client.session(tag);
    expect(withoutTs(session)).toStrictEqual([
      { role: "system", content: systemPrompt },
      {
        role: "user",
        content: "[blocked by screen]",
        guardrail: { name: "screen", action: "block", message: "not allowed here" },
      },
    ]);
  }, 120_000);
});
