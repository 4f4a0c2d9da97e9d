import type { ApprovalDecision } from "../approval.ts";
import type { Session } from "../session.ts";
import type { ApprovalResolved, PendingApprovalView } from "./approvals.ts";
import type { AgentRunInput, AgentRunResult, AgentStatus } from "./durable-run.ts";
import { RestateAgentError } from "./restate-agent-error.ts";

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

/** Per-call options of `run` and `start`: an idempotency key makes a repeated request the same invocation. */
export type RunCallOptions = { idempotencyKey?: string };

/**
 * Calls an agent object through the Restate ingress with `fetch`. Every method throws a
 * `RestateAgentError` (with the HTTP status) when the server refuses.
 */
export type RestateAgentClient = {
  /** Runs the session to its end (waiting through approvals) and returns the result. */
  run: (sessionId: string, input: AgentRunInput, options?: RunCallOptions) => Promise<AgentRunResult>;
  /** Starts a run without waiting for it: its invocation id, for `attach` and `cancel`. */
  start: (sessionId: string, input: AgentRunInput, options?: RunCallOptions) => Promise<{ invocationId: string }>;
  /** Waits for a started run's result. */
  attach: (invocationId: string) => Promise<AgentRunResult>;
  session: (sessionId: string) => Promise<Session>;
  /** The session's JSONL log, as the file store writes it. */
  export: (sessionId: string) => Promise<string>;
  status: (sessionId: string) => Promise<AgentStatus>;
  pendingApprovals: (sessionId: string) => Promise<PendingApprovalView[]>;
  /** Like the in-process `resolveApproval`: one id and a decision, a list of ids sharing it, or a list of `{ id, approved, reason? }`. */
  resolveApproval: (
    sessionId: string,
    callId: string | readonly (string | ({ id: string } & ApprovalDecision))[],
    decision?: ApprovalDecision,
  ) => Promise<ApprovalResolved>;
  /** Cancels a run (Restate cancellation): it ends `aborted`, as an aborted in-process run does. Needs `adminUrl`. */
  cancel: (invocationId: string) => Promise<void>;
};

export function restateAgentClient(options: RestateAgentClientOptions): RestateAgentClient {
  const name = options.name ?? "agent";
  const doFetch = options.fetch ?? fetch;
  const base = options.url.replace(/\/+$/, "");
  const request = async (url: string, init: { method: string; body?: unknown; headers?: Record<string, string> }): Promise<Response> => {
    const headers: Record<string, string> = { ...options.headers, ...init.headers };
    if (init.body !== undefined) headers["content-type"] = "application/json";
    const reply = await doFetch(url, { method: init.method, headers, ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }) });
    if (!reply.ok) throw new RestateAgentError(await failureMessage(reply), reply.status);
    return reply;
  };
  const handler = (sessionId: string, method: string): string => `${base}/${name}/${encodeURIComponent(sessionId)}/${method}`;
  const call = async <T>(sessionId: string, method: string, body?: unknown, headers?: Record<string, string>): Promise<T> =>
    (await (await request(handler(sessionId, method), { method: "POST", body: body ?? null, ...(headers === undefined ? {} : { headers }) })).json()) as T;
  const keyed = (callOptions: RunCallOptions | undefined): Record<string, string> | undefined =>
    callOptions?.idempotencyKey === undefined ? undefined : { "idempotency-key": callOptions.idempotencyKey };
  return {
    run: (sessionId, input, callOptions) => call(sessionId, "run", input, keyed(callOptions)),
    start: async (sessionId, input, callOptions) => {
      const headers = keyed(callOptions);
      const reply = await request(`${handler(sessionId, "run")}/send`, { method: "POST", body: input, ...(headers === undefined ? {} : { headers }) });
      const { invocationId } = (await reply.json()) as { invocationId: string };
      return { invocationId };
    },
    attach: async (invocationId) => (await (await request(`${base}/restate/invocation/${encodeURIComponent(invocationId)}/attach`, { method: "GET" })).json()) as AgentRunResult,
    session: (sessionId) => call(sessionId, "session"),
    export: async (sessionId) => (await request(handler(sessionId, "export"), { method: "POST", body: null })).text(),
    status: (sessionId) => call(sessionId, "status"),
    pendingApprovals: (sessionId) => call(sessionId, "pendingApprovals"),
    resolveApproval: (sessionId, callId, decision) => {
      const decisions = (typeof callId === "string" ? [callId] : callId).map((entry) => (typeof entry === "string" ? { id: entry, ...decision } : entry));
      return call(sessionId, "resolveApproval", decisions.length === 1 ? decisions[0] : decisions);
    },
    cancel: async (invocationId) => {
      if (options.adminUrl === undefined) throw new RestateAgentError("cancel needs the admin API's url (adminUrl)", 400);
      await request(`${options.adminUrl.replace(/\/+$/, "")}/invocations/${encodeURIComponent(invocationId)}/cancel`, { method: "PATCH" });
    },
  };
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
