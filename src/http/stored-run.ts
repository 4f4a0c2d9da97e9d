import type { AgentEvent } from "../loop/events.ts";
import type { JsonObject, Message, ToolCallMessage } from "../session.ts";
import { restingOutcome } from "../session-turns.ts";
import type { LogEntry } from "../store/entries.ts";
import type { SessionStore } from "../store/session-store.ts";
import { isStoreError } from "../store/store-error.ts";
import { sessionChanges, type SessionChanges } from "./session-changes.ts";
import { errorResponse } from "./error-response.ts";
import { encodeEvent, eventStreamHeaders, heartbeat, resumeId } from "./event-stream-format.ts";
import {
  isAfter,
  logEventId,
  logEvents,
  noPreview,
  resumePlace,
  withoutPreview,
  type LogPlace,
  type Preview,
} from "./log-events.ts";

/**
 * The custom entry a run registry writes to a recorded run's session when it starts the run
 * (`appendEntry(session, runEntryType, { runId })`): where the run's messages begin in the log.
 */
export const runEntryType = "run";

/**
 * A run's id names its session as `<sessionId>:<anything>` (session ids never hold a `:`), so a
 * registry that never held the run, or forgot it, finds its log. `undefined` for another id.
 */
export function sessionOfRun(runId: string): string | undefined {
  const colon = runId.indexOf(":");
  const sessionId = runId.slice(0, colon);
  return colon > 0 && /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/.test(sessionId) ? sessionId : undefined;
}

/**
 * The response for a reader of a recorded run the registry does not hold: the run read from its
 * session's log (see `storedRunBody`), after the id the reader resumes from; 400 for an id no
 * recorded run sends, 404 when the session's log holds no such run (after waiting up to
 * `findMs` while a writer holds the session: a run just started elsewhere may not be committed
 * yet).
 */
export async function storedRunResponse(options: {
  store: SessionStore;
  sessionId: string;
  runId: string;
  request: Request;
  pollMs: number;
}): Promise<Response> {
  const { request, store, sessionId } = options;
  const given = resumeId(request);
  const after = given === undefined ? undefined : resumePlace(given);
  if (given !== undefined && after === undefined)
    return errorResponse(
      400,
      `this run is read from its session's log: resume after an id it sent (<n>.<messages>… or log.<messages>…), not ${JSON.stringify(given.slice(0, 40))}`,
    );
  const deadline = Date.now() + findMs;
  const changes = sessionChanges(store, sessionId);
  try {
    return await findRun({ ...options, after }, changes, deadline);
  } finally {
    changes.stop();
  }
}

async function findRun(
  options: {
    store: SessionStore;
    sessionId: string;
    runId: string;
    request: Request;
    pollMs: number;
    after: StoredRunOptions["after"];
  },
  changes: SessionChanges,
  deadline: number,
): Promise<Response> {
  const { request, store, sessionId, runId, after } = options;
  for (;;) {
    let entries: LogEntry[];
    try {
      entries = await store.loadEntries(sessionId);
    } catch (error) {
      if (isStoreError(error) && error.code === "not-found") return unknownRun(runId);
      if (isStoreError(error) && error.code === "invalid-argument") return errorResponse(400, error.message);
      throw error;
    }
    if (runInLog(entries, runId) !== undefined) break;
    const running = store.summary !== undefined && (await store.summary(sessionId)).status === "running";
    if (!running || Date.now() >= deadline) return unknownRun(runId);
    if ((await changes.wait(options.pollMs, request.signal)) === "aborted") return unknownRun(runId);
  }
  const body = storedRunBody({ ...options, after, signal: request.signal });
  return new Response(body, { headers: eventStreamHeaders });
}

/** How long a reader waits for a run that is not in its session's log yet, while a writer holds the session (ms). */
const findMs = 5_000;

/** The 404 for a run id nobody knows: not held here, and not in its session's log. */
export function unknownRun(runId: string): Response {
  return errorResponse(404, `no run ${JSON.stringify(runId.slice(0, 140))} here (unknown, or finished too long ago)`);
}

export type StoredRunOptions = {
  store: SessionStore;
  sessionId: string;
  runId: string;
  /** Where the client resumes (see `resumePlace`); `undefined`: from the start (a `run-start` first). */
  after: { after: LogPlace; preview: Preview } | undefined;
  signal: AbortSignal;
  pollMs: number;
};

/**
 * A run read from its session's log, for a client of a run the registry does not hold (forgotten,
 * or run by another process or before a restart): the events a live reader got, told again from
 * the run's messages (see `logEvents`: each message's preview whole, then its `message`), after
 * the place the client resumes from, then, while a writer still holds the session and no later
 * run began in it, those of the messages as they are recorded (polled every `pollMs`, a comment
 * line sent each time), then a `run-end` told from the log. A client that resumes with a live id
 * mid-turn is told the rest of the turn's preview only, so what it renders is what a live reader
 * rendered.
 */
export function storedRunBody(options: StoredRunOptions): ReadableStream<Uint8Array> {
  const events = storedRunEvents(options);
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const next = await events.next();
        if (next.done === true) controller.close();
        else controller.enqueue(next.value);
      },
      async cancel() {
        await events.return(undefined);
      },
    },
    { highWaterMark: 0 },
  );
}

async function* storedRunEvents(options: StoredRunOptions): AsyncGenerator<Uint8Array, void, undefined> {
  const changes = sessionChanges(options.store, options.sessionId);
  try {
    yield* followLog(options, changes);
  } finally {
    changes.stop();
  }
}

