import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  agentLoop,
  ContextOverflowError,
  estimateTokens,
  extendSession,
  initSession,
  slidingWindow,
  summarizeOlderTurns,
  type AgentEvent,
  type ModelMessage,
  type ModelStreamEvent,
  type Session,
} from "simple-agent-loop";
import { closeSession, loadEntries, loadSession, openSession } from "simple-agent-loop/store";
import { scriptedModel } from "simple-agent-loop/testing";
import { expectEveryCallAnsweredOnce, withoutTs } from "./helpers.ts";

// Turn n calls `read` once; the model reports usage as it would: per message of the prompt it got.
const reading = (turns: number, tokensPerMessage: number) =>
  scriptedModel([
    ...Array.from({ length: turns }, (_, turn) => (session: Session): ModelMessage[] => [
      {
        type: "tool_call",
        id: `r${turn}`,
        name: "read",
        input: { file: `f${turn}` },
        usage: { inputTokens: session.messages.length * tokensPerMessage, outputTokens: 10 },
      },
    ]),
    [{ role: "assistant", content: "done" }],
  ]);

describe("context strategies", () => {
  it("slidingWindow keeps the system prompt, the task and the last turns; calls stay with their results", async () => {
    const model = reading(6, 100);
    const session = await agentLoop(model, [], initSession("s", "the task"), {
      toolHandlers: { read: () => "contents" },
      compaction: slidingWindow({ keepTurns: 2 }),
    });
    const lastCall = model.calls.at(-1)!;
    expect(lastCall.messages.slice(0, 2).map((message) => ("role" in message ? message.content : ""))).toStrictEqual([
      "s",
      "the task",
    ]);
    expect(lastCall.messages.length).toBeLessThanOrEqual(6);
    expectEveryCallAnsweredOnce(lastCall);
    expectEveryCallAnsweredOnce(session);
  });

  it("summarizeOlderTurns: past the threshold, older turns become a summary written by a subagent; persisted as a splice", async () => {
    const summarizer = scriptedModel([
      (session) => [
        {
          role: "assistant",
          content: `SUMMARY(${(session.messages[1] as { content: string }).content.split("\n").length} lines)`,
        },
      ],
    ]);
    const model = reading(5, 100);
    const path = join(mkdtempSync(join(tmpdir(), "sal-ctx-")), "s.jsonl");
    const session = await openSession(path);
    extendSession(session, { role: "system", content: "s" });
    extendSession(session, { role: "user", content: "the task" });
    const events: AgentEvent[] = [];
    await agentLoop(model, [], session, {
      toolHandlers: { read: () => "contents" },
      compaction: summarizeOlderTurns({ invokeModel: summarizer, contextWindow: 1000, threshold: 0.8, keepTurns: 2 }),
      onEvent: (event) => events.push(event),
    });
    await closeSession(session);
    expect(summarizer.callCount).toBe(1);
    const summary = session.messages[2];
    expect(summary).toMatchObject({
      role: "user",
      content: expect.stringMatching(/^Summary of the earlier conversation:\nSUMMARY\(/),
      compactionSummary: true,
    });
    expectEveryCallAnsweredOnce(session);
    expect(events.some((event) => event.type === "compaction")).toBe(true);
    // The file replays to the same session, and records what the compaction did.
    expect(await loadSession(path)).toStrictEqual(session);
    const splice = (await loadEntries(path)).find((entry) => entry.type === "splice") as
      { details: Record<string, unknown>; removed: unknown[] } | undefined;
    expect(splice?.details).toMatchObject({
      strategy: "summary",
      summary: expect.stringContaining("SUMMARY"),
      tokensBefore: expect.any(Number),
      tokensAfter: expect.any(Number),
      firstKept: session.messages[3],
    });
    expect(splice!.details.tokensAfter as number).toBeLessThan(splice!.details.tokensBefore as number);
    expect(splice!.removed.length).toBeGreaterThan(0);
  });

  it("after a ContextOverflowError the strategy makes room once and the call is retried", async () => {
    const summarizer = scriptedModel([[{ role: "assistant", content: "short summary" }]]);
    let calls = 0;
    const model = (_tools: unknown, session: Session): ModelMessage[] => {
      calls++;
      if (session.messages.length > 6)
        throw new ContextOverflowError("prompt is too long", { provider: "test", status: 400 });
      return [{ role: "assistant", content: `answered with ${session.messages.length} messages` }];
    };
    const session = initSession("s", "the task");
    for (let turn = 0; turn < 4; turn++) {
      extendSession(session, { type: "tool_call", id: `c${turn}`, name: "t", input: {} });
      extendSession(session, { type: "tool_result", id: `c${turn}`, output: "x" });
    }
    await agentLoop(model, [], session, {
      compaction: summarizeOlderTurns({ invokeModel: summarizer, contextWindow: 1_000_000, keepTurns: 1 }),
    });
    expect(calls).toBe(2);
    expect(withoutTs(session).at(-1)).toMatchObject({
      role: "assistant",
      content: expect.stringMatching(/^answered with \d messages$/),
    });
    expectEveryCallAnsweredOnce(session);
  });

  it("an abort during the retry after an overflow keeps only what the retry streamed (the failed call's text is void)", async () => {
    const controller = new AbortController();
    let calls = 0;
    const model = async function* (): AsyncGenerator<ModelStreamEvent> {
      if (++calls === 1) {
        yield { type: "text-delta", delta: "void " };
        throw new ContextOverflowError("prompt is too long", { provider: "test", status: 400 });
      }
      yield { type: "text-delta", delta: "seen" };
      controller.abort();
      await new Promise(() => undefined);
    };
    const session = initSession("s", "the task");
    await agentLoop(model, [], session, { signal: controller.signal, compaction: slidingWindow({ keepTurns: 1 }) });
    expect(calls).toBe(2);
    expect(withoutTs(session).at(-1)).toStrictEqual({ role: "assistant", content: "seen", stopReason: "aborted" });
  });

  it("estimateTokens uses the last reported usage plus about a token per 4 characters after it", () => {
    const session = initSession("s", "u");
    extendSession(session, { role: "assistant", content: "a", usage: { inputTokens: 1000, outputTokens: 50 } });
    const base = estimateTokens(session.messages);
    extendSession(session, { role: "user", content: "x".repeat(400) });
    expect(base).toBe(1050);
    expect(estimateTokens(session.messages) - base).toBeGreaterThanOrEqual(100);
  });
});
