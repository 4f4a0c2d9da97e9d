// A small web chat on node:http: type a task, watch text and tool calls stream, approve or deny the
// tool that needs approval, reload mid-run and see the run go on, open the session in the viewer.
// `npm run example:web`: a live model when ANTHROPIC_API_KEY / OPENAI_API_KEY / OPENAI_BASE_URL is
// set, the offline demo model otherwise. Each browser gets its own id (a cookie); a session is
// readable and decidable only by the browser that started it (the `authorize` hook). Each session
// has its own notes, and its viewer link opens a viewer of that one session's log (its own token),
// so no link a browser is given reads another browser's session.
import { randomBytes } from "node:crypto";
import { mkdir, readFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { agentStream, extendSession, type InvokeModel, type Session, type ToolDefinition } from "simple-agent-loop";
import { approvalRequestHandler, createRunRegistry } from "simple-agent-loop/http";
import { closeSession, fileStore } from "simple-agent-loop/store";
import { serveViewer, type Viewer } from "simple-agent-loop/viewer";
import { demoModel } from "./demo-model.ts";
import { sendWebResponse, toWebRequest } from "./node-adapter.ts";
import { notesTools } from "./notes-tools.ts";
import { isMain } from "../run-example.ts";
import { modelFromEnv } from "../model-from-env.ts";

export type WebChatOptions = {
  invokeModel: InvokeModel;
  /** Where the sessions are stored (JSONL files, one per session). */
  directory: string;
  /** The tools of one session, called once per session (default: `notesTools()`, notes of its own). */
  tools?: () => ToolDefinition[];
  port?: number;
  /**
   * Serve a viewer of each session's log beside the chat, for the page's "open in the viewer" link.
   * Default true. One viewer per session, started when its owner first asks for the session.
   */
  viewer?: boolean;
  /**
   * At most this many viewers run at once (default 16): one more closes the one asked for least
   * recently, whose link then stops working until its owner asks for the session again.
   */
  maxViewers?: number;
  /** How long a finished run is read from memory (default 30 minutes); after it, from the session's log. */
  keepFinishedMs?: number;
};

export type WebChat = { url: string; close: () => Promise<void> };

const systemPrompt = "You are a helpful assistant with a notes tool. Keep answers short.";

export async function startWebChat(options: WebChatOptions): Promise<WebChat> {
  const store = fileStore(options.directory);
  const toolsFor = options.tools ?? notesTools;
  // With the store, a run the registry forgot (or lost in a restart) is read on from its session's log.
  const registry = createRunRegistry({ keepFinishedMs: options.keepFinishedMs ?? 30 * 60_000, store });
  const sessions = new Map<
    string,
    { owner: string; task: string; runs: string[]; tools: ToolDefinition[]; viewer?: Promise<Viewer> | undefined }
  >();
  await mkdir(options.directory, { recursive: true, mode: 0o700 });
  // The sessions whose viewer runs, the one asked for least recently first.
  const viewing = new Set<string>();
  const maxViewers = options.maxViewers ?? 16;
  // A viewer of the directory would show every browser's sessions to anyone given its link.
  const viewerOf = async (sessionId: string): Promise<Viewer | undefined> => {
    if (options.viewer === false) return undefined;
    const entry = sessions.get(sessionId)!;
    viewing.delete(sessionId);
    viewing.add(sessionId);
    for (const oldest of viewing) {
      if (viewing.size <= maxViewers) break;
      viewing.delete(oldest);
      const closing = sessions.get(oldest)!;
      void closing.viewer?.then((opened) => opened.close()).catch(() => undefined);
      closing.viewer = undefined;
    }
    entry.viewer ??= serveViewer(join(options.directory, `${sessionId}.jsonl`));
    try {
      return await entry.viewer;
    } catch {
      // Its log not written yet: no link this time, the next ask tries again.
      entry.viewer = undefined;
      return undefined;
    }
  };

  const userOf = (request: Request): string | undefined =>
    /(?:^|;\s*)chat-user=([A-Za-z0-9_-]{20,64})/.exec(request.headers.get("cookie") ?? "")?.[1];
  const authorize = (request: Request, sessionId: string): boolean => {
    const user = userOf(request);
    return user !== undefined && sessions.get(sessionId)?.owner === user;
  };
  const nextRunId = (sessionId: string): string => {
    const runs = sessions.get(sessionId)!.runs;
    const runId = `${sessionId}:${runs.length + 1}`;
    runs.push(runId);
    return runId;
  };
  // Each run closes its session when it ends, so the next request (an approval) can open it.
  const run = (session: Session, sessionId: string): ReturnType<typeof agentStream> => {
    const stream = agentStream(options.invokeModel, sessions.get(sessionId)!.tools, session, { maxIterations: 20 });
    void stream.result.catch(() => undefined).finally(() => closeSession(session));
    return stream;
  };
  const approve = approvalRequestHandler({ store, registry, authorize, runId: nextRunId, resume: run });

  const routes = async (request: Request): Promise<Response> => {
    const { pathname } = new URL(request.url);
    if (request.method === "GET" && (pathname === "/" || pathname === "/page.js")) return page(pathname, request);
    if (request.method === "POST" && pathname === "/api/sessions") return createSession(request);
    if (request.method === "GET" && pathname === "/api/sessions") return waitingSessions(request);
    const sessionRoute = /^\/api\/sessions\/([A-Za-z0-9_-]{1,64})(\/approve)?$/.exec(pathname);
    if (sessionRoute !== null) {
      const sessionId = sessionRoute[1]!;
      if (sessionRoute[2] !== undefined) return approve(request, sessionId);
      if (!authorize(request, sessionId)) return json(404, { error: "no such session" });
      const { task, runs } = sessions.get(sessionId)!;
      const viewer = await viewerOf(sessionId);
      const viewerUrl = viewer === undefined ? undefined : viewerLink(viewer, sessionId);
      return json(200, { sessionId, task, runs, viewerUrl });
    }
    const runRoute = /^\/api\/runs\/(([A-Za-z0-9_-]{1,64})(?::|%3A)\d{1,6})\/(events|stop)$/.exec(pathname);
    if (runRoute !== null) {
      const [, given, sessionId, action] = runRoute as unknown as [string, string, string, string];
      const runId = decodeURIComponent(given);
      if (!authorize(request, sessionId)) return json(404, { error: "no such run" });
      if (action === "events" && request.method === "GET") return registry.response(runId, request);
      if (action === "stop" && request.method === "POST") return json(200, { stopped: await registry.stop(runId) });
    }
    return json(404, { error: "not found" });
  };

  // The sessions of this browser that wait for its approval, from the store (its index for a
  // database store), so the page finds them after a reload or on another instance.
  const waitingSessions = async (request: Request): Promise<Response> => {
    const user = userOf(request);
    const paused = await store.list({ status: "paused", limit: 100 });
    const mine = paused.filter((summary) => user !== undefined && sessions.get(summary.id)?.owner === user);
    return json(200, {
      sessions: mine.map(({ id, title, lastActivity }) => ({ sessionId: id, title, lastActivity })),
    });
  };

  const createSession = async (request: Request): Promise<Response> => {
    const user = userOf(request);
    if (user === undefined) return json(403, { error: "reload the page: this browser has no chat id yet" });
    if (!/^application\/json\b/i.test(request.headers.get("content-type") ?? ""))
      return json(415, { error: "send the task as JSON (content-type application/json)" });
    const body = await readSmallBody(request, 64 * 1024);
    if (body === undefined) return json(413, { error: "the task is longer than 64 KB" });
    let task: unknown;
    try {
      task = (JSON.parse(body) as { task?: unknown } | null)?.task;
    } catch {
      return json(400, { error: "send JSON: { task }" });
    }
    if (typeof task !== "string" || task.trim() === "") return json(400, { error: "type a task first" });
    const sessionId = randomBytes(12).toString("base64url");
    sessions.set(sessionId, { owner: user, task, runs: [], tools: toolsFor() });
    const session = await store.open(sessionId);
    extendSession(session, { role: "system", content: systemPrompt });
    extendSession(session, { role: "user", content: task });
    const runId = registry.start(run(session, sessionId), { runId: nextRunId(sessionId) });
    return json(201, { sessionId, runId });
  };

  const server = createServer((incoming, outgoing) => {
    const request = toWebRequest(incoming, outgoing, "http://localhost");
    routes(request)
      .catch((error: unknown) => json(500, { error: error instanceof Error ? error.message : String(error) }))
      .then((response) => sendWebResponse(response, outgoing))
      .catch(() => outgoing.destroy());
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: async () => {
      await Promise.all([...sessions.values()].flatMap(({ runs }) => runs.map((runId) => registry.stop(runId))));
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      const viewers = [...sessions.values()].flatMap(({ viewer }) => (viewer === undefined ? [] : [viewer]));
      await Promise.all(viewers.map((opening) => opening.then((opened) => opened.close()).catch(() => undefined)));
    },
  };
}

// The page, with the browser's chat id set as a cookie the first time (HttpOnly: scripts never see it).
async function page(pathname: string, request: Request): Promise<Response> {
  const file = pathname === "/" ? "page.html" : "page.js";
  const body = await readFile(join(import.meta.dirname, file), "utf8");
  const headers = new Headers({
    "content-type": file === "page.html" ? "text/html; charset=utf-8" : "text/javascript; charset=utf-8",
    "cache-control": "no-store",
    "content-security-policy": "default-src 'self'; style-src 'self' 'unsafe-inline'",
  });
  if (!/(?:^|;\s*)chat-user=/.test(request.headers.get("cookie") ?? ""))
    headers.set("set-cookie", `chat-user=${randomBytes(18).toString("base64url")}; Path=/; HttpOnly; SameSite=Strict`);
  return new Response(body, { headers });
}

// The body as text, read no further than `maxBytes` (whatever content-length claims); undefined past it.
async function readSmallBody(request: Request, maxBytes: number): Promise<string | undefined> {
  if (Number(request.headers.get("content-length") ?? "0") > maxBytes) return undefined;
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of request.body ?? []) {
    size += chunk.byteLength;
    if (size > maxBytes) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function viewerLink(viewer: Viewer, sessionId: string): string {
  const url = new URL(viewer.url);
  url.search = `?file=${encodeURIComponent(`${sessionId}.jsonl`)}`;
  return url.toString();
}

function json(status: number, value: unknown): Response {
  return new Response(JSON.stringify(value), {
    status,
    headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" },
  });
}

if (isMain(import.meta.url)) {
  const live = modelFromEnv();
  const directory = process.env.WEB_CHAT_SESSIONS ?? join(process.cwd(), ".web-chat-sessions");
  const chat = await startWebChat({
    invokeModel: live?.invokeModel ?? demoModel(),
    directory,
    port: Number(process.env.PORT ?? 3000),
  });
  console.log(
    `Model: ${live?.description ?? "the offline demo model (set ANTHROPIC_API_KEY or OPENAI_API_KEY for a live one)"}`,
  );
  console.log(`Sessions: ${directory}`);
  console.log(`Open ${chat.url}`);
}
