import { describe, expect, it } from "vitest";
import {
  agentLoop,
  agentStream,
  defineAgent,
  initSession,
  isAgentError,
  runAgent,
  subagentTool,
  tool,
} from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";

const lookup = tool({
  name: "lookup",
  description: "Looks a record up.",
  inputSchema: { type: "object", properties: { key: { type: "string" } }, required: ["key"] },
  handler: (input) => input.key,
});

const never = () => scriptedModel([[{ role: "assistant", content: "never" }]]);

// Each way a run takes `codeMode`, with a bad value: an AgentError naming the option and the value.
const doors: [string, (option: unknown) => Promise<unknown>][] = [
  ["agentLoop", (option) => agentLoop(never(), [lookup], initSession("s", "u"), { codeMode: option as never })],
  [
    "agentStream",
    (option) => agentStream(never(), [lookup], initSession("s", "u"), { codeMode: option as never }).result,
  ],
  [
    "defineAgent's options",
    async (option) =>
      runAgent(
        defineAgent({
          name: "a",
          systemPrompt: "s",
          invokeModel: never(),
          tools: [lookup],
          options: { codeMode: option as never },
        }),
        initSession("s", "u"),
      ),
  ],
  [
    "runAgent",
    (option) =>
      runAgent(
        defineAgent({ name: "a", systemPrompt: "s", invokeModel: never(), tools: [lookup] }),
        initSession("s", "u"),
        { codeMode: option as never },
      ),
  ],
  [
    "subagentTool's loopOptions",
    async (option) =>
      subagentTool({
        name: "sub",
        description: "d",
        systemPrompt: "s",
        invokeModel: never(),
        tools: [lookup],
        loopOptions: { codeMode: option as never },
      }),
  ],
];

describe("codeMode's value is checked at every door, the error naming it", () => {
  for (const [door, start] of doors)
    it(door, async () => {
      for (const [option, named] of [
        [{ timeoutMs: -1 }, "-1"],
        [{ timeoutMs: Number.NaN }, "NaN"],
        [{ memoryMb: 4096 }, "4096"],
        [{ maxCalls: 0 }, "0"],
        [{ exclusive: "yes" }, "yes"],
        [{ tools: "lookup" }, "lookup"],
        [{ tools: ["nope"] }, "nope"],
        [{ colour: 1 }, "colour"],
        ["on", "on"],
      ] as const) {
        let error: unknown;
        try {
          await start(option);
        } catch (thrown) {
          error = thrown;
        }
        expect(isAgentError(error), `${door} ${JSON.stringify(option)}`).toBe(true);
        expect((error as Error).message).toContain("codeMode");
        expect((error as Error).message).toContain(named);
      }
    });
});
