import { describe, expect, it } from "vitest";
import {
  defineAgent,
  handoff,
  initSession,
  isMaxIterationsError,
  runAgent,
  tool,
  type AgentDefinition,
  type AgentRunEvent,
  type InvokeModel,
  type MaxIterationsError,
} from "simple-agent-loop";
import { expectEveryCallAnsweredOnce } from "./helpers.ts";

// `maxIterations` in runAgent: the call's option bounds the model calls of all its agents
// together; an agent's own `options.maxIterations` bounds that agent's calls within the call.
const lookup = tool({
  name: "lookup",
  description: "Look up the account.",
  inputSchema: { type: "object", properties: { n: { type: "number" } } },
  handler: () => "account 42",
});

// A model that calls `lookup` on every turn (it never answers; each input differs, so the loop
// guard never stops it), counting its calls.
function looping(calls: string[], name: string): InvokeModel {
  return () => {
    calls.push(name);
    return [{ type: "tool_call", id: `${name}-${calls.length}`, name: "lookup", input: { n: calls.length } }];
  };
}

function agents(calls: string[], billingLimit?: number, triageLimit?: number): AgentDefinition {
  const billing = defineAgent({
    name: "billing",
    systemPrompt: "b",
    invokeModel: looping(calls, "billing"),
    tools: [lookup],
    ...(billingLimit === undefined ? {} : { options: { maxIterations: billingLimit } }),
  });
  let triageTurns = 0;
  return defineAgent({
    name: "triage",
    systemPrompt: "t",
    invokeModel: () => {
      calls.push("triage");
      triageTurns++;
      return [{ type: "tool_call", id: `h${triageTurns}`, name: "transfer_to_billing", input: {} }];
    },
    handoffs: [handoff(billing, { returnTo: true })],
    ...(triageLimit === undefined ? {} : { options: { maxIterations: triageLimit } }),
  });
}

async function failure(run: Promise<unknown>): Promise<MaxIterationsError> {
  const error = await run.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!isMaxIterationsError(error)) throw new Error(`expected a MaxIterationsError, got ${String(error)}`);
  return error;
}

describe("runAgent: maxIterations", () => {
  it("an agent's own maxIterations limits its turns in the call; the error names the agent and its limit", async () => {
    const calls: string[] = [];
    const events: AgentRunEvent[] = [];
    const error = await failure(
      runAgent(agents(calls, 2), initSession("s", "help"), { onEvent: (event) => events.push(event) }),
    );
    expect(calls).toStrictEqual(["triage", "billing", "billing"]);
    expect(error.maxIterations).toBe(2);
    expect(error.message).toMatch(/^Agent "billing" reached its maxIterations \(2\) in this run while the model/);
    expect(error.message).toContain("Last action: lookup");
    expectEveryCallAnsweredOnce(error.session);
    // The call's one run-end says the same.
    const ends = events.filter((event) => event.type === "run-end");
    expect(ends).toHaveLength(1);
    expect(ends[0]).toMatchObject({ outcome: "max-iterations", error: error.message });
  });

  it("the call's maxIterations limits the turns of all its agents together", async () => {
    const calls: string[] = [];
    const error = await failure(runAgent(agents(calls), initSession("s", "help"), { maxIterations: 3 }));
    // Triage's turn counts: billing had two of the three, not three of its own.
    expect(calls).toStrictEqual(["triage", "billing", "billing"]);
    expect(error.maxIterations).toBe(3);
    expect(error.message).toMatch(/^The run reached maxIterations \(3\) over all its agents, in agent "billing",/);
  });

  it("the stricter limit wins, and an agent's turns add up when the conversation comes back to it", async () => {
    // Billing gives the conversation back at once; triage hands it over again each time.
    const calls: string[] = [];
    const billing = defineAgent({
      name: "billing",
      systemPrompt: "b",
      invokeModel: () => {
        calls.push("billing");
        return [{ type: "tool_call", id: `back${calls.length}`, name: "transfer_back_to_triage", input: {} }];
      },
    });
    const triage = defineAgent({
      name: "triage",
      systemPrompt: "t",
      invokeModel: () => {
        calls.push("triage");
        return [{ type: "tool_call", id: `to${calls.length}`, name: "transfer_to_billing", input: {} }];
      },
      handoffs: [handoff(billing, { returnTo: true })],
      options: { maxIterations: 2 },
    });
    const error = await failure(runAgent(triage, initSession("s", "help"), { maxIterations: 10, maxHandoffs: 20 }));
    // Triage's third turn is refused: two in this call, across its two activations.
    expect(calls).toStrictEqual(["triage", "billing", "triage", "billing"]);
    expect(error.maxIterations).toBe(2);
    expect(error.message).toMatch(/^Agent "triage" reached its maxIterations \(2\)/);
    // A new call starts counting again.
    const again: string[] = [];
    const next = await failure(runAgent(agents(again, 5), initSession("s", "help"), { maxIterations: 3 }));
    expect(next.maxIterations).toBe(3);
    expect(again).toHaveLength(3);
  });

  it("the default limit (100) is the whole call's", async () => {
    const calls: string[] = [];
    const error = await failure(runAgent(agents(calls), initSession("s", "help")));
    expect(calls).toHaveLength(100);
    expect(error.message).toMatch(/^The run reached maxIterations \(100, the default\)/);
  });
});
