import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  agentLoop,
  clearToolResults,
  initSession,
  keptOutput,
  notifySessionChange,
  spliceSession,
  tool,
  type AgentEvent,
  type InvokeModel,
  type Message,
  type ModelMessage,
  type Session,
  type ToolResultMessage,
} from "simple-agent-loop";
import { closeSession, loadEntries, openSession } from "simple-agent-loop/store";
import { sessionEditReaders } from "../src/session.ts";
import { expectEveryCallAnsweredOnce } from "./helpers.ts";

// `read` answers a file of `size` characters whose content names the file.
const read = tool({
  name: "read",
  description: "Read a file.",
  inputSchema: { type: "object", properties: { file: { type: "string" }, size: { type: "number" } } },
  handler: (input) => `${String(input.file)}:`.padEnd(Number(input.size), "x"),
});

// A model that reads `sizes.length` files, one a turn, then answers; it records the tools and
// the messages it was sent each call, and after the reads may call more tools (`then`).
function reader(sizes: readonly number[], then: ModelMessage[][] = []) {
  const sent: { tools: string[]; messages: Session["messages"] }[] = [];
  let turn = 0;
  const invokeModel: InvokeModel = (tools, session) => {
    sent.push({ tools: tools.map((schema) => schema.name), messages: structuredClone(session.messages) });
    const index = turn++;
    if (index < sizes.length)
      return [
        { type: "tool_call", id: `call_${index}`, name: "read", input: { file: `f${index}`, size: sizes[index]! } },
      ];
    return then[index - sizes.length] ?? [{ role: "assistant", content: "done" }];
  };
  return { invokeModel, sent };
}

const results = (session: Session): ToolResultMessage[] =>
  session.messages.filter(
    (message): message is ToolResultMessage => "type" in message && message.type === "tool_result",
  );

