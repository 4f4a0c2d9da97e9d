import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Session, ToolCallMessage, ToolResultMessage } from "simple-agent-loop";
import { restateAgentClient, type RestateAgentClient } from "simple-agent-loop/restate";
import { expectEveryCallAnsweredOnce } from "../helpers.ts";
import { startCluster, type Cluster } from "./cluster.ts";
import { waitFor } from "./restate-server.ts";
import { coderTimeoutMs } from "./code-mode-script.ts";

// A code-mode agent (code-mode-script.ts, served as `coder`): each call its program makes is a
// journaled step `tool <code call id>.<n>`, so a worker SIGKILLed in the middle of a program
// replays the calls already done from the journal and runs only the rest.
let cluster: Cluster;
let coder: RestateAgentClient;
let codeAgents: RestateAgentClient;
beforeAll(async () => {
  cluster = await startCluster();
  coder = restateAgentClient({ url: cluster.server.ingressUrl, adminUrl: cluster.server.adminUrl, name: "coder" });
  codeAgents = restateAgentClient({
    url: cluster.server.ingressUrl,
    adminUrl: cluster.server.adminUrl,
    name: "codeAgents",
  });
}, 120_000);
afterAll(async () => {
  await cluster?.stop();
}, 60_000);

function codeCallOf(session: Session, id: string): { call: ToolCallMessage; result: ToolResultMessage } {
  const call = session.messages.find(
    (message): message is ToolCallMessage => "type" in message && message.type === "tool_call" && message.id === id,
  );
  const result = session.messages.find(
    (message): message is ToolResultMessage => "type" in message && message.type === "tool_result" && message.id === id,
  );
  if (call === undefined || result === undefined) throw new Error(`no code call ${id} with its result`);
  return { call, result };
}

type ProgramOutput = { values: string[]; at: number; random: number };

