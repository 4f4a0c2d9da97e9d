import type { ElicitationAnswer } from "../tools/elicitation.ts";
import { defaultHeartbeatMs, encodeEvent, eventStreamHeaders, heartbeat, resumePoint } from "./event-stream-format.ts";
import { errorResponse } from "./error-response.ts";
import { recordedResumePoint, recordRun, pollStopRequests, stopElsewhere, type RecordedRun } from "./recorded-run.ts";
import { sessionOfRun, storedRunResponse, unknownRun } from "./stored-run.ts";
import { eventKey, liveEventId, nextPreview } from "./log-events.ts";
import { concatenate } from "./send-buffer.ts";
import { checkFreshStream } from "./fresh-stream.ts";
import { AgentError } from "../errors.ts";
import type { AgentStream } from "../loop/loop.ts";
import { sessionIdOf } from "../session.ts";
import type { SessionStore } from "../store/session-store.ts";
import { checkNumber, maxTimerDelay } from "../numeric-options.ts";

export type RunRegistryOptions = {
  /** How long a finished run stays readable (ms; default 5 minutes), for readers that come late or reconnect. */
  keepFinishedMs?: number;
  /** Send a comment line to a reader after this long without an event (ms, default 15 000); 0: never. */
  heartbeatMs?: number;
  /**
   * Whether the request's caller may read this run (a cookie, a token: the application's own
   * check); `false` answers 403 before anything is read. `sessionId`: the session the run works
   * on, when the registry knows it (a run whose session is in a store, or a recorded run's id).
   * A check that must wait (a database) returns a promise; `response` then answers with one.
   */
  authorize?: (request: Request, runId: string, sessionId: string | undefined) => boolean | Promise<boolean>;
  /**
   * The store the runs' sessions are recorded in (any `SessionStore`: file, SQLite, PostgreSQL).
   * A run whose session was opened in a store is then recorded: the registry marks where it
   * begins in the session's log, its event ids say how many messages came before them, and its
   * id names its session (`<sessionId>:<random>` unless given; give ids of that form). So a
   * reader that reconnects after the registry forgot the run (or after a restart, or on another
   * instance) reads on from the log, and `stop` reaches a run another process holds through the
   * store's `requestStop`, which the holding registry polls.
   */
  store?: SessionStore;
  /** How often a recorded run's stop requests, and a log read for a run held elsewhere, are checked (ms, default 500). */
  pollMs?: number;
};

/**
 * Runs that outlive the requests that read them, by id. The registry reads each run to its end and
 * keeps its events; every reader gets them from its own offset, from what was kept.
 */
export type RunRegistry = {
  /**
   * Takes over `stream` (reads it from now on; nobody else may iterate it) and returns the run's
   * id: `runId` if given (1 to 128 letters, digits, `.`, `_`, `:` or `-`), otherwise a random
   * UUID. Throws an `AgentError` for a malformed id, the id of a run still going, or a stream
   * whose first events are gone (its run began before `start`: hand the stream over in the same
   * synchronous step as `agentStream(...)`; reading `result` first is fine): the registry keeps
   * every event from `run-start` on, so a response made right after `start` begins with it.
   */
  start: (stream: AgentStream, options?: { runId?: string }) => string;
  /**
   * The run's events for one reader, as server-sent events (see `eventStreamResponse`): from the
   * first, or after the id in `?after=` or `Last-Event-ID`, then the live ones, ending after
   * `run-end`. 404 for a run nobody knows (not held here, or finished longer than
   * `keepFinishedMs` ago, and, with a store, not in its session's log), 403 when `authorize`
   * says no, 400 for a malformed run id or a malformed or impossible resume point, 405 for a
   * method other than GET or HEAD. A reader that disconnects leaves the run going. A plain
   * `Response` for a run the registry holds; a promise of one when it must ask the store (a run
   * it does not hold, with `store`) or `authorize` answers with a promise: `await` it.
   */
  response: (runId: string, request: Request) => Response | Promise<Response>;
  /**
   * Aborts the run (`AgentStream.abort`) and resolves `true` once it has ended (the session valid,
   * `run-end` sent to every reader, each reader's stream then closed); `false` for a run that is
   * unknown or already finished.
   */
  stop: (runId: string, reason?: unknown) => Promise<boolean>;
  /** Whether the registry holds the run, and whether it is still going. */
  status: (runId: string) => "running" | "finished" | undefined;
  /**
   * Answers the run's `elicitation-request` `id` (`AgentStream.answerElicitation`): `false` when
   * the registry holds no such run still going, or no such question waits in it.
   */
  answerElicitation: (runId: string, id: string, answer: ElicitationAnswer) => boolean;
};

/** The default of `RunRegistryOptions.keepFinishedMs`: 5 minutes. */
export const defaultKeepFinishedMs = 5 * 60_000;