describe("clearToolResults", () => {
  it("clears nothing until a batch is clearable, then every clearable output at once, into one-line placeholders", async () => {
    const { invokeModel, sent } = reader(Array.from({ length: 8 }, () => 3000));
    const events: AgentEvent[] = [];
    const session = await agentLoop(invokeModel, [read], initSession("s", "read"), {
      compaction: clearToolResults({ keepLast: 2, minChars: 2000, batch: 4 }),
      onEvent: (event) => events.push(event),
    });
    expectEveryCallAnsweredOnce(session);
    // Results 0..3 become clearable (keepLast 2) once 6 results are in: before the 7th call.
    const clearedAt = sent.map((call) => call.messages.filter((message) => "kept" in message).length);
    expect(clearedAt).toStrictEqual([0, 0, 0, 0, 0, 0, 4, 4, 4]);
    // The requests before the batch share their prefix: nothing earlier was rewritten.
    for (let index = 1; index < 6; index++)
      expect(sent[index]!.messages.slice(0, sent[index - 1]!.messages.length)).toStrictEqual(sent[index - 1]!.messages);
    const outputs = results(session).map((result) => result.output);
    expect(outputs.slice(0, 4)).toStrictEqual(
      [0, 1, 2, 3].map(
        (index) => `[output of read cleared: 3.0 KB; recall_output with id call_${index} shows it again]`,
      ),
    );
    expect(results(session)[0]!.kept).toBe("cleared");
    // The last results stay whole until the next batch is clearable.
    expect((outputs[4] as string).length).toBe(3000);
    expect(events.filter((event) => event.type === "compaction")).toStrictEqual([
      { type: "compaction", count: 4, strategy: "clear-tool-results", tokensFreed: expect.any(Number) },
    ]);
    const freed = events.find((event) => event.type === "compaction") as { tokensFreed: number };
    expect(freed.tokensFreed).toBeGreaterThan((4 * (3000 - 100)) / 4);
    // The originals are kept in memory for recall_output, which the model is now offered, last.
    expect(await keptOutput(session, "call_0")).toBe("f0:".padEnd(3000, "x"));
    expect(sent[5]!.tools).toStrictEqual(["read"]);
    expect(sent[6]!.tools).toStrictEqual(["read", "recall_output"]);
  });

  it("leaves short outputs and the last keepLast results alone", async () => {
    const { invokeModel } = reader([100, 3000, 100, 3000, 3000]);
    const session = await agentLoop(invokeModel, [read], initSession("s", "read"), {
      compaction: clearToolResults({ keepLast: 2, batch: 1 }),
    });
    expect(results(session).map((result) => result.kept)).toStrictEqual([
      undefined,
      "cleared",
      undefined,
      undefined,
      undefined,
    ]);
  });

  it("recall_output reads a cleared output back, whole or by lines", async () => {
    const lines = tool({
      name: "lines",
      description: "Lines.",
      inputSchema: { type: "object" },
      handler: () => Array.from({ length: 500 }, (_, index) => `line ${index + 1}`).join("\n"),
    });
    let turn = 0;
    const answers: unknown[] = [];
    const invokeModel: InvokeModel = (_tools, session) => {
      const last = session.messages.at(-1)!;
      if ("type" in last && last.type === "tool_result" && turn > 2) answers.push(last.output);
      turn++;
      if (turn <= 2) return [{ type: "tool_call", id: `l${turn}`, name: "lines", input: {} }];
      if (turn === 3)
        return [
          { type: "tool_call", id: "r1", name: "recall_output", input: { id: "l1", startLine: 10, endLine: 12 } },
        ];
      if (turn === 4) return [{ type: "tool_call", id: "r2", name: "recall_output", input: { id: "nope" } }];
      return [{ role: "assistant", content: "done" }];
    };
    const session = await agentLoop(invokeModel, [lines], initSession("s", "go"), {
      compaction: clearToolResults({ keepLast: 1, batch: 1, minChars: 100 }),
    });
    expect(answers[0]).toBe("line 10\nline 11\nline 12");
    expect(answers[1]).toMatch(/^Error: no output is kept for call id "nope"/);
    expect(results(session).find((result) => result.id === "r2")!.isError).toBe(true);
  });

  it("records each clearing as a replace entry whose previous keeps the output; a resumed session recalls it", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "clear-")), "s.jsonl");
    const stored = await openSession(path);
    stored.messages.push(...initSession("s", "read").messages);
    const { invokeModel } = reader([3000, 3000, 3000]);
    await agentLoop(invokeModel, [read], stored, { compaction: clearToolResults({ keepLast: 1, batch: 2 }) });
    await closeSession(stored);
    // A cleared output is in the log once, where it entered; the replacement's previous refers to a blob.
    expect(readFileSync(path, "utf8").split("f1:".padEnd(3000, "x")).length - 1).toBe(1);
    const replaced = (await loadEntries(path)).filter((entry) => entry.type === "replace");
    expect(
      replaced.map((entry) => [
        (entry as { details?: unknown }).details,
        (entry as { previous: { output: string } }).previous.output.length,
      ]),
    ).toStrictEqual([
      [{ strategy: "clear-tool-results" }, 3000],
      [{ strategy: "clear-tool-results" }, 3000],
    ]);
    const resumed = await openSession(path);
    try {
      expect(await keptOutput(resumed, "call_1")).toBe("f1:".padEnd(3000, "x"));
    } finally {
      await closeSession(resumed);
    }
  });

  it("after a context overflow, clears whatever is clearable even below the batch", async () => {
    const { ContextOverflowError } = await import("simple-agent-loop");
    let calls = 0;
    let overflowed = false;
    const invokeModel: InvokeModel = (_tools, session) => {
      calls++;
      if (calls <= 2) return [{ type: "tool_call", id: `c${calls}`, name: "read", input: { file: "f", size: 5000 } }];
      if (!overflowed && !session.messages.some((message) => "kept" in message)) {
        overflowed = true;
        throw new ContextOverflowError("prompt is too long", { provider: "test", status: 400 });
      }
      return [{ role: "assistant", content: "done" }];
    };
    const session = await agentLoop(invokeModel, [read], initSession("s", "go"), {
      compaction: clearToolResults({ keepLast: 1, batch: 10 }),
    });
    expect(overflowed).toBe(true);
    expect(results(session).map((result) => result.kept)).toStrictEqual(["cleared", undefined]);
  });

  it("is part of the default compaction (keepLast 3, minChars 2,000, batch 10); truncation options alone do not clear", async () => {
    const events: AgentEvent[] = [];
    const byDefault = await agentLoop(
      reader(Array.from({ length: 14 }, () => 2500)).invokeModel,
      [read],
      initSession("s", "read"),
      {
        onEvent: (event) => events.push(event),
      },
    );
    // Ten results are clearable once thirteen are in: cleared before the 14th call, all at once.
    expect(results(byDefault).map((result) => result.kept === "cleared")).toStrictEqual([
      ...Array.from({ length: 10 }, () => true),
      ...Array.from({ length: 4 }, () => false),
    ]);
    expect(
      events.filter((event) => event.type === "compaction").map((event) => (event as { strategy: string }).strategy),
    ).toStrictEqual(["clear-tool-results"]);
    const truncationOnly = await agentLoop(
      reader(Array.from({ length: 14 }, () => 2500)).invokeModel,
      [read],
      initSession("s", "read"),
      {
        compaction: { keepTurns: 2 },
      },
    );
    expect(results(truncationOnly).some((result) => result.kept !== undefined)).toBe(false);
  });

  it("refuses options that are not counts", () => {
    expect(() => clearToolResults({ batch: 0 })).toThrow(/batch/);
    expect(() => clearToolResults({ keepLast: -1 })).toThrow(/keepLast/);
    expect(() => clearToolResults({ minChars: Number.NaN })).toThrow(/minChars/);
  });
});

