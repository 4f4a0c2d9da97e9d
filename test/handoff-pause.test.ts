import { describe, expect, it } from "vitest";
import {
  defineAgent,
  initSession,
  resolveApproval,
  runAgent,
  streamAgent,
  type AgentRunEvent,
} from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import { expectEveryCallAnsweredOnce } from "./helpers.ts";
import { call, loggingTool } from "./scripted-turns.ts";

function agents(log: string[], order: "handoff-first" | "approval-first") {
  const deploy = loggingTool(log, "deploy", "deployed", { requireApproval: true });
  const billing = defineAgent({
    name: "billing",
    systemPrompt: "b",
    invokeModel: scriptedModel([
      () => {
        log.push("billing called");
        return [{ role: "assistant", content: "done in billing" }];
      },
    ]),
  });
  const calls = [call("h1", "transfer_to_billing"), call("d1", "deploy")];
  const triage = defineAgent({
    name: "triage",
    systemPrompt: "t",
    invokeModel: scriptedModel([order === "handoff-first" ? calls : calls.reverse()]),
    tools: [deploy],
    handoffs: [billing],
  });
  return triage;
}

describe("a handoff beside a call waiting for approval", () => {
  for (const order of ["handoff-first", "approval-first"] as const)
    it(`${order}: no handoff event while paused; the resumed run emits it once, when the target runs`, async () => {
      const log: string[] = [];
      const triage = agents(log, order);
      const session = initSession("s", "ship it");
      const events: AgentRunEvent[] = [];
      for await (const event of streamAgent(triage, session)) events.push(event);
      expect(events.at(-1)).toMatchObject({ type: "run-end", outcome: "paused" });
      expect(events.filter((event) => event.type === "handoff")).toStrictEqual([]);
      expect(log).toStrictEqual([]);
      resolveApproval(session, "d1", { approved: true });
      const resumed: AgentRunEvent[] = [];
      await runAgent(triage, session, { onEvent: (event) => resumed.push(event) });
      expect(log).toStrictEqual(["deploy ran", "billing called"]);
      expectEveryCallAnsweredOnce(session);
      expect(resumed.filter((event) => event.type === "handoff")).toStrictEqual([
        { type: "handoff", from: "triage", to: "billing", history: "full" },
      ]);
      expect(session.messages.at(-1)).toMatchObject({ content: "done in billing", agent: "billing" });
    });
});
