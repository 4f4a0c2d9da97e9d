import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { extendSession, initSession, resolveApproval, runAgent, type Session } from "simple-agent-loop";
import { restateAgentClient, type RestateAgentClient } from "simple-agent-loop/restate";
import { closeSession, fileStore } from "simple-agent-loop/store";
import { expectEveryCallAnsweredOnce, withoutTs } from "../helpers.ts";
import { effectCounts } from "./agent-script.ts";
import { scriptTriage, triagePrompt } from "./agents-script.ts";
import { startCluster, type Cluster } from "./cluster.ts";
import { waitFor } from "./restate-server.ts";

// Agents that hand off (agents-script.ts) as a Restate object (`restateAgent({ agent })`) on a
// real restate-server, with the worker SIGKILLed after the handoff and before the specialist
// answers: the resumed invocation goes on with the specialist, and nothing that answered before
// the kill (a model call, the summarizer, onHandoff) is asked again.
let cluster: Cluster;
let agents: RestateAgentClient;
const dirs: string[] = [];
beforeAll(async () => {
  cluster = await startCluster();
  agents = restateAgentClient({ url: cluster.server.ingressUrl, name: "agents" });
}, 120_000);
afterAll(async () => {
  await cluster?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}, 60_000);

// The same agents run by runAgent in process, in a control directory of their own.
async function inProcess(tag: string): Promise<{ session: Session; effects: Map<string, number> }> {
  const dir = mkdtempSync(join(tmpdir(), "simple-agent-loop-handoff-baseline-"));
  dirs.push(dir);
  writeFileSync(join(dir, "effects"), "");
  const session = await runAgent(scriptTriage(dir), initSession(triagePrompt, tag));
  return { session, effects: effectCounts(readFileSync(join(dir, "effects"), "utf8")) };
}

async function journaled(invocationId: string, name: string): Promise<void> {
  await cluster.waitForSteps(invocationId, (names) => names.includes(name), `the step "${name}"`);
}

const billingModel = (tag: string, turn: number): string =>
  `model billing ${tag} ${turn} system=You handle billing. tools=lookup`;

