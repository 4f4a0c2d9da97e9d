// A program's call to a background tool runs in the foreground: the program awaits its result.
// As a task, its outcome would have nowhere to go (the program call has no result in the session
// to update or deliver), and a run waiting for its tasks would wait for ever.
import { describe, expect, it } from "vitest";
import { agentLoop, codeModeName, initSession, tool, type ToolResultMessage } from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import { expectEveryCallAnsweredOnce, sleep } from "../helpers.ts";

function build(when: "always" | "asked") {
  return tool({
    name: "build",
    description: "Builds.",
    inputSchema: { type: "object", properties: { target: { type: "string" } } },
    background: { when },
    handler: async (input) => {
      await sleep(20);
      return `built ${String(input.target)}`;
    },
  });
}

describe("code mode: a background tool called from a program", () => {
  for (const [when, input] of [
    ["always", "{ target: 'app' }"],
    ["asked", "{ target: 'app', run_in_background: true }"],
  ] as const)
    it(`(${when}) gives the program its outcome; no task is started, the run ends`, async () => {
      const session = initSession("s", "go");
      const events: string[] = [];
      const model = scriptedModel([
        [{ type: "tool_call", id: "c", name: codeModeName, input: { code: `return await tools.build(${input});` } }],
        [{ role: "assistant", content: "done" }],
      ]);
      await agentLoop(model, [build(when)], session, {
        codeMode: true,
        signal: AbortSignal.timeout(20_000),
        onEvent: (event) => events.push(event.type),
      });
      expectEveryCallAnsweredOnce(session);
      expect(session.messages.at(-1)).toMatchObject({ role: "assistant", content: "done" });
      const result = session.messages.find(
        (message): message is ToolResultMessage => "type" in message && message.type === "tool_result",
      )!;
      expect(result.output).toBe("built app");
      expect(result.task).toBeUndefined();
      expect(result.programCalls).toMatchObject([{ id: "c.1", name: "build", output: "built app" }]);
      expect(events).not.toContain("task-start");
    });
});
