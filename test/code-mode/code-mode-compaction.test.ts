import { describe, expect, it } from "vitest";
import {
  agentLoop,
  clearToolResults,
  codeModeName,
  keptOutput,
  slidingWindow,
  summarizeOlderTurns,
  initSession,
  type Message,
  type ModelMessage,
  type Session,
  type ToolResultMessage,
} from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import { lookup } from "./kilobyte-lookup.ts";
import { expectEveryCallAnsweredOnce } from "../helpers.ts";

// A program making 20 lookups that returns `returns` (JavaScript), with a comment making its code long.
function codeCall(id: string, returns: string): ModelMessage {
  const code = `// ${"a program that looks twenty records up and returns what the question needs ".repeat(3)}\nfor (let key = 0; key < 20; key++) await tools.lookup({ key });\nreturn ${returns};`;
  return { type: "tool_call", id, name: codeModeName, input: { code } };
}

function resultOf(messages: readonly Message[], id: string): ToolResultMessage | undefined {
  return messages.find(
    (message): message is ToolResultMessage => "type" in message && message.type === "tool_result" && message.id === id,
  );
}

function callOf(messages: readonly Message[], id: string): Message | undefined {
  return messages.find((message) => "type" in message && message.type === "tool_call" && message.id === id);
}

// What each model call was sent holds each code call with its result, or neither.
function expectPairsInEveryRequest(sent: readonly Session[], ids: readonly string[]): void {
  for (const [index, session] of sent.entries())
    for (const id of ids)
      expect(
        callOf(session.messages, id) === undefined,
        `request ${index + 1}, ${id}: its call and its result must be sent together or not at all`,
      ).toBe(resultOf(session.messages, id) === undefined);
}

const answer: ModelMessage = { role: "assistant", content: "done" };