describe("restateAgent({ agent }): handoffs in a durable run", () => {
  it("a worker killed in the specialist's tool resumes with the specialist, nothing asked twice", async () => {
    const tag = "handoff-full";
    cluster.hold(`tool-${tag}-s1`);
    const { invocationId } = await agents.start(tag, { message: tag });
    const killed = await cluster.waitAt(`tool-${tag}-s1`);
    // Stored by the server, not only run by the worker, before the kill: triage's model call, the
    // onHandoff step, the specialist's first model call.
    for (const step of ["model 1", "handoff triage to billing", "model 2"]) await journaled(invocationId, step);
    await cluster.killWorker(killed);
    await cluster.addWorker();
    cluster.release(`tool-${tag}-s1`);
    expect(await agents.attach(invocationId)).toStrictEqual({
      outcome: "done",
      response: `billing done with ${tag} (1 user messages).`,
      agent: "billing",
    });

    const effects = cluster.effects();
    expect(
      effects.get(`model triage ${tag} 0 system=${triagePrompt} tools=deploy,transfer_to_billing,transfer_to_refunds`),
    ).toBe(1);
    expect(effects.get(`handoff ${tag} triage billing`)).toBe(1);
    // The specialist's model was sent its own prompt and tools, each call once.
    expect(effects.get(billingModel(tag, 0))).toBe(1);
    expect(effects.get(billingModel(tag, 1))).toBe(1);
    // The lookup the kill interrupted ran once to its end, on the new worker.
    expect(effects.get(`tool ${tag}-s1`)).toBe(1);

    const session = await agents.session(tag);
    const baseline = await inProcess(tag);
    expect(withoutTs(session)).toStrictEqual(withoutTs(baseline.session));
    expectEveryCallAnsweredOnce(session);
    const afterHandoff = session.messages.slice(
      session.messages.findIndex((message) => "type" in message && message.type === "tool_result") + 1,
    );
    expect(afterHandoff.map((message) => message.agent)).toStrictEqual(["billing", "billing", "billing"]);
    expect(await agents.status(tag)).toStrictEqual({ state: "done" });
  }, 180_000);

  it("a worker killed at the target's first call of a summary handoff: the summary is not written again", async () => {
    const tag = "handoff-refund";
    cluster.hold(`model-refunds-${tag}-0`);
    const { invocationId } = await agents.start(tag, { message: tag });
    const killed = await cluster.waitAt(`model-refunds-${tag}-0`);
    for (const step of ["model 1", "model 2", "handoff triage to refunds"]) await journaled(invocationId, step);
    expect(cluster.effects().get(`summary ${tag}`)).toBe(1);
    await cluster.killWorker(killed);
    await cluster.addWorker();
    cluster.release(`model-refunds-${tag}-0`);
    expect(await agents.attach(invocationId)).toStrictEqual({
      outcome: "done",
      response: `refunds done with ${tag} (1 user messages).`,
      agent: "refunds",
    });

    const effects = cluster.effects();
    expect(effects.get(`summary ${tag}`)).toBe(1);
    expect(effects.get(`handoff ${tag} triage refunds`)).toBe(1);
    expect(
      effects.get(`model triage ${tag} 0 system=${triagePrompt} tools=deploy,transfer_to_billing,transfer_to_refunds`),
    ).toBe(1);
    // The call the kill interrupted never answered: it is the only one made again.
    expect(effects.get(`model refunds ${tag} 0 system=You handle refunds. tools=lookup`)).toBe(2);
    expect(effects.get(`model refunds ${tag} 1 system=You handle refunds. tools=lookup`)).toBe(1);

    const session = await agents.session(tag);
    expect(withoutTs(session)).toStrictEqual(withoutTs((await inProcess(tag)).session));
    // The summary is kept in the handoff's result, with what writing it cost.
    const result = session.messages.find((message) => "type" in message && message.type === "tool_result");
    expect(result).toMatchObject({
      id: `${tag}-h1`,
      output: { message: "Transferred to refunds.", summary: `The user asked about ${tag}.` },
      subagentUsage: [{ calls: 1, usage: { inputTokens: 50, outputTokens: 7 } }],
    });
  }, 180_000);

  it("a session exported from Restate to a store resumes in process with the agent that was active", async () => {
    const tag = "handoff-export";
    expect(await agents.run(tag, { message: tag })).toMatchObject({ outcome: "done", agent: "billing" });
    const storeDir = mkdtempSync(join(tmpdir(), "simple-agent-loop-handoff-store-"));
    dirs.push(storeDir);
    const store = fileStore(storeDir);
    await agents.exportTo(tag, store);
    const session = await store.open(tag);
    extendSession(session, { role: "user", content: `${tag}: one more invoice` });
    const dir = mkdtempSync(join(tmpdir(), "simple-agent-loop-handoff-resume-"));
    dirs.push(dir);
    writeFileSync(join(dir, "effects"), "");
    await runAgent(scriptTriage(dir), session);
    await closeSession(session);
    const effects = [...effectCounts(readFileSync(join(dir, "effects"), "utf8")).keys()];
    // Triage is not asked again: billing, the active agent, answers with its own prompt and tools.
    expect(effects).toStrictEqual([billingModel(tag, 2), `tool ${tag}-s3`, billingModel(tag, 3)]);
    expect(session.messages.at(-1)).toMatchObject({
      role: "assistant",
      agent: "billing",
      content: `billing done with ${tag} (2 user messages).`,
    });
  }, 120_000);

  it("a handoff beside a call waiting for approval waits for the decision, then happens", async () => {
    const tag = "handoff-approval";
    const { invocationId } = await agents.start(tag, { message: tag });
    await waitFor(
      async () => (await agents.pendingApprovals(tag).catch(() => [])).length === 1,
      30_000,
      () => "the deploy call never waited for approval",
    );
    expect(await agents.status(tag)).toStrictEqual({ state: "paused" });
    expect(cluster.effects().get(`handoff ${tag} triage billing`)).toBeUndefined();
    await agents.resolveApproval(tag, `${tag}-d1`, { approved: true });
    expect(await agents.attach(invocationId)).toMatchObject({ outcome: "done", agent: "billing" });
    const effects = cluster.effects();
    expect(effects.get(`tool ${tag}-d1`)).toBe(1);
    expect(effects.get(`handoff ${tag} triage billing`)).toBe(1);
    expect(effects.get(billingModel(tag, 0))).toBe(1);
    const session = await agents.session(tag);
    expectEveryCallAnsweredOnce(session);
    expect(withoutTs(session)).toStrictEqual(withoutTs(await approvedInProcess(tag)));
  }, 180_000);
});

// The approval run in process: runAgent pauses, the call is approved, runAgent goes on.
async function approvedInProcess(tag: string): Promise<Session> {
  const dir = mkdtempSync(join(tmpdir(), "simple-agent-loop-handoff-baseline-"));
  dirs.push(dir);
  writeFileSync(join(dir, "effects"), "");
  const triage = scriptTriage(dir);
  const session = await runAgent(triage, initSession(triagePrompt, tag));
  resolveApproval(session, `${tag}-d1`, { approved: true });
  return runAgent(triage, session);
}
