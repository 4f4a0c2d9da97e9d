import { describe, expect, it } from "vitest";
import { defineAgent, isAgentError, taskTools } from "simple-agent-loop";
import { restateAgent } from "simple-agent-loop/restate";
import { scriptedModel } from "simple-agent-loop/testing";
import { fitText } from "../../src/restate/step-size.ts";

describe("restateAgent checks its options when it is made, not inside a run", () => {
  const invokeModel = scriptedModel([]);
  const bad: [string, Parameters<typeof restateAgent>[0]][] = [
    ["maxStepBytes", { invokeModel, maxStepBytes: Number.NaN }],
    ["maxStepBytes", { invokeModel, maxStepBytes: 10 }],
    ["maxStepBytes", { invokeModel, maxStepBytes: Number.POSITIVE_INFINITY }],
    ["maxParallelTools", { invokeModel, options: { maxParallelTools: Number.NaN } }],
    ["toolTimeout", { invokeModel, options: { toolTimeout: -1 } }],
    ["maxIterations", { invokeModel, options: { maxIterations: Number.NaN } }],
    ["maxRetryAttempts", { invokeModel, modelRetry: { maxRetryAttempts: -1 } }],
    [
      "timeout",
      {
        invokeModel,
        tools: [{ name: "t", description: "d", input_schema: {}, handler: () => "", timeout: Number.NaN }],
      },
    ],
    ["whenIdle", { invokeModel, options: { backgroundTasks: { whenIdle: "end" } } }],
    [
      "whenIdle",
      {
        agent: defineAgent({
          name: "triage",
          systemPrompt: "s",
          invokeModel,
          handoffs: [
            defineAgent({
              name: "builder",
              systemPrompt: "s",
              invokeModel,
              options: { backgroundTasks: { whenIdle: "end" } },
            }),
          ],
        }),
      },
    ],
    ["wait_task", { invokeModel, tools: taskTools() }],
    ["wait_task", { agent: defineAgent({ name: "a", systemPrompt: "s", invokeModel, tools: taskTools() }) }],
  ];
  for (const [name, config] of bad) {
    it(`refuses a bad ${name}`, () => {
      let thrown: unknown;
      try {
        restateAgent(config);
      } catch (error) {
        thrown = error;
      }
      expect(isAgentError(thrown)).toBe(true);
      expect((thrown as Error).message).toContain(name);
    });
  }

  it("takes codeMode (its program's calls are journaled steps) and still checks its value", () => {
    expect(() => restateAgent({ invokeModel, options: { codeMode: true } })).not.toThrow();
    const coder = defineAgent({
      name: "coder",
      systemPrompt: "s",
      invokeModel,
      options: { codeMode: { maxCalls: 5 } },
    });
    expect(() => restateAgent({ agent: coder })).not.toThrow();
    expect(() => restateAgent({ invokeModel, options: { codeMode: { maxCalls: -1 } } })).toThrow(/codeMode/);
  });

  it("takes background tools, check_task and cancel_task: their tasks are journaled", () => {
    const build = { name: "build", description: "d", input_schema: {}, handler: () => "", background: true };
    const offered = [build, ...taskTools().filter((definition) => definition.name !== "wait_task")];
    expect(() => restateAgent({ invokeModel, tools: offered })).not.toThrow();
    expect(() =>
      restateAgent({ invokeModel, tools: [build], options: { backgroundTasks: { whenIdle: "wait" } } }),
    ).not.toThrow();
  });

  it("an error text is cut to what a step may hold, in UTF-8 bytes of its JSON", () => {
    for (const text of ["x".repeat(10_000), 'é\n"'.repeat(5_000), "😀".repeat(3_000)]) {
      const cut = fitText(text, 1000);
      expect(Buffer.byteLength(JSON.stringify(cut))).toBeLessThanOrEqual(1000);
      expect(cut).toMatch(/cut to fit maxStepBytes\)$/);
    }
    expect(fitText("short", 1000)).toBe("short");
  });
});