/**
 * A registry of runs in this process, for any number of readers per run. Memory: each run keeps
 * every event it produced (as the bytes sent), about the size of its session plus its deltas,
 * until `keepFinishedMs` after it ends; a reader holds no copy, only its offset, and is sent more
 * only as it reads (backpressure), so a slow reader slows neither the run nor the other readers
 * and costs no memory that grows.
 */
export function createRunRegistry(options: RunRegistryOptions = {}): RunRegistry {
  checkNumber("keepFinishedMs", options.keepFinishedMs, { min: 0, max: maxTimerDelay });
  checkNumber("heartbeatMs", options.heartbeatMs, { min: 0, max: maxTimerDelay });
  if (options.authorize !== undefined && typeof options.authorize !== "function")
    throw new AgentError("createRunRegistry: authorize must be a function (request, runId) => boolean");
  checkNumber("pollMs", options.pollMs, { min: 1, max: maxTimerDelay });
  const keepFinishedMs = options.keepFinishedMs ?? defaultKeepFinishedMs;
  const heartbeatMs = options.heartbeatMs ?? defaultHeartbeatMs;
  const pollMs = options.pollMs ?? defaultPollMs;
  const { store } = options;
  const runs = new Map<string, KeptRun>();
  return {
    start: (stream, startOptions = {}) => {
      const sessionId = store === undefined ? undefined : sessionIdOf(stream.session);
      const runId =
        startOptions.runId ?? (sessionId === undefined ? crypto.randomUUID() : `${sessionId}:${crypto.randomUUID()}`);
      if (typeof runId !== "string" || !runIdPattern.test(runId))
        throw new AgentError(
          `createRunRegistry: runId must be 1 to 128 letters, digits, ".", "_", ":" or "-"; got ${JSON.stringify(runId)}`,
        );
      const existing = runs.get(runId);
      if (existing !== undefined && !existing.finished)
        throw new AgentError(`createRunRegistry: run "${runId}" is still going; stop it or choose another id`);
      checkFreshStream(stream, "createRunRegistry().start");
      if (existing !== undefined) clearTimeout(existing.forget);
      const recorded = sessionId === undefined ? undefined : recordRun(stream, runId, sessionId);
      const run = keepRun(stream, recorded, () => {
        run.forget = setTimeout(() => runs.get(runId) === run && runs.delete(runId), keepFinishedMs);
        (run.forget as { unref?: () => void }).unref?.();
      });
      runs.set(runId, run);
      if (recorded !== undefined && store !== undefined) pollStopRequests(run, recorded.sessionId, store, pollMs);
      return runId;
    },
    response: (runId, request) => {
      if (request.method !== "GET" && request.method !== "HEAD")
        return errorResponse(405, `read a run's events with GET, not ${request.method.slice(0, 20)}`);
      if (typeof runId !== "string" || !runIdPattern.test(runId))
        return errorResponse(400, `a run id is 1 to 128 letters, digits, ".", "_", ":" or "-"`);
      const run = runs.get(runId);
      const sessionId = run === undefined ? (store === undefined ? undefined : sessionOfRun(runId)) : run.sessionId;
      const serve = (): Response | Promise<Response> => {
        if (run === undefined && store !== undefined && sessionId !== undefined)
          return storedRunResponse({ store, sessionId, runId, request, pollMs });
        if (run === undefined) return unknownRun(runId);
        const resume: { after: number; told?: Set<string>; resend?: number[] } | { problem: string } =
          run.recorded === undefined ? resumePoint(request) : recordedResumePoint(run, request);
        if ("problem" in resume) return errorResponse(400, resume.problem);
        if (resume.after > run.events.length)
          return errorResponse(400, `no event ${resume.after} in this run yet: it has ${run.events.length}`);
        return new Response(readerBody(run, resume, request.signal, heartbeatMs), {
          headers: eventStreamHeaders,
        });
      };
      if (options.authorize === undefined) return serve();
      const allowed = options.authorize(request, runId, sessionId);
      const refused = (): Response => errorResponse(403, "not allowed to read this run");
      if (typeof allowed === "boolean") return allowed ? serve() : refused();
      return Promise.resolve(allowed).then((answer) => (answer === true ? serve() : refused()));
    },
    stop: async (runId, reason) => {
      const run = runs.get(runId);
      if (run === undefined && store !== undefined) return stopElsewhere(store, runId, reason, pollMs);
      if (run === undefined || run.finished) return false;
      run.stream.abort(reason ?? "stopped");
      await run.ended;
      return true;
    },
    status: (runId) => {
      const run = runs.get(runId);
      return run === undefined ? undefined : run.finished ? "finished" : "running";
    },
    answerElicitation: (runId, id, answer) => {
      const run = runs.get(runId);
      return run !== undefined && !run.finished && run.stream.answerElicitation(id, answer);
    },
  };
}

