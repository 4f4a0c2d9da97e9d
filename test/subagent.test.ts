import { describe, expect, it } from "vitest";
import { agentLoop, initSession, response, tool, type ToolContext } from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import { expectEveryCallAnsweredOnce, withoutTs } from "./helpers.ts";

describe("subagents: a tool handler that runs its own agentLoop", () => {
  it("returns the inner agent's answer as the tool result; parallel subagents each get a fresh session", async () => {
    const innerSessions: string[] = [];
    const summarizer = scriptedModel(
      [0, 1].map(() => (session) => {
        const text = (session.messages[1] as { content: string }).content;
        innerSessions.push(text);
        return [{ role: "assistant", content: `summary of ${text}` }];
      }),
    );
    const summarize = tool({
      name: "summarize",
      description: "Summarize a text.",
      inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
      handler: async (input, context) => {
        const inner = initSession("You are a summarizer. Output only the summary.", String(input.text));
        const result = await agentLoop(summarizer, [], inner, {
          name: "summarizer",
          maxIterations: 1,
          signal: context.signal,
        });
        return response(result)?.content ?? "";
      },
    });
    const coordinator = scriptedModel([
      [
        { type: "tool_call", id: "s1", name: "summarize", input: { text: "alpha" } },
        { type: "tool_call", id: "s2", name: "summarize", input: { text: "beta" } },
      ],
      [{ role: "assistant", content: "both summarized" }],
    ]);
    const session = await agentLoop(coordinator, [summarize], initSession("coordinator", "summarize alpha and beta"));
    expect(withoutTs(session).slice(4, 6)).toStrictEqual([
      { type: "tool_result", id: "s1", output: "summary of alpha" },
      { type: "tool_result", id: "s2", output: "summary of beta" },
    ]);
    expect(innerSessions.sort()).toStrictEqual(["alpha", "beta"]);
    expect(summarizer.calls.every((call) => call.messages.length === 2)).toBe(true);
  });

  it("propagates abort into the inner run: the inner session ends aborted and the outer call gets an error result", async () => {
    const controller = new AbortController();
    let innerSession: ReturnType<typeof initSession> | undefined;
    const slowInner = scriptedModel([{ delay: 60_000, messages: [{ role: "assistant", content: "never" }] }]);
    const research = async (_input: unknown, context: ToolContext): Promise<string> => {
      innerSession = initSession("researcher", "dig");
      setTimeout(() => controller.abort(), 20);
      await agentLoop(slowInner, [], innerSession, { signal: context.signal });
      throw new Error(`inner run ended: ${response(innerSession)?.stopReason ?? "?"}`);
    };
    const outer = scriptedModel([[{ type: "tool_call", id: "r", name: "research", input: {} }]]);
    const session = await agentLoop(outer, [], initSession("s", "u"), {
      toolHandlers: { research },
      signal: controller.signal,
    });
    expect(response(innerSession!)).toMatchObject({ content: "", stopReason: "aborted" });
    expect(withoutTs(session).slice(3)).toStrictEqual([
      { type: "tool_result", id: "r", output: "Error: aborted before the tool finished", isError: true },
      { role: "assistant", content: "", stopReason: "aborted" },
    ]);
    expectEveryCallAnsweredOnce(session);
  });

  it("an inner failure is the outer tool's error result, not a crash of the outer run", async () => {
    const failing = scriptedModel([{ error: new Error("inner provider down") }]);
    const delegate = async (): Promise<string> => {
      const inner = await agentLoop(failing, [], initSession("inner", "x"));
      return response(inner)?.content ?? "";
    };
    const outer = scriptedModel([
      [{ type: "tool_call", id: "d", name: "delegate", input: {} }],
      [{ role: "assistant", content: "handled" }],
    ]);
    const session = await agentLoop(outer, [], initSession("s", "u"), { toolHandlers: { delegate } });
    expect(withoutTs(session)[3]).toStrictEqual({
      type: "tool_result",
      id: "d",
      output: "Error: inner provider down",
      isError: true,
    });
    expect(response(session)?.content).toBe("handled");
  });
});
