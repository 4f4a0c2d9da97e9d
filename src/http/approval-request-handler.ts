import { errorResponse } from "./error-response.ts";
import { eventStreamResponse } from "./event-stream-response.ts";
import { defaultMaxBodyBytes, readJsonBody } from "./read-json-body.ts";
import type { RunRegistry } from "./run-registry.ts";
import { AgentError, isAgentError } from "../errors.ts";
import { checkNumber } from "../numeric-options.ts";
import type { AgentStream } from "../loop/loop.ts";
import type { Session } from "../session.ts";
import { closeSession } from "../store/binding.ts";
import type { SessionStore } from "../store/session-store.ts";
import { isStoreError } from "../store/store-error.ts";
import { pendingApprovals, resolveApproval, type ApprovalDecision } from "../tools/approval.ts";

export type ApprovalRequestHandlerOptions = {
  /** Where the sessions live: any `SessionStore` (the file store, or a database store with the same interface). */
  store: SessionStore;
  /**
   * Whether the request's caller may decide for this session (a cookie, a token: the
   * application's own check). `false` answers 403 before anything is read.
   */
  authorize: (request: Request, sessionId: string) => boolean | Promise<boolean>;
  /**
   * Starts the resumed run on the session (opened in the store, the decisions recorded): return
   * `agentStream(invokeModel, tools, session, …)`. The handler closes the session when the run ends.
   */
  resume: (session: Session, sessionId: string) => AgentStream;
  /**
   * Where the resumed run goes: with a registry, it is started there (`runId(sessionId)` names it,
   * a random id otherwise) and the answer is `202 { runId }`; without one, the answer is the run's
   * own event stream (`eventStreamResponse`).
   */
  registry?: RunRegistry;
  runId?: (sessionId: string) => string;
  /** The largest body read (bytes, default 1 MiB); a larger one is a 413. */
  maxBodyBytes?: number;
  /**
   * Who is deciding (the application's own session or token): recorded as `decidedBy.user` on
   * each decision. The id comes from the server only: a body that carries `by` is refused (400).
   */
  user?: (request: Request, sessionId: string) => string | undefined;
};

/**
 * A handler for a page's approval decisions: `POST` a JSON body `{ decisions: [{ id, approved,
 * reason? }] }` (or one `{ id, approved, reason? }`), `id` a call's id or path as in
 * `pendingApprovalEntries`; who decided is `user(request, sessionId)`, recorded with each decision. It loads the stored session (so it works on any instance, after any
 * reload), records the decisions with `resolveApproval` and resumes the run. Every refusal changes
 * nothing: 403 (authorize said no), 415 (not sent as JSON), 413 (body too large), 400 (not JSON,
 * not decisions, a malformed session id), 404 (no
 * such session), 409 (nothing waits, a call not waiting or decided already, a run in progress on
 * the session).
 */
export function approvalRequestHandler(
  options: ApprovalRequestHandlerOptions,
): (request: Request, sessionId: string) => Promise<Response> {
  checkNumber("maxBodyBytes", options.maxBodyBytes, { min: 0, integer: true });
  for (const name of ["authorize", "resume"] as const)
    if (typeof options[name] !== "function") throw new AgentError(`approvalRequestHandler: ${name} must be a function`);
  if (options.runId !== undefined && typeof options.runId !== "function")
    throw new AgentError("approvalRequestHandler: runId must be a function of the session id");
  if (options.user !== undefined && typeof options.user !== "function")
    throw new AgentError("approvalRequestHandler: user must be a function of the request and the session id");
  const maxBodyBytes = options.maxBodyBytes ?? defaultMaxBodyBytes;
  return async (request, sessionId) => {
    if (request.method !== "POST") return errorResponse(405, "send the decisions with POST");
    if (!(await options.authorize(request, sessionId)))
      return errorResponse(403, "not allowed to decide for this session");
    const body = await readJsonBody(request, maxBodyBytes);
    if ("response" in body) return body.response;
    const read = readDecisions(body.value);
    if (typeof read === "string") return errorResponse(400, read);
    const user = options.user?.(request, sessionId);
    if (user !== undefined && typeof user !== "string")
      throw new AgentError("approvalRequestHandler: user must return a string or undefined");
    const decisions = user === undefined ? read : read.map((decision) => ({ ...decision, by: user }));
    const checked = await checkAgainstStored(options.store, sessionId, decisions);
    if (checked !== undefined) return checked;
    const session = await openWhenClosed(options.store, sessionId);
    if (session === undefined)
      return errorResponse(409, "a run is in progress on this session: wait for it to pause or end");
    try {
      resolveApproval(session, decisions);
    } catch (error) {
      await closeSession(session);
      if (isAgentError(error)) return errorResponse(409, error.message);
      throw error;
    }
    return resumeRun(options, session, sessionId, request);
  };
}

