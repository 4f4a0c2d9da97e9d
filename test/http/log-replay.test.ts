// A reader served from the log renders what a live reader rendered: for random scripted runs
// (reasoning, text, tool calls, calls that wait for approval), a reader cut after any event and
// reconnected with its last id (live -> log, log -> log, log -> live) ends with the same UI (the
// AI SDK's own `readUIMessageStream` over the UI message stream parts the events make) and the
// same session (the `message` events) as a reader that never left, and no message twice.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { agentStream, extendSession, tool, type AgentEvent, type Message, type ModelMessage } from "simple-agent-loop";
import { createRunRegistry, readEventStream, type RunRegistry } from "simple-agent-loop/http";
import { closeSession, fileStore, type SessionStore } from "simple-agent-loop/store";
import { scriptedModel } from "simple-agent-loop/testing";
import * as aiV7 from "ai-v7";
import { createUiChunkConverter, type UiMessageChunk } from "../../src/http/ui-message-chunks.ts";
import { tempDir } from "../store/helpers.ts";

const echo = tool({
  name: "echo",
  description: "echoes",
  inputSchema: { type: "object", properties: { text: { type: "string" } } },
  handler: ({ text }) => `echo ${String(text)}`,
});
const ask = tool({
  name: "ask",
  description: "needs a human",
  inputSchema: { type: "object", properties: { text: { type: "string" } } },
  requireApproval: true,
  handler: () => "asked",
});

const words = fc.string({ minLength: 1, maxLength: 60, size: "large" });
const turn = fc.record({
  thinking: fc.option(words, { nil: undefined }),
  text: fc.option(words, { nil: undefined }),
  calls: fc.array(fc.record({ tool: fc.constantFrom("echo", "ask"), text: words }), { maxLength: 2 }),
});

type TurnSpec = { thinking?: string | undefined; text?: string | undefined; calls: { tool: string; text: string }[] };

function script(turns: TurnSpec[]): ModelMessage[][] {
  let id = 0;
  const scripted = turns.map((spec) => {
    const messages: ModelMessage[] = [];
    if (spec.thinking !== undefined) messages.push({ type: "thinking", content: spec.thinking });
    if (spec.text !== undefined) messages.push({ role: "assistant", content: spec.text });
    for (const call of spec.calls)
      messages.push({ type: "tool_call", id: `c${++id}`, name: call.tool, input: { text: call.text } });
    return messages;
  });
  scripted.push([{ role: "assistant", content: "All done." }]);
  return scripted;
}

type Read = { id: string | undefined; event: AgentEvent }[];

async function read(registry: RunRegistry, runId: string, after?: string): Promise<Read> {
  const events: Read = [];
  let id: string | undefined;
  const headers: Record<string, string> = after === undefined ? {} : { "last-event-id": after };
  for await (const event of readEventStream(
    registry.response(runId, new Request("http://localhost/", { headers, signal: AbortSignal.timeout(3_000) })),
    {
      onId: (given) => (id = given),
    },
  ))
    events.push({ id, event });
  return events;
}

async function renderUi(events: readonly AgentEvent[]): Promise<unknown> {
  const convert = createUiChunkConverter();
  const chunks: UiMessageChunk[] = events.flatMap((event) => convert(event, false));
  const stream = new ReadableStream<aiV7.UIMessageChunk>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  let last: aiV7.UIMessage | undefined;
  for await (const message of aiV7.readUIMessageStream({ stream })) last = message;
  return last?.parts;
}

const messagesOf = (events: readonly AgentEvent[]): Message[] =>
  events.flatMap((event) => (event.type === "message" ? [event.message] : []));

async function expectSameRender(live: readonly AgentEvent[], resumed: readonly AgentEvent[]): Promise<void> {
  expect(messagesOf(resumed)).toStrictEqual(messagesOf(live));
  expect(await renderUi(resumed)).toStrictEqual(await renderUi(live));
  expect(resumed.filter((event) => event.type === "run-start")).toHaveLength(1);
  expect(resumed.at(-1)).toMatchObject({
    type: "run-end",
    outcome: live.at(-1)!.type === "run-end" ? (live.at(-1) as { outcome: string }).outcome : "",
  });
}

async function liveRun(store: SessionStore, id: string, turns: ModelMessage[][]) {
  const registry = createRunRegistry({ store });
  const session = await store.open(id);
  extendSession(session, { role: "system", content: "You help." });
  extendSession(session, { role: "user", content: "go" });
  const stream = agentStream(scriptedModel(turns, { stream: true }), [echo, ask], session);
  void stream.result.catch(() => undefined).finally(() => closeSession(session));
  const runId = registry.start(stream);
  const live = await read(registry, runId);
  await stream.result.catch(() => undefined);
  await closeSession(session);
  return { registry, runId, live };
}

describe("a reader served from the log renders what a live reader rendered", () => {
  it("for random runs, cut after any event: live -> log, log -> log, log -> live", async () => {
    const store = fileStore(tempDir());
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(turn, { minLength: 1, maxLength: 3 }),
        fc.nat({ max: 1_000_000 }),
        fc.nat({ max: 1_000_000 }),
        async (turns, liveCut, logCut) => {
          const { registry, runId, live } = await liveRun(store, `s${++run}`, script(turns));
          const liveEvents = live.map(({ event }) => event);
          // A registry that never held the run (a restart, another instance): the log.
          const fromLog = createRunRegistry({ store });
          const whole = await read(fromLog, runId);
          await expectSameRender(
            liveEvents,
            whole.map(({ event }) => event),
          );

          const cut = liveCut % live.length;
          const rest = await read(fromLog, runId, live[cut - 1]?.id);
          await expectSameRender(
            liveEvents,
            [...live.slice(0, cut), ...rest].map(({ event }) => event),
          );

          const at = logCut % whole.length;
          const lastLogId = whole[at - 1]?.id;
          const logRest = await read(fromLog, runId, lastLogId);
          await expectSameRender(
            liveEvents,
            [...whole.slice(0, at), ...logRest].map(({ event }) => event),
          );
          const liveRest = await read(registry, runId, lastLogId);
          await expectSameRender(
            liveEvents,
            [...whole.slice(0, at), ...liveRest].map(({ event }) => event),
          );
        },
      ),
      { numRuns: 150, endOnFailure: true },
    );
  }, 120_000);
});
