import { describe, expect, it } from "vitest";
import { contextUsage, estimateTokens, filePart, imagePart, tool, type Session } from "simple-agent-loop";

const tokens = (value: unknown): number => Math.ceil(JSON.stringify(value).length / 4);

describe("contextUsage", () => {
  it("splits the estimate into the named parts, per tool where it helps; total is their sum", () => {
    const read = tool({
      name: "read",
      description: "Read a file.",
      inputSchema: { type: "object" },
      handler: () => "",
    });
    const messages: Session["messages"] = [
      { role: "system", content: "You code." },
      { role: "user", content: "Fix the test." },
      { type: "thinking", content: "Look first." },
      { type: "tool_call", id: "c1", name: "read", input: { path: "a.ts" } },
      { type: "tool_call", id: "c2", name: "grep", input: { pattern: "x" } },
      { type: "tool_result", id: "c1", output: "a".repeat(400) },
      {
        type: "tool_result",
        id: "c2",
        output: "[output of grep cleared: 3.0 KB; recall_output with id c2 shows it again]",
        kept: "cleared",
      },
      { role: "assistant", content: "Done.", usage: { inputTokens: 321, outputTokens: 5 } },
    ];
    const usage = contextUsage({ messages }, { tools: [read], systemPrompt: "ignored: the session has one" });
    const part = (name: string) => usage.parts.find((entry) => entry.name === name)!;
    expect(usage.parts.map((entry) => entry.name)).toStrictEqual([
      "system",
      "tools",
      "user",
      "assistant",
      "thinking",
      "tool_calls",
      "tool_results",
      "cleared",
    ]);
    expect(part("system").tokens).toBe(tokens(messages[0]));
    expect(part("tools").items).toStrictEqual([
      { name: "read", tokens: tokens({ name: "read", description: "Read a file.", input_schema: { type: "object" } }) },
    ]);
    expect(
      part("tool_calls")
        .items!.map((item) => item.name)
        .sort(),
    ).toStrictEqual(["grep", "read"]);
    expect(part("tool_results").items).toStrictEqual([{ name: "read", tokens: tokens(messages[5]) }]);
    expect(part("cleared").items).toStrictEqual([{ name: "grep", tokens: tokens(messages[6]) }]);
    expect(usage.total).toBe(usage.parts.reduce((sum, entry) => sum + entry.tokens, 0));
    expect(usage.lastInputTokens).toBe(321);
    // The same estimate the compaction uses: messages alone agree within rounding.
    expect(
      Math.abs(usage.total - part("tools").tokens - estimateTokens(messages.slice(0, -1)) - tokens(messages[7])),
    ).toBeLessThanOrEqual(8);
  });

  it("counts the system prompt only when the session has no system message; no usage, no lastInputTokens", () => {
    const usage = contextUsage({ messages: [{ role: "user", content: "hi" }] }, { systemPrompt: "You help." });
    expect(usage.parts[0]).toStrictEqual({ name: "system", tokens: tokens({ role: "system", content: "You help." }) });
    expect(usage.lastInputTokens).toBeUndefined();
  });

  it("an offloaded result's marker counts as cleared, its head and tail as the tool's result", async () => {
    const { agentLoop, initSession } = await import("simple-agent-loop");
    const big = tool({
      name: "big",
      description: "Big.",
      inputSchema: { type: "object" },
      handler: () => "line\n".repeat(2000),
    });
    let turn = 0;
    const session = await agentLoop(
      () =>
        turn++ === 0
          ? [{ type: "tool_call", id: "b", name: "big", input: {} }]
          : [{ role: "assistant", content: "ok" }],
      [big],
      initSession("s", "go"),
      { largeOutput: { maxChars: 1000 } },
    );
    const usage = contextUsage(session);
    const cleared = usage.parts.find((entry) => entry.name === "cleared")!;
    expect(cleared.tokens).toBeGreaterThan(20);
    expect(cleared.tokens).toBeLessThan(60);
    expect(usage.parts.find((entry) => entry.name === "tool_results")!.items![0]!.name).toBe("big");
  });

  it("counts images and files by their token estimate, not by their base64, wherever they are", () => {
    const screenshot = imagePart(new Uint8Array(1024 * 1024), "image/png");
    const report = filePart(new Uint8Array(200 * 1024), "application/pdf", "report.pdf");
    const messages: Session["messages"] = [
      { role: "user", content: [{ type: "text", text: "What is on it?" }, screenshot, report] },
      { type: "tool_call", id: "c1", name: "screenshot", input: {} },
      {
        type: "tool_call",
        id: "c2",
        name: "screenshot",
        input: {},
        heldResult: { output: "held", content: [{ type: "text", text: "held" }, screenshot] },
      },
      {
        type: "tool_result",
        id: "c1",
        output: "p".repeat(400),
        content: [{ type: "text", text: "p".repeat(400) }, screenshot],
      },
    ];
    const usage = contextUsage({ messages });
    const part = (name: string) => usage.parts.find((entry) => entry.name === name)!.tokens;
    // A megabyte of base64 is about 350,000 tokens as characters; an image is counted as 1,600, a
    // 200 KB file as one token per 20 bytes, and the text around them as it is.
    expect(part("user")).toBeGreaterThanOrEqual(1600 + 10_240);
    expect(part("user")).toBeLessThan(1600 + 10_240 + 100);
    expect(part("tool_calls")).toBeGreaterThanOrEqual(1600);
    expect(part("tool_calls")).toBeLessThan(1600 + 100);
    // The result's 400 characters of text (100 tokens) are in its output and its text part: counted once.
    expect(part("tool_results")).toBeGreaterThanOrEqual(1600 + 100);
    expect(part("tool_results")).toBeLessThan(1600 + 100 + 40);
    expect(estimateTokens(messages)).toBeLessThan(4 * 1600 + 10_240 + 300);
  });
});
