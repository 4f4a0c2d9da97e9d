import type { ApprovalDecision } from "../tools/approval.ts";
import type { Session } from "../session.ts";
import type { SessionStore } from "../store/session-store.ts";
import type { BackgroundTask } from "../tools/task-types.ts";
import type { ApprovalResolved, PendingApprovalView } from "./approvals.ts";
import type { AgentRunInput, AgentRunResult, AgentStatus } from "./durable-run.ts";
import { isRestateAgentError, RestateAgentError } from "./restate-agent-error.ts";
import { writeExportToStore } from "./session-to-store.ts";

export type RestateAgentClientOptions = {
  /** The Restate ingress, e.g. `http://localhost:8080`. */
  url: string;
  /** The agent object's name (default `"agent"`). */
  name?: string;
  /** The Restate admin API, e.g. `http://localhost:9070`: needed only for `cancel`. */
  adminUrl?: string;
  /** Sent with every request (an API key, say). */
  headers?: Record<string, string>;
  /** Injectable for tests (default: the global `fetch`). */
  fetch?: typeof fetch;
};

/** Per-call options of `run` and `start`. */
export type RunCallOptions = {
  /** Makes a repeated request the same invocation (its result, not a second run). */
  idempotencyKey?: string;
  /** Stops waiting (`run`, `attach`): the run goes on; `cancel` ends it. */
  signal?: AbortSignal;
};

/**
 * Calls an agent object through the Restate ingress with `fetch`. Every method throws a
 * `RestateAgentError`: with the HTTP status when the server refuses, with status 0 (retryable) when
 * it cannot be reached.
 */
export type RestateAgentClient = {
  /**
   * Runs the session to its end (waiting through approvals, for days if need be) and returns the
   * result: `start`, then `attach`.
   */
  run: (sessionId: string, input: AgentRunInput, options?: RunCallOptions) => Promise<AgentRunResult>;
  /** Starts a run without waiting for it: its invocation id, for `attach` and `cancel`. */
  start: (
    sessionId: string,
    input: AgentRunInput,
    options?: Omit<RunCallOptions, "signal">,
  ) => Promise<{ invocationId: string }>;
  /**
   * Waits for a started run's result, however long it takes: when `fetch` gives up waiting for the
   * answer (Node's gives up after 5 minutes), it attaches again.
   */
  attach: (invocationId: string, options?: { signal?: AbortSignal }) => Promise<AgentRunResult>;
  session: (sessionId: string) => Promise<Session>;
  /** The session's JSONL log, as the file store writes it. */
  export: (sessionId: string) => Promise<string>;
  /**
   * Copies the session into any `SessionStore` (file, SQLite, PostgreSQL) under `options.id`
   * (default: the same id), as a new session there, and returns it; see `writeExportToStore`.
   * From there `store.load`, the viewer, a web page (`approvalRequestHandler`, a run registry with
   * the store) or an in-process run reads it.
   */
  exportTo: (sessionId: string, store: SessionStore, options?: { id?: string }) => Promise<Session>;
  /**
   * Starts the object's session `sessionId` from a session in any `SessionStore` (`options.id`,
   * default the same id): its log as the store holds it (kept outputs and custom entries
   * included), checked as a store checks a log. A following `run` continues it durably. Refused
   * (409) when the object has a session already.
   */
  importFrom: (sessionId: string, store: SessionStore, options?: { id?: string }) => Promise<Session>;
  status: (sessionId: string) => Promise<AgentStatus>;
  pendingApprovals: (sessionId: string) => Promise<PendingApprovalView[]>;
  /** Like the in-process `resolveApproval`: one id and a decision, a list of ids sharing it, or a list of `{ id, approved, reason? }`. */
  resolveApproval: (
    sessionId: string,
    callId: string | readonly (string | ({ id: string } & ApprovalDecision))[],
    decision?: ApprovalDecision,
  ) => Promise<ApprovalResolved>;
  /** The session's background tasks, in start order (see `backgroundTasks`). */
  tasks: (sessionId: string) => Promise<BackgroundTask[]>;
  /**
   * Like the in-process `cancelTask`: the run sees it while it waits for its tasks (at once when it
   * waits), aborts the handler's signal with `reason` and records the task `cancelled`. Returns the task as the session has it
   * then (a settled one unchanged). 404 for an unknown id, 409 for a running task no run holds.
   */
  cancelTask: (sessionId: string, id: string, reason?: string) => Promise<BackgroundTask>;
  /** Cancels a run (Restate cancellation): it ends `aborted`, as an aborted in-process run does. Needs `adminUrl`. */
  cancel: (invocationId: string) => Promise<void>;
};

