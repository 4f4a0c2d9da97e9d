// The web chat example's server over real HTTP (no browser): a run's readers get every event from
// run-start, every bad request is a 4xx with a clear message that changes nothing, and a second
// browser sees nothing of the first (two cookie jars: its notes, its viewer link).
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { AgentEvent } from "simple-agent-loop";
import { readEventStream } from "simple-agent-loop/http";
import { scriptedModel, type ScriptedTurn } from "simple-agent-loop/testing";
import { startWebChat, type WebChat } from "../../examples/web-chat/server.ts";
import { collect } from "./helpers.ts";

const chats: WebChat[] = [];
const directories: string[] = [];
afterAll(async () => {
  await Promise.all(chats.map((chat) => chat.close()));
  await Promise.all(directories.map((directory) => rm(directory, { recursive: true, force: true })));
});

const writeMilk: ScriptedTurn[] = [
  [
    { role: "assistant", content: "Writing it down." },
    { type: "tool_call", id: "w1", name: "write_note", input: { title: "Task", text: "milk" } },
  ],
  [{ role: "assistant", content: "Saved it." }],
];

async function chat(
  script = writeMilk,
  viewer = false,
  maxViewers?: number,
): Promise<{ url: string; directory: string }> {
  const directory = await mkdtemp(join(tmpdir(), "web-chat-server-"));
  directories.push(directory);
  const started = await startWebChat({
    invokeModel: scriptedModel(script, { stream: true }),
    directory,
    viewer,
    ...(maxViewers === undefined ? {} : { maxViewers }),
  });
  chats.push(started);
  return { url: started.url, directory };
}

const owner = { cookie: "chat-user=owner-owner-owner-owner-1" };
const stranger = { cookie: "chat-user=stranger-stranger-stranger-2" };
const jsonHeaders = { "content-type": "application/json" };

async function post(url: string, body: string, headers: Record<string, string>): Promise<Response> {
  return fetch(url, { method: "POST", body, headers });
}

async function errorOf(response: Response): Promise<{ status: number; error: unknown }> {
  const text = await response.text();
  return { status: response.status, error: (JSON.parse(text) as { error?: unknown }).error };
}

