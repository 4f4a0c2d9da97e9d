import { describe, expect, it } from "vitest";
import { agentStream, initSession, type AgentEvent } from "simple-agent-loop";
import {
  createRunRegistry,
  eventStreamResponse,
  readEventStream,
  uiMessageStreamResponse,
} from "simple-agent-loop/http";
import { scriptedModel } from "simple-agent-loop/testing";
import { expectEveryCallAnsweredOnce } from "../helpers.ts";
import { collect, gate } from "./helpers.ts";

function gatedModel() {
  return scriptedModel(
    [
      [
        { role: "assistant", content: "Waiting for the gate." },
        { type: "tool_call", id: "c1", name: "wait", input: {} },
      ],
      [{ role: "assistant", content: "Through the gate, done." }],
    ],
    { stream: true },
  );
}

const request = (url = "http://localhost/events", headers: Record<string, string> = {}) =>
  new Request(url, { headers });

describe("createRunRegistry", () => {
  it("serves every reader the whole run from its own offset: from the start, after Last-Event-ID, after ?after=", async () => {
    const registry = createRunRegistry();
    const { wait, open, inside } = gate();
    const runId = registry.start(agentStream(gatedModel(), [wait], initSession("s", "u")), { runId: "run-1" });
    expect(runId).toBe("run-1");
    await inside;
    const first = collect(readEventStream(registry.response(runId, request())));
    open();
    const all = await first;
    expect(all.at(-1)).toMatchObject({ type: "run-end", outcome: "done" });
    const fromHeader = await collect(
      readEventStream(registry.response(runId, request(undefined, { "last-event-id": "3" }))),
    );
    expect(fromHeader).toStrictEqual(all.slice(3));
    const fromQuery = await collect(
      readEventStream(registry.response(runId, request("http://localhost/events?after=5"))),
    );
    expect(fromQuery).toStrictEqual(all.slice(5));
    expect(registry.status(runId)).toBe("finished");
  });

  it("a reader that reconnects mid-run after its last id gets the rest once, no loss, no duplicate", async () => {
    const registry = createRunRegistry();
    const { wait, open, inside } = gate();
    const runId = registry.start(agentStream(gatedModel(), [wait], initSession("s", "u")));
    await inside;
    let lastId = "0";
    const before: AgentEvent[] = [];
    const response = registry.response(runId, request());
    const reader = readEventStream(response, { onId: (id) => (lastId = id) });
    for await (const event of reader) {
      before.push(event);
      if (event.type === "tool-execution-start") break; // the page reloads here
    }
    open();
    const after = await collect(
      readEventStream(registry.response(runId, request(undefined, { "last-event-id": lastId }))),
    );
    const everything = await collect(readEventStream(registry.response(runId, request())));
    expect([...before, ...after]).toStrictEqual(everything);
  });

  it("a reader that never reads slows neither the run nor another reader", async () => {
    const registry = createRunRegistry();
    const long = "piece ".repeat(5_000);
    const runId = registry.start(
      agentStream(scriptedModel([[{ role: "assistant", content: long }]], { stream: true }), [], initSession("s", "u")),
    );
    const stalled = await registry.response(runId, request());
    const stalledReader = stalled.body!.getReader();
    await stalledReader.read();
    const events = await collect(readEventStream(registry.response(runId, request())));
    expect(events.at(-1)).toMatchObject({ type: "run-end", outcome: "done" });
    expect(registry.status(runId)).toBe("finished");
    await stalledReader.cancel();
  });

  it("stop aborts the run, ends every reader after run-end, keeps the session valid; false for unknown or finished runs", async () => {
    const registry = createRunRegistry();
    const { wait, inside } = gate();
    const session = initSession("s", "u");
    const runId = registry.start(agentStream(gatedModel(), [wait], session));
    await inside;
    const readers = [
      collect(readEventStream(registry.response(runId, request()))),
      collect(readEventStream(registry.response(runId, request()))),
    ];
    expect(await registry.stop(runId)).toBe(true);
    for (const events of await Promise.all(readers))
      expect(events.at(-1)).toMatchObject({ type: "run-end", outcome: "aborted" });
    expectEveryCallAnsweredOnce(session);
    expect(session.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "aborted" });
    expect(await registry.stop(runId)).toBe(false);
    expect(await registry.stop("nobody")).toBe(false);
  });

  it("answers 404 for an unknown run, 400 for a bad resume point, 403 when authorize says no", async () => {
    const registry = createRunRegistry({
      authorize: (incoming) => incoming.headers.get("authorization") === "Bearer yes",
    });
    const ok = { authorization: "Bearer yes" };
    const runId = registry.start(agentStream(gatedModel(), [gate().wait], initSession("s", "u")));
    const unknown = await registry.response("nobody", request(undefined, ok));
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toStrictEqual({ error: expect.stringContaining("no run") });
    expect((await registry.response(runId, request(undefined, { ...ok, "last-event-id": "x1" }))).status).toBe(400);
    expect((await registry.response(runId, request("http://localhost/?after=-1", ok))).status).toBe(400);
    expect((await registry.response(runId, request("http://localhost/?after=999999", ok))).status).toBe(400);
    expect((await registry.response(runId, request())).status).toBe(403);
    expect((await registry.response("nobody", request())).status).toBe(403);
    await registry.stop(runId);
  });

  it("forgets a finished run after keepFinishedMs; refuses a malformed id or one still running", async () => {
    const registry = createRunRegistry({ keepFinishedMs: 0 });
    const stream = agentStream(scriptedModel([[{ role: "assistant", content: "hi" }]]), [], initSession("s", "u"));
    const runId = registry.start(stream, { runId: "short" });
    await stream.result;
    await expect.poll(async () => (await registry.response(runId, request())).status).toBe(404);
    expect(() => registry.start(stream, { runId: "a b" })).toThrow("runId must be");
    const { wait, inside } = gate();
    registry.start(agentStream(gatedModel(), [wait], initSession("s", "u")), { runId: "busy" });
    await inside;
    expect(() => registry.start(stream, { runId: "busy" })).toThrow("still going");
    expect(() => createRunRegistry({ keepFinishedMs: -1 })).toThrow("keepFinishedMs");
    await registry.stop("busy");
  });
});

