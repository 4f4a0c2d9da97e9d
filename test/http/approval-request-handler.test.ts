import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { agentStream, extendSession, pendingApprovals, tool, type Session } from "simple-agent-loop";
import { approvalRequestHandler, createRunRegistry, readEventStream } from "simple-agent-loop/http";
import { closeSession, fileStore, type FileStore } from "simple-agent-loop/store";
import { scriptedModel } from "simple-agent-loop/testing";
import { expectEveryCallAnsweredOnce } from "../helpers.ts";
import { collect } from "./helpers.ts";

let directory: string;
let store: FileStore;
let ran: string[];

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), "approval-handler-"));
  store = fileStore(directory);
  ran = [];
});
afterEach(() => rm(directory, { recursive: true, force: true }));

const deleteFile = tool({
  name: "delete_file",
  description: "deletes a file",
  inputSchema: { type: "object", properties: { path: { type: "string" } } },
  requireApproval: true,
  handler: ({ path }) => {
    ran.push(String(path));
    return `deleted ${String(path)}`;
  },
});

function model() {
  return scriptedModel([
    [{ type: "tool_call", id: "c1", name: "delete_file", input: { path: "a.txt" } }],
    [{ role: "assistant", content: "Done." }],
  ]);
}

/** A stored session paused on one call that waits for approval, closed as a finished request leaves it. */
async function pausedSession(invokeModel = model()): Promise<void> {
  const session = await store.open("s1");
  extendSession(session, { role: "system", content: "s" });
  extendSession(session, { role: "user", content: "delete a.txt" });
  await agentStream(invokeModel, [deleteFile], session).result;
  await closeSession(session);
  expect(pendingApprovals(await store.load("s1"))).toHaveLength(1);
}

const allowed = (request: Request): boolean => request.headers.get("authorization") === "Bearer owner";

