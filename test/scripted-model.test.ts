import { describe, expect, it } from "vitest";
import { initSession, type ModelStreamEvent, type ModelMessage } from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";

const context = () => ({ signal: new AbortController().signal, iteration: 1 });

describe("scriptedModel", () => {
  it("replays turns in order, records deep copies of each session and the tools, then fails clearly", async () => {
    const model = scriptedModel([
      [{ role: "assistant", content: "one" }],
      (session) => [{ role: "assistant", content: `saw ${session.messages.length}` }],
    ]);
    const session = initSession("s", "u");
    expect(await model([], session, context())).toStrictEqual([{ role: "assistant", content: "one" }]);
    session.messages.push({ role: "user", content: "again" });
    expect(await model([{ name: "t", description: "d", input_schema: {} }], session, context())).toStrictEqual([
      { role: "assistant", content: "saw 3" },
    ]);
    session.messages.length = 0;
    expect(model.calls.map((call) => call.messages.length)).toStrictEqual([2, 3]);
    expect(model.sessions).toBe(model.calls);
    expect(model.toolsSeen[1]?.[0]?.name).toBe("t");
    expect(model.callCount).toBe(2);
    expect(() => model([], session, context())).toThrow("scriptedModel: no turn scripted for call 3 (2 scripted)");
  });

  it("returns copies, so the loop cannot alter the script", async () => {
    const turn: ModelMessage[] = [{ type: "tool_call", id: "c", name: "t", input: { n: 1 } }];
    const model = scriptedModel([turn, turn]);
    const first = (await model([], initSession("s", "u"), context())) as ModelMessage[];
    (first[0] as unknown as { input: { n: number } }).input.n = 99;
    expect(await model([], initSession("s", "u"), context())).toStrictEqual(turn);
  });

  it("delays a turn (abortably) and fails a turn", async () => {
    const failure = new Error("scripted failure");
    const model = scriptedModel([
      { delayMs: 30, messages: [{ role: "assistant", content: "late" }] },
      { error: failure },
      { delay: 60_000 },
    ]);
    const started = Date.now();
    expect(await model([], initSession("s", "u"), context())).toStrictEqual([{ role: "assistant", content: "late" }]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
    await expect(model([], initSession("s", "u"), context())).rejects.toBe(failure);
    const controller = new AbortController();
    const pending = model([], initSession("s", "u"), { signal: controller.signal, iteration: 3 });
    controller.abort();
    await expect(pending).rejects.toThrow();
  });

  it("streams deltas, each message, then the turn's end", async () => {
    const model = scriptedModel(
      [
        [
          { role: "assistant", content: "Hello there, friend" },
          { type: "tool_call", id: "c", name: "t", input: { q: 1 }, stopReason: "tool_use" },
        ],
      ],
      { stream: true },
    );
    const events: ModelStreamEvent[] = [];
    for await (const event of model([], initSession("s", "u"), context()) as AsyncIterable<ModelStreamEvent>)
      events.push(event);
    expect(
      events
        .filter((event) => event.type === "text-delta")
        .map((event) => event.delta)
        .join(""),
    ).toBe("Hello there, friend");
    expect(
      events
        .filter((event) => event.type === "tool-call-delta")
        .map((event) => event.delta)
        .join(""),
    ).toBe('{"q":1}');
    expect(events.filter((event) => event.type !== "text-delta" && event.type !== "tool-call-delta")).toStrictEqual([
      { type: "message", message: { role: "assistant", content: "Hello there, friend" } },
      { type: "tool-call-start", id: "c", name: "t" },
      { type: "message", message: { type: "tool_call", id: "c", name: "t", input: { q: 1 } } },
      { type: "response-end", stopReason: "tool_use" },
    ]);
  });
});

it("a bare message is a one-message turn", async () => {
  const model = scriptedModel([{ role: "assistant", content: "hello" }]);
  expect(await model([], initSession("s", "u"), context())).toStrictEqual([{ role: "assistant", content: "hello" }]);
});