describe("restateAgent with code mode: a program's calls are journaled steps", () => {
  it("a worker killed during a program's second call: the first is not run again, the program's clock is the same", async () => {
    const tag = "code-crash";
    const held = `tool-${tag}-code.2`;
    cluster.hold(held);
    const { invocationId } = await coder.start(tag, { system: "You are a test agent.", message: tag });
    const killed = await cluster.waitAt(held);
    await cluster.waitForSteps(invocationId, (names) => names.includes(`tool ${tag}-code.1`), "the first call's step");
    expect(cluster.effects().get(`tool ${tag}-code.1`)).toBe(1);
    await cluster.killWorker(killed);
    await cluster.addWorker();
    cluster.release(held);
    expect(await coder.attach(invocationId)).toStrictEqual({ outcome: "done", response: `Done with ${tag}.` });
    expect(await cluster.waitAt(held)).not.toBe(killed);

    const effects = cluster.effects();
    for (const step of [
      `model ${tag} 0`,
      `model ${tag} 1`,
      `tool ${tag}-code.1`,
      `tool ${tag}-code.2`,
      `tool ${tag}-code.3`,
    ])
      expect(effects.get(step), step).toBe(1);
    const session = await coder.session(tag);
    expectEveryCallAnsweredOnce(session);
    const { call, result } = codeCallOf(session, `${tag}-code`);
    const output = result.output as ProgramOutput;
    expect(output.values).toStrictEqual(["ahpla", "ateb", "ammag"]);
    // Date.now() in the program is when the code call entered the session: journaled, not the replay's clock.
    expect(output.at).toBe(Date.parse(call.ts!));
    expect(result.programCalls?.map((entry) => [entry.id, entry.name, entry.input])).toStrictEqual([
      [`${tag}-code.1`, "lookup", { key: "alpha" }],
      [`${tag}-code.2`, "lookup", { key: "beta" }],
      [`${tag}-code.3`, "lookup", { key: "gamma" }],
    ]);
  }, 240_000);

  it("a program call that needs approval pauses the run; decided by its id after every worker went, the program goes on without running a call twice", async () => {
    const tag = "code-approval";
    const waiting = `${tag}-code.2`;
    const { invocationId } = await coder.start(tag, { system: "You are a test agent.", message: tag });
    await waitFor(
      async () => (await coder.pendingApprovals(tag).catch(() => [])).length > 0,
      60_000,
      () => `${tag}: the run did not pause`,
    );
    expect(await coder.pendingApprovals(tag)).toStrictEqual([
      { id: waiting, path: `${tag}-code/${waiting}`, name: "deploy", input: { target: "prod" } },
    ]);
    expect(cluster.effects().get(`tool ${tag}-code.1`)).toBe(1);

    // Every worker goes while the run waits; a new one replays the journal when the decision comes.
    for (const worker of [...cluster.workers]) await cluster.killWorker(worker.pid);
    await cluster.addWorker();
    expect(await coder.resolveApproval(tag, waiting, { approved: true, by: "ops" })).toStrictEqual({
      resolved: [waiting],
    });
    expect(await coder.attach(invocationId)).toStrictEqual({ outcome: "done", response: `Done with ${tag}.` });
    const effects = cluster.effects();
    for (const id of ["code.1", "code.2", "code.3", "code.4"]) expect(effects.get(`tool ${tag}-${id}`), id).toBe(1);
    const session = await coder.session(tag);
    expectEveryCallAnsweredOnce(session);
    const { call, result } = codeCallOf(session, `${tag}-code`);
    expect((result.output as ProgramOutput).values).toStrictEqual(["ahpla", "ateb", "ammag"]);
    expect(result.programCalls?.map((entry) => entry.name)).toStrictEqual(["lookup", "deploy", "lookup", "lookup"]);
    expect(result.programCalls?.[1]?.output).toBe("deployed to prod");
    // The rerun's clock is the first start's (kept in the record while the call waited).
    expect((result.output as ProgramOutput).at).toBe(Date.parse(call.ts!));
  }, 240_000);

  // Runs the code agent on `tag` with the worker killed while the program's second call runs
  // (after the first call's step is journaled); another worker finishes the run.
  async function killDuringSecondCall(tag: string): Promise<void> {
    const held = `tool-${tag}-code.2`;
    cluster.hold(held);
    const { invocationId } = await codeAgents.start(tag, { message: tag });
    const killed = await cluster.waitAt(held);
    await cluster.waitForSteps(invocationId, (names) => names.includes(`tool ${tag}-code.1`), "the first call's step");
    await cluster.killWorker(killed);
    await cluster.addWorker();
    cluster.release(held);
    expect(await codeAgents.attach(invocationId)).toStrictEqual({
      outcome: "done",
      response: `Done with ${tag}.`,
      agent: "coder",
    });
  }

  it("code mode on an agent handed to (restateAgent({ agent })): a worker killed during the program's second call", async () => {
    const tag = "handoff-code";
    await killDuringSecondCall(tag);
    const effects = cluster.effects();
    for (const step of [
      `model coder ${tag} 0`,
      `model coder ${tag} 1`,
      `tool ${tag}-code.1`,
      `tool ${tag}-code.2`,
      `tool ${tag}-code.3`,
    ])
      expect(effects.get(step), step).toBe(1);
    const session = await codeAgents.session(tag);
    expectEveryCallAnsweredOnce(session);
    const { call, result } = codeCallOf(session, `${tag}-code`);
    const output = result.output as ProgramOutput;
    expect(output.values).toStrictEqual(["ahpla", "ateb", "ammag"]);
    expect(output.at).toBe(Date.parse(call.ts!));
    expect(result.programCalls?.map((entry) => entry.id)).toStrictEqual([
      `${tag}-code.1`,
      `${tag}-code.2`,
      `${tag}-code.3`,
    ]);
  }, 240_000);

  it("a program its own time limit stopped while a call waited ends at the same call on a replay after a worker kill", async () => {
    const tag = "timeout-code";
    // The second call waits past the program's time limit, which stops it; the program would
    // catch that and make a third call, had it gone on.
    cluster.hold(`tool-${tag}-code.2`);
    cluster.hold(`model-coder-${tag}-1`);
    const { invocationId } = await codeAgents.start(tag, { message: tag });
    const killed = await cluster.waitAt(`model-coder-${tag}-1`);
    await cluster.waitForSteps(
      invocationId,
      (names) => names.includes(`tool ${tag}-code.2`),
      "the stopped call's step",
    );
    // A new worker replays the program: the first call answers from the journal at once.
    await cluster.killWorker(killed);
    await cluster.addWorker();
    cluster.release(`model-coder-${tag}-1`);
    const ended = await Promise.race([
      codeAgents.attach(invocationId),
      new Promise<string>((resolve) => setTimeout(() => resolve("the replay never ended (journal mismatch)"), 90_000)),
    ]);
    expect(ended).toStrictEqual({ outcome: "done", response: `Done with ${tag}.`, agent: "coder" });
    const effects = cluster.effects();
    expect(effects.get(`tool ${tag}-code.1`)).toBe(1);
    expect(effects.get(`tool ${tag}-code.2`)).toBeUndefined();
    expect(effects.get(`tool ${tag}-code.3`)).toBeUndefined();
    expect(effects.get(`model coder ${tag} 0`)).toBe(1);
    const session = await codeAgents.session(tag);
    expectEveryCallAnsweredOnce(session);
    const { result } = codeCallOf(session, `${tag}-code`);
    expect(result).toMatchObject({
      isError: true,
      output: expect.stringContaining(`time limit: the program ran longer than ${coderTimeoutMs} ms`),
    });
    expect(result.programCalls?.map((entry) => [entry.id, entry.isError === true])).toStrictEqual([
      [`${tag}-code.1`, false],
      [`${tag}-code.2`, true],
    ]);
  }, 240_000);

  it("a deferred tool a search loaded is callable from the program on a handed-to agent, across a worker kill", async () => {
    const tag = "deferred-code";
    await killDuringSecondCall(tag);
    const effects = cluster.effects();
    for (const step of [`tool ${tag}-code.1`, `tool ${tag}-code.2`]) expect(effects.get(step), step).toBe(1);
    const session = await codeAgents.session(tag);
    expectEveryCallAnsweredOnce(session);
    const { result } = codeCallOf(session, `${tag}-code`);
    expect(result.output).toStrictEqual({ values: ["ahpla", "ateb"], tools: ["lookup", "find_record"] });
    expect(result.programCalls?.map((entry) => entry.name)).toStrictEqual(["find_record", "find_record"]);
  }, 240_000);
});