describe("compaction, clearing and offloading with code calls", () => {
  it("slidingWindow drops a code call with its result, never one without the other", async () => {
    const model = scriptedModel([
      [codeCall("c1", "1")],
      [codeCall("c2", "2")],
      [codeCall("c3", "3")],
      [codeCall("c4", "4")],
      [answer],
    ]);
    const session = await agentLoop(model, [lookup], initSession("s", "u"), {
      codeMode: true,
      compaction: slidingWindow({ keepTurns: 2 }),
    });
    expectPairsInEveryRequest(model.calls, ["c1", "c2", "c3", "c4"]);
    // The window did drop the oldest code calls; what is kept keeps its record.
    expect(callOf(session.messages, "c1")).toBeUndefined();
    expect(resultOf(session.messages, "c4")?.programCalls).toHaveLength(20);
    expectEveryCallAnsweredOnce(session);
  });

  it("truncation cuts a code call's program but keeps the call, its result and the result's record", async () => {
    const model = scriptedModel([[codeCall("c1", "1")], [codeCall("c2", "2")], [codeCall("c3", "3")], [answer]]);
    const session = await agentLoop(model, [lookup], initSession("s", "u"), {
      codeMode: true,
      compaction: { keepTurns: 1, maxLength: 40, batch: 1 },
    });
    const call = callOf(session.messages, "c1");
    expect(call).toMatchObject({ compacted: true, input: { _compacted: expect.any(String) } });
    expect(resultOf(session.messages, "c1")).toMatchObject({ output: 1 });
    expect(resultOf(session.messages, "c1")?.programCalls).toHaveLength(20);
    expectPairsInEveryRequest(model.calls, ["c1", "c2", "c3"]);
    expectEveryCallAnsweredOnce(session);
  });

  it("clearToolResults decides by a code call's output, not its record: a short output stays, a long one is cleared with its call kept", async () => {
    const model = scriptedModel([
      [codeCall("short", "20")],
      [codeCall("long", "'y'.repeat(3000)")],
      [{ type: "tool_call", id: "r", name: "recall_output", input: { id: "long" } }],
      [answer],
    ]);
    const session = await agentLoop(model, [lookup], initSession("s", "u"), {
      codeMode: true,
      compaction: [clearToolResults({ keepLast: 0, minChars: 500, batch: 1 })],
    });
    // 20 KB of record, an output of 2 characters: not cleared.
    expect(resultOf(session.messages, "short")).toMatchObject({ output: 20 });
    expect(resultOf(session.messages, "short")?.kept).toBeUndefined();
    const cleared = resultOf(session.messages, "long")!;
    expect(cleared.kept).toBe("cleared");
    expect(cleared.programCalls).toHaveLength(20);
    expect(callOf(session.messages, "long")).toBeDefined();
    // recall_output gives back the program's output, not its record.
    expect(await keptOutput(session, "long")).toBe("y".repeat(3000));
    // (Its own result was cleared in turn before the next call: its kept copy is what it answered.)
    expect(await keptOutput(session, "r")).toBe("y".repeat(3000));
    expectPairsInEveryRequest(model.calls, ["short", "long", "r"]);
    expectEveryCallAnsweredOnce(session);
  });

  it("offloads a code call's long output (largeOutput) and keeps its record on the shortened result", async () => {
    const model = scriptedModel([[codeCall("c1", "'z'.repeat(5000)")], [answer]]);
    const session = await agentLoop(model, [lookup], initSession("s", "u"), {
      codeMode: true,
      largeOutput: { maxChars: 1000 },
    });
    const result = resultOf(session.messages, "c1")!;
    expect(result.kept).toBe("offloaded");
    expect(typeof result.output === "string" && result.output.length < 2000).toBe(true);
    expect(result.programCalls).toHaveLength(20);
    expect(await keptOutput(session, "c1")).toBe("z".repeat(5000));
    // A record of 20 KB is not an output: a short output with it is not offloaded.
    const short = await agentLoop(scriptedModel([[codeCall("c1", "1")], [answer]]), [lookup], initSession("s", "u"), {
      codeMode: true,
      largeOutput: { maxChars: 1000 },
    });
    expect(resultOf(short.messages, "c1")).toMatchObject({ output: 1, programCalls: expect.any(Array) });
    expect(resultOf(short.messages, "c1")?.kept).toBeUndefined();
  });

  it("summarizeOlderTurns measures a code call by its output and never shows the summarizer its record", async () => {
    const summarizer = scriptedModel([[{ role: "assistant", content: "earlier: two programs ran" }]]);
    const model = scriptedModel([
      [codeCall("c1", "'first answer'")],
      [codeCall("c2", "'second answer'")],
      [codeCall("c3", "'third answer'")],
      [answer],
    ]);
    // The record alone (about 60 KB, 15,000 tokens) would be far past 0.8 of this window; the
    // outputs and programs are not, until the summary is asked for by the overflow-free estimate.
    const session = await agentLoop(model, [lookup], initSession("s", "u"), {
      codeMode: true,
      compaction: summarizeOlderTurns({ invokeModel: summarizer, contextWindow: 300, keepTurns: 1 }),
    });
    expectPairsInEveryRequest(model.calls, ["c1", "c2", "c3"]);
    expectEveryCallAnsweredOnce(session);
    for (const request of summarizer.calls) {
      const text = JSON.stringify(request.messages);
      expect(text).not.toContain("record 3: xxx");
    }
    // Past the window the summary did replace older turns, the code calls with their results.
    expect(summarizer.callCount).toBeGreaterThan(0);
  });

  it("summarizeOlderTurns does not compact a session whose only bulk is code calls' records", async () => {
    const summarizer = scriptedModel([[{ role: "assistant", content: "never" }]]);
    const model = scriptedModel([[codeCall("c1", "1")], [codeCall("c2", "2")], [codeCall("c3", "3")], [answer]]);
    await agentLoop(model, [lookup], initSession("s", "u"), {
      codeMode: true,
      // 60 KB of records is about 15,000 tokens; the programs and outputs are a few hundred.
      compaction: summarizeOlderTurns({ invokeModel: summarizer, contextWindow: 5000, keepTurns: 1 }),
    });
    expect(summarizer.callCount).toBe(0);
  });
});
