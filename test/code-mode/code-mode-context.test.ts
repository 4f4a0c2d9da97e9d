import { describe, expect, it } from "vitest";
import {
  agentLoop,
  codeModeName,
  contextUsage,
  estimateTokens,
  initSession,
  type Message,
  type ToolResultMessage,
} from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import { lookup } from "./kilobyte-lookup.ts";

// The session without the program's record: what a model is sent of it.
function withoutRecord(messages: readonly Message[]): Message[] {
  return messages.map((message) => {
    if (!("type" in message) || message.type !== "tool_result") return message;
    const { programCalls: _calls, logs: _logs, ...sent } = message;
    return sent;
  });
}

describe("a code call's programCalls and logs in the context estimates", () => {
  it("contextUsage and estimateTokens count the code call's output, not its program's record", async () => {
    const code =
      "let n = 0; for (let key = 0; key < 20; key++) { await tools.lookup({ key }); n++; } console.log('done', n); return n;";
    const model = scriptedModel([
      [{ type: "tool_call", id: "call_7", name: codeModeName, input: { code } }],
      [{ role: "assistant", content: "20 records" }],
    ]);
    const session = await agentLoop(model, [lookup], initSession("s", "u"), { codeMode: true });
    const result = session.messages.find(
      (message): message is ToolResultMessage => "type" in message && message.type === "tool_result",
    )!;
    expect(result.programCalls).toHaveLength(20);
    const sent = withoutRecord(session.messages);
    expect(estimateTokens(session.messages)).toBe(estimateTokens(sent));
    const usage = contextUsage(session);
    expect(usage).toStrictEqual(contextUsage({ messages: sent }));
    const results = usage.parts.find((part) => part.name === "tool_results")!;
    // 20 outputs of 1 KB would be over 5,000 tokens; the output `20` is a few.
    expect(results.tokens).toBeLessThan(50);
  });
});