type Decision = { id: string } & ApprovalDecision;

/** The decisions of a body, or what is wrong with it. */
function readDecisions(body: unknown): Decision[] | string {
  const list: unknown = isObject(body) && "decisions" in body ? body.decisions : [body];
  if (!Array.isArray(list) || list.length === 0)
    return 'send { "decisions": [{ "id": "<call id>", "approved": true or false, "reason"?: "…" }] }';
  if (list.length > 1000) return "at most 1000 decisions in one request";
  const decisions: Decision[] = [];
  for (const [index, entry] of list.entries()) {
    if (!isObject(entry) || typeof entry.id !== "string" || typeof entry.approved !== "boolean")
      return `decision ${index} needs "id" (a string) and "approved" (true or false)`;
    if (entry.reason !== undefined && typeof entry.reason !== "string")
      return `decision ${index}: "reason" must be a string`;
    // Who decided is the server's to say (the user option), never the page's.
    if ("by" in entry) return `decision ${index}: "by" is set by the server, not by the request`;
    decisions.push(
      entry.reason === undefined
        ? { id: entry.id, approved: entry.approved }
        : { id: entry.id, approved: entry.approved, reason: entry.reason.slice(0, 2000) },
    );
  }
  return decisions;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

// Checked on a read-only copy first, so a refused request never opens (locks) the session.
async function checkAgainstStored(
  store: SessionStore,
  sessionId: string,
  decisions: Decision[],
): Promise<Response | undefined> {
  let stored: Session;
  try {
    stored = await store.load(sessionId);
  } catch (error) {
    if (isStoreError(error) && error.code === "not-found") return errorResponse(404, "no such session");
    if (isStoreError(error) && error.code === "invalid-argument") return errorResponse(400, error.message);
    throw error;
  }
  if (pendingApprovals(stored).length === 0) return errorResponse(409, "nothing in this session waits for approval");
  try {
    resolveApproval(stored, decisions);
  } catch (error) {
    if (isAgentError(error)) return errorResponse(409, error.message);
    throw error;
  }
  return undefined;
}

/**
 * Opens the session, waiting up to `closingMs` while another writer holds it: a run that just
 * paused sends its `run-end` before its session is closed, and a page answers at once.
 * Undefined when it stays locked.
 */
async function openWhenClosed(store: SessionStore, sessionId: string): Promise<Session | undefined> {
  const deadline = Date.now() + closingMs;
  for (;;) {
    try {
      return await store.open(sessionId);
    } catch (error) {
      if (!isStoreError(error) || error.code !== "locked") throw error;
      if (Date.now() >= deadline) return undefined;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

/** How long a request waits for a session still held by the run that just ended (ms). */
const closingMs = 2_000;

function resumeRun(
  options: ApprovalRequestHandlerOptions,
  session: Session,
  sessionId: string,
  request: Request,
): Response {
  let stream: AgentStream;
  try {
    stream = options.resume(session, sessionId);
  } catch (error) {
    void closeSession(session);
    throw error;
  }
  void stream.result.catch(() => undefined).finally(() => closeSession(session));
  if (options.registry === undefined) return eventStreamResponse(stream, { signal: request.signal });
  const runId = options.registry.start(stream, options.runId === undefined ? {} : { runId: options.runId(sessionId) });
  return new Response(JSON.stringify({ runId }), {
    status: 202,
    headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" },
  });
}