function post(body: unknown, headers: Record<string, string> = { authorization: "Bearer owner" }): Request {
  return new Request("http://localhost/approve", {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

describe("approvalRequestHandler", () => {
  it("records the page's decision on the stored session and resumes the run, streaming it", async () => {
    const invokeModel = model();
    await pausedSession(invokeModel);
    const handle = approvalRequestHandler({
      store,
      authorize: allowed,
      resume: (session) => agentStream(invokeModel, [deleteFile], session),
    });
    const response = await handle(post({ decisions: [{ id: "c1", approved: true }] }), "s1");
    expect(response.status).toBe(200);
    const events = await collect(readEventStream(response));
    expect(events.at(-1)).toMatchObject({ type: "run-end", outcome: "done" });
    expect(ran).toStrictEqual(["a.txt"]);
    await expect.poll(async () => (await store.load("s1")).messages.at(-1)).toMatchObject({ content: "Done." });
    const stored = await store.load("s1");
    expectEveryCallAnsweredOnce(stored);
    // The session was closed when the run ended: it can be opened again.
    await closeSession(await store.open("s1"));
  });

  it("with a registry, starts the resumed run there and answers 202 with its id", async () => {
    const invokeModel = model();
    await pausedSession(invokeModel);
    const registry = createRunRegistry();
    const handle = approvalRequestHandler({
      store,
      registry,
      authorize: allowed,
      runId: (sessionId) => `${sessionId}-resumed`,
      resume: (session: Session) => agentStream(invokeModel, [deleteFile], session),
    });
    const response = await handle(post({ id: "c1", approved: false, reason: "keep it" }), "s1");
    expect(response.status).toBe(202);
    expect(await response.json()).toStrictEqual({ runId: "s1-resumed" });
    const events = await collect(readEventStream(registry.response("s1-resumed", new Request("http://localhost/"))));
    expect(events.at(-1)).toMatchObject({ type: "run-end", outcome: "done" });
    expect(ran).toStrictEqual([]);
    const result = events.find((event) => event.type === "tool-execution-end");
    expect(result).toMatchObject({ result: { output: "Rejected: keep it", isError: true } });
  });

  it("refuses bad input with a 4xx and a clear message, changing nothing", async () => {
    await pausedSession();
    const handle = approvalRequestHandler({
      store,
      authorize: allowed,
      maxBodyBytes: 1000,
      resume: () => {
        throw new Error("must not resume");
      },
    });
    const file = join(directory, "s1.jsonl");
    const before = await stat(file);
    const cases: [Request, string, number, string][] = [
      [post({ id: "c1", approved: true }, {}), "s1", 403, "not allowed"],
      [post("{not json"), "s1", 400, "not valid JSON"],
      [post({ id: "c1" }), "s1", 400, '"approved" (true or false)'],
      [post({ decisions: [] }), "s1", 400, "decisions"],
      [post({ id: "c1", approved: true, padding: "x".repeat(5000) }), "s1", 413, "larger than 1000 bytes"],
      [post({ id: "c1", approved: true }), "nobody", 404, "no such session"],
      [post({ id: "c1", approved: true }), "../etc", 400, "invalid session id"],
      [post({ id: "c9", approved: true }), "s1", 409, 'no tool call "c9"'],
      [new Request("http://localhost/approve"), "s1", 405, "POST"],
    ];
    for (const [request, sessionId, status, message] of cases) {
      const response = await handle(request, sessionId);
      expect({ status: response.status, error: ((await response.json()) as { error: string }).error }).toStrictEqual({
        status,
        error: expect.stringContaining(message),
      });
    }
    const after = await stat(file);
    expect(after.size).toBe(before.size);
    expect(pendingApprovals(await store.load("s1"))).toHaveLength(1);
  });

  it("resolving twice: the second request is a 409 and the tool ran once", async () => {
    const invokeModel = model();
    await pausedSession(invokeModel);
    const handle = approvalRequestHandler({
      store,
      authorize: allowed,
      resume: (session) => agentStream(invokeModel, [deleteFile], session),
    });
    const first = await handle(post({ id: "c1", approved: true }), "s1");
    await collect(readEventStream(first));
    await expect.poll(async () => (await store.load("s1")).messages.at(-1)).toMatchObject({ content: "Done." });
    const second = await handle(post({ id: "c1", approved: true }), "s1");
    expect(second.status).toBe(409);
    expect(ran).toStrictEqual(["a.txt"]);
  });

  it("a session with a run in progress (locked by its writer) is a 409", async () => {
    await pausedSession();
    const open = await store.open("s1");
    const handle = approvalRequestHandler({
      store,
      authorize: allowed,
      resume: () => {
        throw new Error("no");
      },
    });
    const response = await handle(post({ id: "c1", approved: true }), "s1");
    expect(response.status).toBe(409);
    expect(await response.json()).toStrictEqual({ error: expect.stringContaining("a run is in progress") });
    await closeSession(open);
  });
});

describe("approvalRequestHandler: who decided", () => {
  it("records the server's user on the decision; a body carrying by is a 400 that changes nothing", async () => {
    const invokeModel = model();
    await pausedSession(invokeModel);
    const handle = approvalRequestHandler({
      store,
      authorize: allowed,
      user: (request) => request.headers.get("x-user") ?? undefined,
      resume: (session) => agentStream(invokeModel, [deleteFile], session),
    });
    const before = await store.load("s1");
    const forged = await handle(post({ decisions: [{ id: "c1", approved: true, by: "admin" }] }), "s1");
    expect(forged.status).toBe(400);
    expect(await store.load("s1")).toStrictEqual(before);
    expect(ran).toStrictEqual([]);
    const response = await handle(
      post({ id: "c1", approved: true }, { authorization: "Bearer owner", "x-user": "ana" }),
      "s1",
    );
    expect(response.status).toBe(200);
    await collect(readEventStream(response));
    const call = (await store.load("s1")).messages.find((message) => "type" in message && message.type === "tool_call");
    expect(call).toMatchObject({ approval: { status: "approved", decidedBy: { by: "human", user: "ana" } } });
    expect(ran).toStrictEqual(["a.txt"]);
  });
});