describe("a run handed over right after agentStream", () => {
  const quick = () =>
    agentStream(
      scriptedModel([[{ role: "assistant", content: "Hello there" }]], { stream: true }),
      [],
      initSession("s", "u"),
    );

  it("keeps every event from run-start, even when result was read first (the web-chat example's order)", async () => {
    const registry = createRunRegistry();
    const stream = quick();
    void stream.result.catch(() => undefined);
    const runId = registry.start(stream);
    const events = await collect(readEventStream(registry.response(runId, request())));
    expect(events[0]).toStrictEqual({ type: "run-start" });
    expect(events.filter((event) => event.type === "text-delta").length).toBeGreaterThan(0);
    expect(events.at(-1)).toMatchObject({ type: "run-end", outcome: "done" });
    const direct = quick();
    void direct.result.catch(() => undefined);
    const streamed = await collect(readEventStream(eventStreamResponse(direct)));
    expect(streamed.map((event) => event.type)).toStrictEqual(events.map((event) => event.type));
  });

  it("refuses a stream whose run began before it was handed over, or that someone else iterates, naming why", async () => {
    const registry = createRunRegistry();
    const late = quick();
    const result = late.result;
    await Promise.resolve();
    await Promise.resolve();
    expect(() => registry.start(late)).toThrow("the run already began");
    expect(() => eventStreamResponse(late)).toThrow("the run already began");
    expect(() => uiMessageStreamResponse(late)).toThrow("the run already began");
    await result;
    const iterated = quick();
    const first = await iterated.next();
    expect(first.value).toStrictEqual({ type: "run-start" });
    expect(() => registry.start(iterated)).toThrow("iterated elsewhere");
    await iterated.return?.();
  });

  it("answers 405 for a method other than GET, 400 for a malformed run id, and calls authorize (a promise of a check too) before reading", async () => {
    const seen: [string, string | undefined][] = [];
    const registry = createRunRegistry({
      authorize: async (_request, runId, sessionId) => {
        seen.push([runId, sessionId]);
        return Promise.resolve(true);
      },
    });
    const runId = registry.start(quick(), { runId: "r1" });
    expect((await registry.response(runId, new Request("http://localhost/", { method: "POST" }))).status).toBe(405);
    expect((await registry.response("bad id", request())).status).toBe(400);
    expect(seen).toStrictEqual([]);
    const events = await collect(readEventStream(registry.response(runId, request())));
    expect(events.at(-1)).toMatchObject({ type: "run-end", outcome: "done" });
    expect(seen).toStrictEqual([["r1", undefined]]);
  });
});

describe("the options of simple-agent-loop/http", () => {
  it("are checked where they enter, naming the option", () => {
    const stream = () => agentStream(scriptedModel([]), [], initSession("s", "u"));
    const refusals: [() => unknown, string][] = [
      [() => createRunRegistry({ keepFinishedMs: "5" as unknown as number }), "keepFinishedMs"],
      [() => createRunRegistry({ heartbeatMs: -1 }), "heartbeatMs"],
      [() => createRunRegistry({ authorize: true as unknown as () => boolean }), "authorize"],
      [() => eventStreamResponse(stream(), { detach: "false" as unknown as boolean }), "detach"],
      [() => eventStreamResponse(stream(), { maxBufferedBytes: Number.NaN }), "maxBufferedBytes"],
      [() => uiMessageStreamResponse(stream(), { heartbeatMs: [1] as unknown as number }), "heartbeatMs"],
      [() => uiMessageStreamResponse(stream(), { messageId: 7 as unknown as string }), "messageId"],
    ];
    for (const [make, option] of refusals) expect(make).toThrow(option);
  });
});