export function restateAgentClient(options: RestateAgentClientOptions): RestateAgentClient {
  const name = options.name ?? "agent";
  const doFetch = options.fetch ?? fetch;
  const base = options.url.replace(/\/+$/, "");
  const request = async (
    url: string,
    init: { method: string; body?: unknown; headers?: Record<string, string>; signal?: AbortSignal | undefined },
  ): Promise<Response> => {
    const headers: Record<string, string> = { ...options.headers, ...init.headers };
    if (init.body !== undefined) headers["content-type"] = "application/json";
    let reply: Response;
    const body = init.body === undefined ? undefined : JSON.stringify(init.body);
    try {
      reply = await doFetch(url, {
        method: init.method,
        headers,
        ...(body === undefined ? {} : { body }),
        ...(init.signal === undefined ? {} : { signal: init.signal }),
      });
    } catch (error) {
      throw unreachable(url, error, init.signal, body);
    }
    if (!reply.ok) throw new RestateAgentError(await failureMessage(reply), reply.status);
    return reply;
  };
  const attach = async (invocationId: string, signal: AbortSignal | undefined): Promise<AgentRunResult> => {
    const url = `${base}/restate/invocation/${encodeURIComponent(invocationId)}/attach`;
    for (;;) {
      try {
        return (await (await request(url, { method: "GET", signal })).json()) as AgentRunResult;
      } catch (error) {
        // The run is still going (an approval can wait for days): a new attach waits on.
        if (!(isRestateAgentError(error) && error.cause !== undefined && isWaitTimeout(error.cause))) throw error;
      }
    }
  };
  const start = async (
    sessionId: string,
    input: AgentRunInput,
    callOptions: RunCallOptions | undefined,
  ): Promise<{ invocationId: string }> => {
    const headers = keyed(callOptions);
    const reply = await request(`${handler(sessionId, "run")}/send`, {
      method: "POST",
      body: input,
      ...(headers === undefined ? {} : { headers }),
    });
    const { invocationId } = (await reply.json()) as { invocationId: string };
    return { invocationId };
  };
  const handler = (sessionId: string, method: string): string =>
    `${base}/${name}/${encodeURIComponent(sessionId)}/${method}`;
  const call = async <T>(
    sessionId: string,
    method: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<T> =>
    (await (
      await request(handler(sessionId, method), {
        method: "POST",
        body: body ?? null,
        ...(headers === undefined ? {} : { headers }),
      })
    ).json()) as T;
  return {
    run: async (sessionId, input, callOptions) =>
      attach((await start(sessionId, input, callOptions)).invocationId, callOptions?.signal),
    start,
    attach: (invocationId, attachOptions) => attach(invocationId, attachOptions?.signal),
    session: (sessionId) => call(sessionId, "session"),
    export: async (sessionId) => (await request(handler(sessionId, "export"), { method: "POST", body: null })).text(),
    exportTo: async (sessionId, store, exportOptions) => {
      const jsonl = await (await request(handler(sessionId, "export"), { method: "POST", body: null })).text();
      return writeExportToStore(jsonl, store, exportOptions?.id ?? sessionId);
    },
    importFrom: async (sessionId, store, importOptions) => {
      const entries = await store.loadEntries(importOptions?.id ?? sessionId);
      return call(sessionId, "import", { jsonl: entries.map((entry) => `${JSON.stringify(entry)}\n`).join("") });
    },
    status: (sessionId) => call(sessionId, "status"),
    pendingApprovals: (sessionId) => call(sessionId, "pendingApprovals"),
    resolveApproval: (sessionId, callId, decision) => {
      const decisions = (typeof callId === "string" ? [callId] : callId).map((entry) =>
        typeof entry === "string" ? { id: entry, ...decision } : entry,
      );
      return call(sessionId, "resolveApproval", decisions.length === 1 ? decisions[0] : decisions);
    },
    tasks: (sessionId) => call(sessionId, "tasks"),
    cancelTask: (sessionId, id, reason) =>
      call(sessionId, "cancelTask", reason === undefined ? { id } : { id, reason }),
    cancel: async (invocationId) => {
      if (options.adminUrl === undefined)
        throw new RestateAgentError("cancel needs the admin API's url (adminUrl)", 400);
      await request(`${options.adminUrl.replace(/\/+$/, "")}/invocations/${encodeURIComponent(invocationId)}/cancel`, {
        method: "PATCH",
      });
    },
  };
}

function keyed(callOptions: RunCallOptions | undefined): Record<string, string> | undefined {
  return callOptions?.idempotencyKey === undefined ? undefined : { "idempotency-key": callOptions.idempotencyKey };
}

async function failureMessage(reply: Response): Promise<string> {
  const text = await reply.text();
  try {
    const parsed = JSON.parse(text) as { message?: unknown };
    if (typeof parsed.message === "string") return parsed.message;
  } catch {
    // Not JSON: the text itself.
  }
  return text === "" ? `HTTP ${reply.status}` : text;
}

// fetch() rejects with "fetch failed" and the reason (refused, reset, timed out) in its cause.
function unreachable(url: string, error: unknown, signal: AbortSignal | undefined, body: string | undefined): unknown {
  if (signal?.aborted === true) return signal.reason;
  const cause = error instanceof Error && error.cause !== undefined ? error.cause : error;
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new RestateAgentError(
    `cannot reach Restate at ${new URL(url).origin}: ${reason}${closedWhileSending(cause, body)}`,
    0,
    { cause },
  );
}

// A server that closes the connection while a large body is sent has most likely refused its size
// (the ingress's request limit): say so, with the size, rather than only "write EPIPE".
function closedWhileSending(cause: unknown, body: string | undefined): string {
  const code = (cause as { code?: unknown } | null)?.code;
  if (body === undefined || (code !== "EPIPE" && code !== "ECONNRESET")) return "";
  const bytes = Buffer.byteLength(body);
  if (bytes < 1024 * 1024) return "";
  return ` (it closed the connection while a request of ${bytes} bytes was sent: more than its request size limit?)`;
}

// Node's fetch gives up waiting for the answer's headers (or body) after 5 minutes by default.
function isWaitTimeout(cause: unknown): boolean {
  const code = (cause as { code?: unknown } | null)?.code;
  return code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_BODY_TIMEOUT";
}