async function* followLog(
  options: StoredRunOptions,
  changes: SessionChanges,
): AsyncGenerator<Uint8Array, void, undefined> {
  const { store, sessionId, runId, signal } = options;
  let after: LogPlace | undefined = options.after?.after;
  let preview = options.after?.preview ?? noPreview;
  for (;;) {
    let running: boolean;
    let run: RunInLog | undefined;
    const seen = after?.messages ?? 0;
    try {
      // The writer's state first: once it has let go, the entries read next are all there will be.
      running = store.summary === undefined ? false : (await store.summary(sessionId)).status === "running";
      run = runInLog(await store.loadEntries(sessionId), runId);
    } catch (error) {
      yield encodeEvent(`log.${seen}.end`, failedEnd(`cannot read session "${sessionId}": ${describe(error)}`));
      return;
    }
    // A store that writes in the background (PostgreSQL) may not have committed yet what a live
    // reader saw: while a writer holds the session, wait for it.
    if (run === undefined || seen > run.messages.length) {
      if (!running) {
        const problem =
          run === undefined
            ? `no run "${runId}" in session "${sessionId}"`
            : `run "${runId}" has ${run.messages.length} messages, not ${seen}`;
        yield encodeEvent(`log.${seen}.end`, failedEnd(problem));
        return;
      }
      if ((await changes.wait(options.pollMs, signal)) === "aborted") return;
      yield heartbeat;
      continue;
    }
    const over = !running || run.ended;
    const told = logEvents(
      run.messages,
      over ? { approvalRequests: askedCalls(run), runEnd: runEndFromLog(run) } : undefined,
    );
    const from = after;
    const rest = told.filter((logged) => from === undefined || isAfter(logged.at, from));
    for (const logged of withoutPreview(rest, preview)) {
      yield encodeEvent(logEventId(logged), logged.event);
      if (logged.end === true) return;
      after = logged.at;
      if (logged.event.type === "message") preview = noPreview;
    }
    // A client that had the end already: nothing more will come.
    if (over) return;
    if ((await changes.wait(options.pollMs, signal)) === "aborted") return;
    yield heartbeat;
  }
}

/** A run's messages as recorded, the approval state of its calls as last recorded, and whether a later run began. */
export type RunInLog = { messages: Message[]; approvals: Map<string, string>; ended: boolean };

/** The run's messages recorded after its own entry, up to the next run's (which ends it); `undefined` if it has none. */
export function runInLog(entries: readonly LogEntry[], runId: string): RunInLog | undefined {
  let start = -1;
  for (let index = entries.length - 1; index >= 0; index--) {
    if (isRunEntry(entries[index]!, runId)) {
      start = index;
      break;
    }
  }
  if (start === -1) return undefined;
  const run: RunInLog = { messages: [], approvals: new Map(), ended: false };
  for (const entry of entries.slice(start + 1)) {
    if (isRunEntry(entry, undefined)) return { ...run, ended: true };
    const message = (entry as { message?: Message }).message;
    if (entry.type === "message" && message !== undefined) run.messages.push(message);
    if (message !== undefined && "type" in message && message.type === "tool_call" && message.approval !== undefined)
      run.approvals.set(message.id, message.approval.status);
  }
  return run;
}

function isRunEntry(entry: LogEntry, runId: string | undefined): boolean {
  if (entry.type !== "custom" || (entry as { customType?: unknown }).customType !== runEntryType) return false;
  const data = (entry as { data?: unknown }).data;
  return (
    runId === undefined || (typeof data === "object" && data !== null && (data as { runId?: unknown }).runId === runId)
  );
}

/**
 * How a run ended, told from its log: calls left unanswered that a human was asked about: paused
 * (waiting for them, or decided since); an `aborted` or `error` last message: that; a call left
 * unanswered otherwise, or no answer last: the run stopped before its end (its process went
 * away), an error.
 */
export function runEndFromLog(run: RunInLog): AgentEvent {
  const asked = askedCalls(run);
  if (asked.length > 0) return { type: "run-end", outcome: "paused", pending: asked };
  const last = run.messages.findLast((message) => !("role" in message && message.role === "system"));
  // The one rule of a session's outcome (the stores' list, the viewer, sessionMetrics), on the run's messages.
  switch (restingOutcome(last, false)) {
    case "aborted":
      return { type: "run-end", outcome: "aborted" };
    case "error":
      return failedEnd("the model call failed (see the session's last message)");
    case "done":
    case "stopped":
      if (unansweredCalls(run).length === 0) return { type: "run-end", outcome: "done" };
  }
  return failedEnd("the run stopped before its end (its process went away); its session holds what it recorded");
}

function unansweredCalls(run: RunInLog): ToolCallMessage[] {
  const answered = new Set(
    run.messages.flatMap((message) => ("type" in message && message.type === "tool_result" ? [message.id] : [])),
  );
  return run.messages.flatMap((message) =>
    "type" in message && message.type === "tool_call" && !answered.has(message.id) ? [message] : [],
  );
}

/** The calls a human was asked about and that were left unanswered: what the run waits for. */
function askedCalls(run: RunInLog): { id: string; name: string; input: JsonObject }[] {
  return unansweredCalls(run)
    .filter((call) => run.approvals.has(call.id))
    .map(({ id, name, input }) => ({ id, name, input }));
}

function failedEnd(error: string): AgentEvent {
  return { type: "run-end", outcome: "error", error };
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
