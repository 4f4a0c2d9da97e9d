// The store encoding cases against Restate's session state on a real restate-server: a session
// holding NUL, lone surrogates and long strings in every field (the seed's, and what calls and
// results carry: approval decisions, program calls, console lines, task records) is imported, read
// back, continued by a durable run whose model and tool write such strings again, and exported to a
// file store: equal at each step.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  extendSession,
  initSession,
  tool,
  type InvokeModel,
  type Session,
  type ToolResultMessage,
} from "simple-agent-loop";
import { restateAgent, restateAgentClient } from "simple-agent-loop/restate";
import { closeSession, fileStore } from "simple-agent-loop/store";
import { tempDir } from "../store/helpers.ts";
import { serveInProcess, startRestateServer, type RestateServer } from "./restate-server.ts";

const odd = "a\u0000b \ud800 c\udfff d\u0000";
// Long, but under a step's default size limit (maxStepBytes, which a longer output is cut to) and the
// ingress's request limit (an import of a log with 10 MB strings in four fields, 42 MB, is refused there).
const long = "z".repeat(1024 * 1024);

const echo = tool({
  name: "echo",
  description: "Echoes.",
  inputSchema: { type: "object" },
  handler: (input) => ({ echoed: input[odd] ?? null, odd }),
});

const model: InvokeModel = (_tools, session) => {
  const last = session.messages.at(-1)!;
  if ("role" in last && last.role === "user")
    return [
      { type: "thinking", content: odd, signature: odd },
      { type: "tool_call", id: `call ${odd}`, name: "echo", input: { [odd]: odd, long } },
    ];
  return [{ role: "assistant", content: `done ${odd}` }];
};

// A session as a store would hold one, with the odd strings in every field.
function oddSession(): Session {
  const session: Session = { messages: [] };
  for (const message of initSession(`s ${odd}`, `${odd} ${long}`).messages) extendSession(session, message);
  const consulted = [
    { by: "rule" as const, rule: `rule ${odd}`, action: "ask" as const, reason: odd },
    { by: "classifier" as const, name: odd, decision: "unsure" as const, reason: odd, model: odd, error: odd },
  ];
  for (const message of [
    {
      type: "tool_call" as const,
      id: `a ${odd}`,
      name: "deploy",
      input: { [odd]: odd },
      approval: {
        status: "approved" as const,
        reason: odd,
        input: { [odd]: odd },
        decidedBy: { by: "human" as const, user: odd, reason: odd },
        consulted,
        at: "2026-01-01T00:00:00.000Z",
      },
    },
    { type: "tool_call" as const, id: `code ${odd}`, name: "run_code", input: { code: odd } },
  ])
    extendSession(session, message);
  const task = { id: `task_${odd}`, onRestart: "lost" as const, attempt: 1, startedAt: "2026-01-01T00:00:00.000Z" };
  extendSession(session, {
    type: "tool_result",
    id: `a ${odd}`,
    output: odd,
    task: { ...task, status: "completed", output: { odd, long }, content: [{ type: "text", text: odd }], reason: odd },
  } satisfies ToolResultMessage);
  extendSession(session, {
    type: "tool_result",
    id: `code ${odd}`,
    output: odd,
    programCalls: [{ id: `code ${odd}.1`, name: odd, input: { [odd]: [odd] }, output: { odd, long }, isError: true }],
    logs: [odd, long],
  });
  extendSession(session, { role: "assistant", content: odd });
  return session;
}

let server: RestateServer;
let close: (() => Promise<void>) | undefined;
beforeAll(async () => {
  server = await startRestateServer();
  close = await serveInProcess(server, [restateAgent({ name: "encoding", invokeModel: model, tools: [echo] })]);
}, 120_000);
afterAll(async () => {
  await close?.();
  await server?.stop();
}, 60_000);

describe("Restate's session state holds every string a session can", () => {
  it("imported, read back, continued by a durable run, exported: equal at each step", async () => {
    const store = fileStore(tempDir());
    const original = await store.open("odd");
    for (const message of oddSession().messages) extendSession(original, message);
    await closeSession(original);
    const stored = await store.load("odd");

    const client = restateAgentClient({ url: server.ingressUrl, name: "encoding" });
    expect(await client.importFrom("odd", store, { id: "odd" })).toStrictEqual(stored);
    expect(await client.session("odd")).toStrictEqual(stored);

    expect(await client.run("odd", { message: `more ${odd}` })).toMatchObject({
      outcome: "done",
      response: `done ${odd}`,
    });
    const continued = await client.session("odd");
    expect(continued.messages.slice(0, stored.messages.length)).toStrictEqual(stored.messages);
    const added = continued.messages.slice(stored.messages.length);
    expect(added.map((message) => ("role" in message ? message.role : message.type))).toStrictEqual([
      "user",
      "thinking",
      "tool_call",
      "tool_result",
      "assistant",
    ]);
    expect(added[0]).toMatchObject({ content: `more ${odd}` });
    expect(added[1]).toMatchObject({ content: odd, signature: odd });
    expect(added[2]).toMatchObject({ id: `call ${odd}`, input: { [odd]: odd, long } });
    expect(added[3]).toMatchObject({ output: { echoed: odd, odd } });

    const exported = await client.exportTo("odd", store, { id: "odd-back" });
    expect(exported).toStrictEqual(continued);
    expect(await store.load("odd-back")).toStrictEqual(continued);
  }, 120_000);
});
