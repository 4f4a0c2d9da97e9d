import { mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  agentLoop,
  forkSession,
  initSession,
  keptOutput,
  send,
  subagentTool,
  tool,
  type InvokeModel,
  type ModelMessage,
  type Session,
  type ToolResultMessage,
} from "simple-agent-loop";
import { closeSession, loadEntries, openSession } from "simple-agent-loop/store";
import { expectEveryCallAnsweredOnce } from "./helpers.ts";

// 5,000 numbered lines: about 53,000 characters.
const log = Array.from({ length: 5000 }, (_, index) => `log line ${index + 1}`).join("\n");
const test = tool({ name: "test", description: "Run the tests.", inputSchema: { type: "object" }, handler: () => log });

// Calls `test`, then each of `then`'s turns, then answers; records what it was sent.
function model(then: ((session: Session) => ModelMessage[])[] = []) {
  const sent: { tools: string[]; session: Session }[] = [];
  const invokeModel: InvokeModel = (tools, session) => {
    sent.push({ tools: tools.map((schema) => schema.name), session: structuredClone(session) });
    const turn = sent.length - 1;
    if (turn === 0) return [{ type: "tool_call", id: "call_7", name: "test", input: {} }];
    return then[turn - 1]?.(session) ?? [{ role: "assistant", content: "done" }];
  };
  return { invokeModel, sent };
}

const resultOf = (session: Session, id: string): ToolResultMessage =>
  session.messages.find(
    (message): message is ToolResultMessage => "type" in message && message.type === "tool_result" && message.id === id,
  )!;

const recall =
  (input: object): ((session: Session) => ModelMessage[]) =>
  () => [
    {
      type: "tool_call",
      id: `recall_${Object.values(input).join("_")}`,
      name: "recall_output",
      input: { id: "call_7", ...input },
    },
  ];