const runIdPattern = /^[A-Za-z0-9._:-]{1,128}$/;

/** The default of `RunRegistryOptions.pollMs`. */
export const defaultPollMs = 500;

// One run's kept events: event `i` (0-based) was sent with id `i + 1` (a recorded run's:
// `<i + 1>.<messages so far>`).
type KeptRun = {
  stream: AgentStream;
  /** The session the run works on, when the registry's store holds it. */
  sessionId: string | undefined;
  recorded: RecordedRun | undefined;
  events: Uint8Array[];
  /** Each kept event's key (`eventKey`). */
  keys: string[];
  finished: boolean;
  ended: Promise<void>;
  /** Readers waiting for the next event. */
  waiting: Set<() => void>;
  forget: ReturnType<typeof setTimeout> | undefined;
};

function keepRun(stream: AgentStream, recorded: RecordedRun | undefined, onEnd: () => void): KeptRun {
  const run: KeptRun = {
    stream,
    sessionId: recorded?.sessionId ?? sessionIdOf(stream.session),
    recorded,
    events: [],
    keys: [],
    finished: false,
    ended: Promise.resolve(),
    waiting: new Set(),
    forget: undefined,
  };
  const wakeReaders = (): void => {
    for (const wake of run.waiting) wake();
    run.waiting.clear();
  };
  run.ended = (async () => {
    try {
      for (;;) {
        const next = await stream.next();
        if (next.done === true) break;
        const seq = run.events.length + 1;
        if (recorded === undefined) run.events.push(encodeEvent(seq, next.value));
        else {
          if (next.value.type === "message") {
            recorded.messageEnds.push(seq);
            recorded.messages.push(next.value.message);
          }
          recorded.preview = nextPreview(recorded.preview, next.value);
          run.events.push(encodeEvent(liveEventId(seq, recorded.messageEnds.length, recorded.preview), next.value));
        }
        run.keys.push(eventKey(next.value));
        if (recorded !== undefined && next.value.type === "tool-approval-request") {
          const { id, name, input } = next.value;
          recorded.approvalRequests.push({ index: run.events.length - 1, call: { id, name, input } });
        }
        wakeReaders();
      }
    } catch {
      // The run's error was kept as its `run-end` event; the stream rethrows it after.
    } finally {
      run.finished = true;
      wakeReaders();
      onEnd();
    }
  })();
  return run;
}

/** The most bytes sent to a reader in one chunk: a reader that starts far behind catches up in pieces. */
const chunkBytes = 64 * 1024;

// A reader pulls from its offset: nothing is queued for it beyond the chunk it asked for.
function readerBody(
  run: KeptRun,
  resume: { after: number; told?: Set<string> | undefined; resend?: number[] | undefined },
  signal: AbortSignal,
  heartbeatMs: number,
): ReadableStream<Uint8Array> {
  let offset = resume.after;
  let skipping = resume.told;
  const resend = resume.resend ?? [];
  let closed = false;
  let wakeThis: (() => void) | undefined;
  const leave = (): void => {
    closed = true;
    if (wakeThis !== undefined) run.waiting.delete(wakeThis);
    wakeThis?.();
  };
  signal.addEventListener("abort", leave, { once: true });
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        for (;;) {
          while (!closed && offset >= run.events.length && !run.finished) {
            if ((await nextEvent(run, heartbeatMs, (wake) => (wakeThis = wake))) === "idle" && !closed)
              return controller.enqueue(heartbeat);
          }
          if (closed || offset >= run.events.length) {
            signal.removeEventListener("abort", leave);
            return controller.close();
          }
          const chunks: Uint8Array[] = resend.splice(0).map((index) => run.events[index]!);
          let size = chunks.reduce((total, chunk) => total + chunk.byteLength, 0);
          while (offset < run.events.length && size < chunkBytes) {
            const key = run.keys[offset]!;
            const event = run.events[offset++]!;
            if (key === "message") skipping = undefined;
            if (skipping?.has(key) === true) continue;
            chunks.push(event);
            size += event.byteLength;
          }
          // All of it was told to the reader from the log already: wait for more.
          if (size > 0) return controller.enqueue(concatenate(chunks, size));
        }
      },
      cancel: leave,
    },
    { highWaterMark: 0 },
  );
}

// Waits for the run's next event (or its end), or `heartbeatMs` of silence.
function nextEvent(run: KeptRun, heartbeatMs: number, register: (wake: () => void) => void): Promise<"event" | "idle"> {
  return new Promise((resolve) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const wake = (): void => {
      if (timer !== undefined) clearTimeout(timer);
      run.waiting.delete(wake);
      resolve("event");
    };
    run.waiting.add(wake);
    register(wake);
    if (heartbeatMs > 0)
      timer = setTimeout(() => {
        run.waiting.delete(wake);
        resolve("idle");
      }, heartbeatMs);
  });
}