describe("the web chat example's server", () => {
  it("a reader that asks right after the session is created gets run-start first, then the run paused for approval", async () => {
    const { url } = await chat();
    const created = await post(`${url}api/sessions`, JSON.stringify({ task: "remember milk" }), {
      ...owner,
      ...jsonHeaders,
    });
    expect(created.status).toBe(201);
    const { runId, sessionId } = (await created.json()) as { runId: string; sessionId: string };
    expect(runId).toBe(`${sessionId}:1`);
    const events: AgentEvent[] = await collect(
      readEventStream(fetch(`${url}api/runs/${encodeURIComponent(runId)}/events`, { headers: owner })),
    );
    expect(events[0]).toStrictEqual({ type: "run-start" });
    expect(events.filter((event) => event.type === "run-start")).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({ type: "run-end", outcome: "paused" });
  });

  it("answers bad input with a 4xx and a clear message, and changes nothing", async () => {
    const { url, directory } = await chat();
    const created = await post(`${url}api/sessions`, JSON.stringify({ task: "remember milk" }), {
      ...owner,
      ...jsonHeaders,
    });
    const { runId, sessionId } = (await created.json()) as { runId: string; sessionId: string };
    await collect(readEventStream(fetch(`${url}api/runs/${encodeURIComponent(runId)}/events`, { headers: owner })));
    const logFile = join(directory, `${sessionId}.jsonl`);
    const before = await readFile(logFile, "utf8");
    const filesBefore = (await readdir(directory)).sort();
    const approve = `${url}api/sessions/${sessionId}/approve`;
    const decision = JSON.stringify({ decisions: [{ id: "w1", approved: true }] });
    const refusals: [Promise<Response>, number, string][] = [
      [post(`${url}api/sessions`, "{not json", { ...owner, ...jsonHeaders }), 400, "JSON"],
      [
        post(`${url}api/sessions`, JSON.stringify({ task: "x" }), { ...owner, "content-type": "text/plain" }),
        415,
        "JSON",
      ],
      [
        post(`${url}api/sessions`, JSON.stringify({ task: "x".repeat(70_000) }), { ...owner, ...jsonHeaders }),
        413,
        "64 KB",
      ],
      [post(`${url}api/sessions`, JSON.stringify({ task: "x" }), jsonHeaders), 403, "chat id"],
      [post(approve, "{not json", { ...owner, ...jsonHeaders }), 400, "not valid JSON"],
      [post(approve, decision, { ...owner, "content-type": "text/plain" }), 415, "application/json"],
      [
        post(approve, JSON.stringify({ decisions: [{ id: "w1", approved: "yes" }] }), { ...owner, ...jsonHeaders }),
        400,
        "approved",
      ],
      [
        post(approve, JSON.stringify({ decisions: [{ id: "nope", approved: true }] }), { ...owner, ...jsonHeaders }),
        409,
        "",
      ],
      [post(approve, " ".repeat(2 * 1024 * 1024), { ...owner, ...jsonHeaders }), 413, "larger than"],
      [post(approve, decision, { ...stranger, ...jsonHeaders }), 403, "not allowed"],
      [post(`${url}api/sessions/unknownsession/approve`, decision, { ...owner, ...jsonHeaders }), 403, "not allowed"],
      [fetch(approve, { headers: owner }), 405, "POST"],
      [fetch(`${url}api/sessions/${sessionId}`, { headers: stranger }), 404, "no such session"],
      [fetch(`${url}api/runs/${encodeURIComponent(runId)}/events`, { headers: stranger }), 404, "no such run"],
      [fetch(`${url}api/runs/${encodeURIComponent(`${sessionId}:9`)}/events`, { headers: owner }), 404, "no run"],
      [post(`${url}api/runs/${encodeURIComponent(runId)}/stop`, "", stranger), 404, "no such run"],
    ];
    for (const [answer, status, message] of refusals) {
      const { status: got, error } = await errorOf(await answer);
      expect({ got, error }).toStrictEqual({ got: status, error: expect.stringContaining(message) });
    }
    expect(await readFile(logFile, "utf8")).toBe(before);
    expect((await readdir(directory)).sort()).toStrictEqual(filesBefore);
    // Deciding once goes through; the same decision again changes nothing.
    expect((await post(approve, decision, { ...owner, ...jsonHeaders })).status).toBe(202);
    await collect(
      readEventStream(fetch(`${url}api/runs/${encodeURIComponent(`${sessionId}:2`)}/events`, { headers: owner })),
    );
    const decided = await readFile(logFile, "utf8");
    const again = await errorOf(await post(approve, decision, { ...owner, ...jsonHeaders }));
    expect(again.status).toBe(409);
    expect(await readFile(logFile, "utf8")).toBe(decided);
  });

  it("a second browser sees nothing of the first: not its notes, not its session in the viewer it is linked to", async () => {
    const { url } = await chat(
      [
        ...writeMilk,
        [
          { role: "assistant", content: "Looking." },
          { type: "tool_call", id: "l1", name: "list_notes", input: {} },
        ],
        [{ role: "assistant", content: "Listed." }],
      ],
      true,
    );
    const start = async (who: { cookie: string }, task: string): Promise<{ runId: string; sessionId: string }> => {
      const created = await post(`${url}api/sessions`, JSON.stringify({ task }), { ...who, ...jsonHeaders });
      const ids = (await created.json()) as { runId: string; sessionId: string };
      await collect(readEventStream(fetch(`${url}api/runs/${encodeURIComponent(ids.runId)}/events`, { headers: who })));
      return ids;
    };
    const first = await start(owner, "remember milk");
    const decision = JSON.stringify({ decisions: [{ id: "w1", approved: true }] });
    const approved = await post(`${url}api/sessions/${first.sessionId}/approve`, decision, {
      ...owner,
      ...jsonHeaders,
    });
    expect(approved.status).toBe(202);
    await collect(
      readEventStream(fetch(`${url}api/runs/${encodeURIComponent(`${first.sessionId}:2`)}/events`, { headers: owner })),
    );
    const second = await start(stranger, "what notes are there?");
    const listed: AgentEvent[] = await collect(
      readEventStream(fetch(`${url}api/runs/${encodeURIComponent(second.runId)}/events`, { headers: stranger })),
    );
    const results = listed.filter(
      (event) => event.type === "message" && "type" in event.message && event.message.type === "tool_result",
    );
    expect(results).toHaveLength(1);
    expect(JSON.stringify(results[0])).toContain("No notes yet.");
    expect(JSON.stringify(listed)).not.toContain("milk");

    // Its viewer link opens a viewer of its own session only.
    const info = (await (await fetch(`${url}api/sessions/${second.sessionId}`, { headers: stranger })).json()) as {
      viewerUrl: string;
    };
    const viewerUrl = new URL(info.viewerUrl);
    const token = new URLSearchParams(viewerUrl.hash.slice(1)).get("token")!;
    const viewerGet = (path: string): Promise<Response> =>
      fetch(new URL(path, viewerUrl.origin), { headers: { "x-viewer-token": token } });
    const list = (await (await viewerGet("/api/sessions")).json()) as { sessions: { file?: string; name?: string }[] };
    expect(JSON.stringify(list)).toContain(second.sessionId);
    expect(JSON.stringify(list)).not.toContain(first.sessionId);
    const entries = await viewerGet(`/api/entries?file=${first.sessionId}.jsonl`);
    expect(entries.status).not.toBe(200);
    expect(await entries.text()).not.toContain("milk");
    const own = await viewerGet(`/api/entries?file=${second.sessionId}.jsonl`);
    expect(own.status).toBe(200);
    expect(await own.text()).toContain("what notes are there?");
  });

  it("runs at most maxViewers session viewers: one more closes the one asked for least recently, and asking for that session again starts a new one", async () => {
    const { url } = await chat(
      [[{ role: "assistant", content: "One." }], [{ role: "assistant", content: "Two." }]],
      true,
      1,
    );
    const start = async (task: string): Promise<string> => {
      const created = await post(`${url}api/sessions`, JSON.stringify({ task }), { ...owner, ...jsonHeaders });
      const { runId, sessionId } = (await created.json()) as { runId: string; sessionId: string };
      await collect(readEventStream(fetch(`${url}api/runs/${encodeURIComponent(runId)}/events`, { headers: owner })));
      return sessionId;
    };
    const viewerUrlOf = async (sessionId: string): Promise<URL> => {
      const info = (await (await fetch(`${url}api/sessions/${sessionId}`, { headers: owner })).json()) as {
        viewerUrl: string;
      };
      return new URL(info.viewerUrl);
    };
    const listed = async (viewerUrl: URL): Promise<string> => {
      const token = new URLSearchParams(viewerUrl.hash.slice(1)).get("token")!;
      const response = await fetch(new URL("/api/sessions", viewerUrl.origin), {
        headers: { "x-viewer-token": token },
      });
      return response.text();
    };
    const first = await start("first");
    const firstViewer = await viewerUrlOf(first);
    expect(await listed(firstViewer)).toContain(first);
    const second = await start("second");
    expect(await listed(await viewerUrlOf(second))).toContain(second);
    // The first session's viewer was closed to make room: its link no longer answers.
    await expect
      .poll(
        () =>
          listed(firstViewer).then(
            () => "answers",
            () => "closed",
          ),
        { timeout: 30_000 },
      )
      .toBe("closed");
    const again = await viewerUrlOf(first);
    expect(again.origin).not.toBe(firstViewer.origin);
    expect(await listed(again)).toContain(first);
  });
});