describe("the loop's clearer reads only what is new, and clears exactly what a fresh read would", () => {
  it("reads the session again when messages it read were removed or replaced behind it", async () => {
    const { createClearer } = await import("../src/loop/clear-tool-results.ts");
    const turn = (id: string, size: number): Message[] => [
      { type: "tool_call", id, name: "read", input: {} },
      { type: "tool_result", id, output: `${id}:`.padEnd(size, "x") },
    ];
    const ids = (session: Session): string[] =>
      session.messages.flatMap((message) =>
        "type" in message && message.type === "tool_result" && message.kept === "cleared" ? [message.id] : [],
      );
    const options = { keepLast: 1, minChars: 50, batch: 4 };
    // Removed: the first turn leaves; what the clearer had read shifts to lower places.
    const clearer = createClearer(options);
    const session: Session = {
      messages: [{ role: "system", content: "s" }, ...turn("r1", 100), ...turn("r2", 100), ...turn("r3", 100)],
    };
    expect(clearer(session, "before-call")).toBe(0);
    session.messages.splice(1, 2);
    session.messages.push(...turn("r4", 100), ...turn("r5", 100), ...turn("r6", 10), ...turn("r7", 100));
    expect(clearer(session, "before-call")).toBe(4);
    expect(ids(session)).toStrictEqual(["r2", "r3", "r4", "r5"]);
    // Replaced: a result read as clearable is replaced by a short one before the batch is due.
    const again = createClearer(options);
    const other: Session = {
      messages: [{ role: "system", content: "s" }, ...turn("q1", 100), ...turn("q2", 100), ...turn("q3", 100)],
    };
    expect(again(other, "before-call")).toBe(0);
    other.messages[2] = { type: "tool_result", id: "q1", output: "short" };
    other.messages.push(...turn("q4", 100), ...turn("q5", 100));
    expect(again(other, "before-call")).toBe(0);
    other.messages.push(...turn("q6", 100));
    expect(again(other, "before-call")).toBe(4);
    expect(ids(other)).toStrictEqual(["q2", "q3", "q4", "q5"]);
  });

  it("reads the session again when messages were removed behind it without a notice and as many appended", async () => {
    const { createClearer } = await import("../src/loop/clear-tool-results.ts");
    const turn = (id: string, size: number): Message[] => [
      { type: "tool_call", id, name: "read", input: {} },
      { type: "tool_result", id, output: `${id}:`.padEnd(size, "x") },
    ];
    const clearer = createClearer({ keepLast: 1, minChars: 50, batch: 3 });
    const session: Session = {
      messages: [
        { role: "system", content: "s" },
        { role: "user", content: "u1" },
        { role: "user", content: "u2" },
        ...turn("r1", 100),
        ...turn("r2", 100),
        ...turn("r3", 10),
      ],
    };
    expect(clearer(session, "before-call")).toBe(0);
    // Two messages before the clearable results leave, two enter: the length is what it was.
    session.messages.splice(1, 2);
    session.messages.push(...turn("r4", 100));
    expect(clearer(session, "before-call")).toBe(0);
    session.messages.push(...turn("r5", 10));
    expect(clearer(session, "before-call")).toBe(3);
    expect(
      session.messages.flatMap((message) => ("kept" in message ? [(message as { id: string }).id] : [])),
    ).toStrictEqual(["r1", "r2", "r4"]);
  });

  it("over random sessions grown, cut and rewritten between calls, it matches a clearer made anew each call", async () => {
    const { createClearer } = await import("../src/loop/clear-tool-results.ts");
    let seed = 11;
    // The high bits: an LCG's low bits repeat with a short period.
    const random = (below: number): number =>
      Math.floor((seed = (seed * 1103515245 + 12345) % 2147483648) / 65536) % below;
    for (let trial = 0; trial < 200; trial++) {
      const options = { keepLast: random(4), minChars: 50, batch: 1 + random(4) };
      const incremental = createClearer(options);
      const kept: Session = { messages: [{ role: "system", content: "s" }] };
      const fresh: Session = structuredClone(kept);
      let id = 0;
      for (let step = 0; step < 40; step++) {
        const change = random(10);
        const both = (apply: (session: Session) => void): void => {
          apply(kept);
          apply(fresh);
        };
        if (change < 6) {
          // A turn: one or two calls and their results, short or long, sometimes search_tools or content.
          const calls = 1 + random(2);
          const made: { id: string; name: string; size: number; parts: boolean }[] = [];
          for (let call = 0; call < calls; call++)
            made.push({
              id: `c${++id}`,
              name: random(8) === 0 ? "search_tools" : "read",
              size: random(2) === 0 ? 10 : 100,
              parts: random(10) === 0,
            });
          both((session) => {
            for (const call of made)
              session.messages.push({ type: "tool_call", id: call.id, name: call.name, input: {} });
            for (const call of made)
              session.messages.push({
                type: "tool_result",
                id: call.id,
                output: "x".repeat(call.size),
                ...(call.parts ? { content: [{ type: "text" as const, text: "x".repeat(call.size) }] } : {}),
              });
          });
        } else if (change < 7) both((session) => session.messages.push({ role: "user", content: "more" }));
        else if (change < 8 && kept.messages.length > 3) {
          // A strategy removed some early messages (a sliding window: whole turns, no result without its call).
          let count = 1 + random(Math.min(4, kept.messages.length - 2));
          while (
            1 + count < kept.messages.length &&
            "type" in kept.messages[1 + count]! &&
            (kept.messages[1 + count] as { type: string }).type === "tool_result"
          )
            count++;
          // Half the time as a strategy records it (`spliceSession`), put back as as many summaries:
          // the length and the last message read may stay; only the notice says what moved.
          const summaries = random(2) === 0;
          both((session) => {
            if (!summaries) session.messages.splice(1, count);
            else {
              const inserted = Array.from({ length: count }, (_, at): Message => ({ role: "user", content: `s${at}` }));
              spliceSession(session, 1, count, inserted);
            }
          });
        } else if (change < 9 && kept.messages.length > 2) {
          // A strategy replaced a message by another object, with a notice as strategies give: a
          // user message by a summary, a result by a copy, a shorter one (no longer clearable) or a
          // longer one (clearable now).
          const index = 1 + random(kept.messages.length - 1);
          const previous = kept.messages[index]!;
          const size = [undefined, 10, 100][random(3)];
          const replace = (message: Message): void =>
            both((session) => {
              session.messages[index] = structuredClone(message);
              notifySessionChange(session, { type: "replace", index, message, previous, reason: "compaction" });
            });
          if ("role" in previous) replace({ role: "user", content: `summary ${index}` });
          else if (previous.type === "tool_result")
            replace({ ...previous, ...(size === undefined ? {} : { output: "y".repeat(size) }) });
        }
        const reason = random(12) === 0 ? "overflow" : "before-call";
        const counts = [incremental(kept, reason), createClearer(options)(fresh, reason)];
        expect(counts[0], `trial ${trial} step ${step}`).toBe(counts[1]);
        expect(kept.messages).toStrictEqual(fresh.messages);
      }
    }
  });
});

describe("following a session's edits", () => {
  it("ends with each run: 1,000 runs on one session (a clearer made per run, as the CLI does, and the defaults) leave no growing set of readers", async () => {
    const session = initSession("s", "read");
    const invokeModel: InvokeModel = () => [{ role: "assistant", content: "done" }];
    const counts: number[] = [];
    for (let run = 0; run < 1000; run++) {
      session.messages.push({ role: "user", content: `again ${run}` });
      await agentLoop(invokeModel, [read], session, {
        ...(run % 2 === 0 ? { compaction: [clearToolResults()] } : {}),
        onEvent: () => undefined,
      });
      counts.push(sessionEditReaders(session));
    }
    // The cache event's tracker follows the session once, whichever run made it.
    expect(Math.max(...counts)).toBeLessThanOrEqual(1);
    expect(counts.at(-1)).toBe(counts[0]);
  });
});
