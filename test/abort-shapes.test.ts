// Every shape of an awaited call a handler that ignores its signal can hold (alone, started early,
// with afterToolCall, under maxParallelTools: 1, two in parallel): an abort answers each call once,
// in call order, and the run ends aborted.
import { describe, expect, it } from "vitest";
import { agentLoop, initSession, tool, type AgentEvent, type Session } from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import { expectEveryCallAnsweredOnce } from "./helpers.ts";

// A handler that never settles and ignores its signal; it aborts the run once every call has started.
function deafTools(names: string[], started: string[], abortWhen: number, controller: AbortController) {
  return names.map((name) =>
    tool({
      name,
      description: name,
      inputSchema: { type: "object", properties: {} },
      handler: () => {
        started.push(name);
        if (started.length === abortWhen) setTimeout(() => controller.abort(), 10);
        return new Promise<never>(() => {});
      },
    }),
  );
}

const call = (id: string, name: string) => ({ type: "tool_call" as const, id, name, input: {} });

async function run(
  turn: ReturnType<typeof call>[],
  names: string[],
  options: { stream?: boolean; afterToolCall?: boolean; maxParallelTools?: number },
): Promise<{ session: Session; events: AgentEvent[] }> {
  const controller = new AbortController();
  const started: string[] = [];
  const events: AgentEvent[] = [];
  const model = scriptedModel([turn, [{ role: "assistant", content: "never" }]], { stream: options.stream ?? false });
  const session = await agentLoop(model, deafTools(names, started, turn.length, controller), initSession("s", "u"), {
    signal: controller.signal,
    onEvent: (event) => events.push(event),
    ...(options.maxParallelTools === undefined ? {} : { maxParallelTools: options.maxParallelTools }),
    ...(options.afterToolCall === true ? { hooks: { afterToolCall: () => undefined } } : {}),
  });
  return { session, events };
}

describe("an abort answers every waiting deaf call once, whatever path the call took", () => {
  for (const [label, options] of [
    ["a lone call", {}],
    ["a lone call started early (streamed)", { stream: true }],
    ["a lone call with an afterToolCall hook", { afterToolCall: true }],
    ["a lone call under maxParallelTools", { maxParallelTools: 1 }],
  ] as const) {
    it(label, async () => {
      const { session, events } = await run([call("c1", "a")], ["a"], options);
      expectEveryCallAnsweredOnce(session);
      expect(session.messages.filter((message) => "type" in message && message.type === "tool_result")).toHaveLength(1);
      expect(events.at(-1)).toMatchObject({ type: "run-end", outcome: "aborted" });
      expect(events.filter((event) => event.type === "message").length).toBe(session.messages.length - 2);
    });
  }

  it("two parallel calls, streamed", async () => {
    const { session, events } = await run([call("c1", "a"), call("c2", "b")], ["a", "b"], { stream: true });
    expectEveryCallAnsweredOnce(session);
    const results = session.messages.filter((message) => "type" in message && message.type === "tool_result");
    expect(results.map((message) => ("id" in message ? message.id : ""))).toStrictEqual(["c1", "c2"]);
    expect(events.at(-1)).toMatchObject({ type: "run-end", outcome: "aborted" });
  });
});