describe("largeOutput", () => {
  it("recall_output is offered to the run whose output was kept, from its next call, and not to a run beside it", async () => {
    const small = tool({
      name: "test",
      description: "Run the tests.",
      inputSchema: { type: "object" },
      handler: () => "ok",
    });
    const offloads = model([() => [{ type: "tool_call", id: "call_8", name: "test", input: {} }]]);
    const beside = model([() => [{ type: "tool_call", id: "call_8", name: "test", input: {} }]]);
    // Turn by turn together: the second run's calls come after the first kept an output.
    await Promise.all([
      agentLoop(offloads.invokeModel, [test], initSession("s", "go"), { largeOutput: { maxChars: 2000 } }),
      agentLoop(beside.invokeModel, [small], initSession("s", "go"), { largeOutput: { maxChars: 2000 } }),
    ]);
    expect(offloads.sent.map((call) => call.tools)).toStrictEqual([
      ["test"],
      ["test", "recall_output"],
      ["test", "recall_output"],
    ]);
    expect(beside.sent.map((call) => call.tools)).toStrictEqual([["test"], ["test"], ["test"]]);
  });

  it("a long output enters as its head and tail around a marker, at most maxChars; recall_output is then offered, last", async () => {
    const { invokeModel, sent } = model();
    const session = await agentLoop(invokeModel, [test], initSession("s", "go"), { largeOutput: { maxChars: 2000 } });
    const result = resultOf(session, "call_7");
    expect(result.kept).toBe("offloaded");
    const output = result.output as string;
    expect(output.length).toBeLessThanOrEqual(2000);
    expect(output.startsWith("log line 1\nlog line 2\n")).toBe(true);
    expect(output.endsWith("log line 4999\nlog line 5000")).toBe(true);
    const marker =
      /\[… ([\d,]+) characters omitted \(lines ([\d,]+)–([\d,]+) of 5,000\); recall_output with id call_7 and startLine\/endLine reads them …\]/.exec(
        output,
      );
    expect(marker).not.toBeNull();
    // What the marker says was left out is exactly what is missing.
    const [, omitted, first, last] = marker!.map((group) => Number(group.replaceAll(",", "")));
    const head = output.slice(0, marker!.index - 1);
    expect(head.split("\n").length).toBe(first! - 1);
    const tail = output.slice(marker!.index + marker![0].length + 1);
    expect(log.length - head.length - tail.length - 2).toBe(omitted);
    expect(log.split("\n").slice(last).join("\n")).toBe(output.slice(marker!.index + marker![0].length + 1));
    expect(await keptOutput(session, "call_7")).toBe(log);
    expect(sent.map((call) => call.tools)).toStrictEqual([["test"], ["test", "recall_output"]]);
  });

  it("measures a JSON output as it is shown (indented): exactly maxChars enters whole, one more is offloaded", async () => {
    const maxChars = 300;
    // Indented, { "rows": [ "..." ] } is 26 characters around its string.
    const output = (length: number): { rows: string[] } => ({ rows: ["x".repeat(length - 26)] });
    expect(JSON.stringify(output(maxChars), null, 2)).toHaveLength(maxChars);
    for (const [length, kept] of [
      [maxChars, undefined],
      [maxChars + 1, "offloaded"],
    ] as const) {
      const rows = tool({
        name: "test",
        description: "Rows.",
        inputSchema: { type: "object" },
        handler: () => output(length),
      });
      const session = await agentLoop(model().invokeModel, [rows], initSession("s", "go"), {
        largeOutput: { maxChars },
      });
      expect(resultOf(session, "call_7").kept, `length ${length}`).toBe(kept);
      if (kept === undefined) expect(resultOf(session, "call_7").output).toStrictEqual(output(length));
    }
  });

  it("is on by default at 40,000 characters, and off with false", async () => {
    const first = await agentLoop(model().invokeModel, [test], initSession("s", "go"));
    expect((resultOf(first, "call_7").output as string).length).toBeLessThanOrEqual(40_000);
    const off = await agentLoop(model().invokeModel, [test], initSession("s", "go"), { largeOutput: false });
    expect(resultOf(off, "call_7").output).toBe(log);
    expect(resultOf(off, "call_7").kept).toBeUndefined();
  });

  it("recall_output answers lines from 1, end included, capped at maxChars with a note saying how to read on", async () => {
    const { invokeModel } = model([recall({ startLine: 100, endLine: 102 }), recall({ startLine: 1 })]);
    const session = await agentLoop(invokeModel, [test], initSession("s", "go"), { largeOutput: { maxChars: 2000 } });
    const answers = session.messages
      .filter((message): message is ToolResultMessage => "type" in message && message.type === "tool_result")
      .slice(1)
      .map((result) => result.output as string);
    expect(answers[0]).toBe("log line 100\nlog line 101\nlog line 102");
    expect(answers[1]!.length).toBeLessThanOrEqual(2000);
    expect(answers[1]).toMatch(
      /\n\[cut at 2,000 characters: lines 1–(\d+) of 5,000 shown; read on with startLine (\d+)\]$/,
    );
    const [, shown, next] = /lines 1–(\d+) of 5,000 shown; read on with startLine (\d+)/.exec(answers[1]!)!;
    expect(Number(next)).toBe(Number(shown) + 1);
    expect(answers[1]!.split("\n").slice(0, -1)).toStrictEqual(log.split("\n").slice(0, Number(shown)));
  });

  it("a bound session keeps the whole output in the store, written before the result; a resumed or forked session recalls it", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "offload-")), "s.jsonl");
    const stored = await openSession(path);
    stored.messages.push(...initSession("s", "go").messages);
    await agentLoop(model().invokeModel, [test], stored, { largeOutput: { maxChars: 2000 } });
    await closeSession(stored);
    const entries = await loadEntries(path);
    const kept = entries.findIndex((entry) => entry.type === "kept");
    const result = entries.findIndex(
      (entry) => entry.type === "message" && (entry as { message: { type?: string } }).message.type === "tool_result",
    );
    expect(kept).toBeGreaterThan(-1);
    expect(kept).toBeLessThan(result);
    // The log line refers to a content-addressed blob beside the log; the log itself stays small.
    const line = readFileSync(path, "utf8")
      .split("\n")
      .find((text) => text.includes('"kept"') && text.includes('"blob"'))!;
    const hash = (JSON.parse(line) as { blob: string }).blob;
    expect(readFileSync(join(path.replace(/\.jsonl$/, ".blobs"), hash), "utf8")).toBe(log);
    expect(statSync(path).size).toBeLessThan(log.length / 4);
    const resumed = await openSession(path);
    try {
      const fork = forkSession(resumed);
      send(resumed, "again");
      const { invokeModel, sent } = model();
      // The resumed run's first call reads line 3 back: recall_output is offered from the start.
      const read: ModelMessage[] = [
        { type: "tool_call", id: "again", name: "recall_output", input: { id: "call_7", startLine: 3, endLine: 3 } },
      ];
      let turn = 0;
      await agentLoop(
        (tools, session, context) => (turn++ === 0 ? read : invokeModel(tools, session, context)),
        [test],
        resumed,
      );
      expect(resultOf(resumed, "again").output).toBe("log line 3");
      expect(await keptOutput(fork, "call_7")).toBe(log);
      expect(sent[0]!.tools).toStrictEqual(["test", "recall_output"]);
    } finally {
      await closeSession(resumed);
    }
  });

  it("works in a subagent: its own output is offloaded and recalled within its run", async () => {
    const inner = model([recall({ startLine: 5000 })]);
    const reviewer = subagentTool({
      name: "reviewer",
      description: "Reviews the test log.",
      systemPrompt: "Review.",
      invokeModel: inner.invokeModel,
      tools: [test],
      loopOptions: { largeOutput: { maxChars: 1000 } },
    });
    const outer: InvokeModel = (_tools, session) =>
      session.messages.length === 2
        ? [{ type: "tool_call", id: "sub", name: "reviewer", input: { prompt: "review" } }]
        : [{ role: "assistant", content: "ok" }];
    const session = await agentLoop(outer, [reviewer], initSession("s", "go"));
    expectEveryCallAnsweredOnce(session);
    const innerSession = inner.sent.at(-1)!.session;
    expect(resultOf(innerSession, "recall_5000").output).toBe("log line 5000");
  });

  it("refuses a maxChars too small to hold a marker", async () => {
    await expect(
      agentLoop(model().invokeModel, [test], initSession("s", "go"), { largeOutput: { maxChars: 10 } }),
    ).rejects.toThrow(/largeOutput\.maxChars/);
  });
});
