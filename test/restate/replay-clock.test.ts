// The durable run's clock stamps each decision recorded on a call (`approval.at`) with the journaled
// time, as it stamps `ts`: a replay of the same run (same journaled times) records the same entries,
// decision times included, whatever the wall clock says. No server needed: the session state on a
// key-value map, the loop in process.
import type { ObjectContext } from "@restatedev/restate-sdk";
import { describe, expect, it } from "vitest";
import { agentLoop, initSession, tool, type ToolCallMessage } from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import { createReplayClock } from "../../src/restate/replay-clock.ts";
import { readEntries, recordSession } from "../../src/restate/session-state.ts";

function fakeContext(): ObjectContext {
  const state = new Map<string, unknown>();
  return {
    get: (key: string) => Promise.resolve(state.has(key) ? structuredClone(state.get(key)) : null),
    set: (key: string, value: unknown) => void state.set(key, structuredClone(value)),
  } as unknown as ObjectContext;
}

// A journaled time, far from the wall clock.
const journaledStart = Date.parse("2021-03-04T05:06:07.000Z");

// One durable attempt: the loop decides three calls (a rule allows, a rule denies, the classifier
// allows), recorded through the replay clock; returns the entries stored and the calls' decisions.
async function attempt(): Promise<{ entries: unknown[]; decidedAt: (string | undefined)[] }> {
  const ctx = fakeContext();
  const session = initSession("You help.", "Tidy up.");
  const clock = createReplayClock(journaledStart);
  const recorder = recordSession(ctx, session, clock, 0, 64 * 1024);
  const model = scriptedModel([
    [
      { type: "tool_call", id: "c1", name: "read", input: {} },
      { type: "tool_call", id: "c2", name: "remove", input: {} },
      { type: "tool_call", id: "c3", name: "fetch", input: {} },
    ],
    [{ role: "assistant", content: "Done." }],
  ]);
  const tools = ["read", "remove", "fetch"].map((name) =>
    tool({ name, description: name, inputSchema: { type: "object" }, handler: () => "ok" }),
  );
  await agentLoop(model, tools, session, {
    approvalPolicy: {
      rules: [
        { id: "reads", tool: "read", action: "allow" },
        { id: "no-remove", tool: "remove", action: "deny" },
      ],
      classifier: { name: "judge", classify: () => ({ decision: "allow", reason: "harmless" }) },
    },
  });
  recorder.flush();
  recorder.stop();
  const calls = session.messages.filter(
    (message): message is ToolCallMessage => "type" in message && message.type === "tool_call",
  );
  return { entries: (await readEntries(ctx)) ?? [], decidedAt: calls.map((call) => call.approval?.at) };
}

describe("ReplayClock.stampApproval", () => {
  it("stamps approval.at with the journaled time, on the session and in the stored entries, the same on a replay", async () => {
    const first = await attempt();
    // Every decision at the journaled time, not the wall clock's.
    expect(first.decidedAt).toStrictEqual(["c1", "c2", "c3"].map(() => new Date(journaledStart).toISOString()));
    const stored = first.entries.flatMap((entry) => {
      const { type, reason, message } = entry as { type: string; reason?: string; message?: ToolCallMessage };
      return type === "update" && reason === "approval" ? [[message!.id, message!.approval?.at]] : [];
    });
    expect(stored).toStrictEqual(["c1", "c2", "c3"].map((id) => [id, new Date(journaledStart).toISOString()]));
    // A replay, later by the wall clock: the same entries, decision times included.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const replay = await attempt();
    expect(replay.entries).toStrictEqual(first.entries);
  });

  it("moves with the clock: a decision after a journaled time is stamped with it", () => {
    const clock = createReplayClock(journaledStart);
    clock.advance(journaledStart + 1_500);
    const call: ToolCallMessage = {
      type: "tool_call",
      id: "c1",
      name: "deploy",
      input: {},
      approval: { status: "approved", input: {}, decidedBy: { by: "human" }, at: new Date().toISOString() },
    };
    clock.stampApproval(call);
    expect(call.approval?.at).toBe("2021-03-04T05:06:08.500Z");
    // A call with no decision time (pending, or an older record) gets none.
    const pending: ToolCallMessage = {
      type: "tool_call",
      id: "c2",
      name: "deploy",
      input: {},
      approval: { status: "pending" },
    };
    clock.stampApproval(pending);
    expect(pending.approval).toStrictEqual({ status: "pending" });
  });
});
