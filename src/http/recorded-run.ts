import type { AgentStream } from "../loop/loop.ts";
import { appendEntry } from "../store/binding.ts";
import type { LogEntry } from "../store/entries.ts";
import type { SessionStore } from "../store/session-store.ts";
import { resumeId } from "./event-stream-format.ts";
import { sessionChanges } from "./session-changes.ts";
import { runEntryType, runInLog, sessionOfRun } from "./stored-run.ts";
import { noPreview, resumePlace, toldFromLog, type Preview } from "./log-events.ts";
import type { JsonObject, Message } from "../session.ts";

/** A run of a registry with a store, whose session is recorded there. */
export type RecordedRun = {
  sessionId: string;
  /** After the k-th message event (1-based), the run had `messageEnds[k - 1]` events. */
  messageEnds: number[];
  /** What a reader has of the turn in progress past the last message event (its ids carry it). */
  preview: Preview;
  /** The run's messages so far, as its `message` events gave them. */
  messages: Message[];
  /** Each `tool-approval-request` of the run: its index among the run's events, and the call. */
  approvalRequests: { index: number; call: { id: string; name: string; input: JsonObject } }[];
};

/**
 * Marks where the run begins in its session's log (a `run` custom entry with its id, written
 * before the run records anything), so a reader that comes back after the registry forgot the
 * run finds its messages there.
 */
export function recordRun(stream: AgentStream, runId: string, sessionId: string): RecordedRun {
  appendEntry(stream.session, runEntryType, { runId });
  return { sessionId, messageEnds: [], preview: noPreview, messages: [], approvalRequests: [] };
}

/**
 * Where a reader of a recorded run the registry holds resumes: after `<seq>` (an id the registry
 * sent: `<seq>.<messages>…`), or, for an id told from the log (`log.<m>`, `log.<m>.<k>`), after
 * the event of the run's m-th message (`run-start` for 0); `told`: the keys of the events after
 * that message the log told the reader already (see `toldFromLog`), not sent again up to the
 * next message.
 */
export function recordedResumePoint(
  run: { recorded: RecordedRun | undefined; events: readonly unknown[] },
  request: Request,
): { after: number; told?: Set<string>; resend?: number[] } | { problem: string } {
  const given = resumeId(request);
  if (given === undefined) return { after: 0 };
  const sequence = /^(\d{1,15})(?:\.\d{1,15}){0,5}$/.exec(given);
  if (sequence !== null) return { after: Number(sequence[1]) };
  const place = given.startsWith("log.") ? resumePlace(given) : undefined;
  if (place === undefined)
    return { problem: `resume after an id this run sent, not ${JSON.stringify(given.slice(0, 40))}` };
  const { messages, step } = place.after;
  const after = messages === 0 ? Math.min(1, run.events.length) : run.recorded?.messageEnds[messages - 1];
  if (after === undefined) return { problem: `this run has no message ${messages} yet` };
  const { recorded } = run;
  if (recorded === undefined) return { after };
  // The log tells the calls that wait at the end; a live reader got them before the turn's
  // messages: those the reader would miss by resuming here are sent first.
  const seen = recorded.messages.slice(0, messages);
  const answered = new Set(
    seen.flatMap((message) => ("type" in message && message.type === "tool_result" ? [message.id] : [])),
  );
  const waiting = recorded.approvalRequests.filter(({ call }) => !answered.has(call.id));
  const told =
    step === 0
      ? new Set<string>()
      : toldFromLog(
          recorded.messages,
          place.after,
          waiting.map(({ call }) => call),
        );
  const resend = waiting
    .filter(({ index, call }) => index < after && !told.has(`tool-approval-request:${call.id}`))
    .map(({ index }) => index);
  return { after, told, resend };
}

/**
 * Watches the store for a stop request addressed to this run's writer (another process's
 * `registry.stop`, through `store.requestStop`) and aborts the run with its reason: at once
 * where the store pushes changes (`store.watch`), else at the next poll (every `pollMs`).
 */
export function pollStopRequests(
  run: { stream: AgentStream; finished: boolean; ended: Promise<void> },
  sessionId: string,
  store: SessionStore,
  pollMs: number,
): void {
  const { stopRequested } = store;
  if (stopRequested === undefined) return;
  const changes = sessionChanges(store, sessionId);
  void run.ended.finally(() => changes.stop());
  void (async () => {
    while (!run.finished) {
      await changes.wait(pollMs);
      if (run.finished) return;
      // The store unreachable for a moment: the next round asks again.
      const reason = await stopRequested(sessionId).catch(() => undefined);
      if (reason !== undefined && !run.finished) run.stream.abort(reason);
    }
  })();
}

/**
 * Stops a recorded run this registry does not hold: when the session's latest run is `runId` and
 * a writer holds the session, asks that writer to stop (`store.requestStop`) and resolves `true`
 * once it has let go of the session (the run ended); `false` otherwise.
 */
export async function stopElsewhere(
  store: SessionStore,
  runId: string,
  reason: unknown,
  pollMs: number,
): Promise<boolean> {
  const sessionId = sessionOfRun(runId);
  const { requestStop, summary } = store;
  if (sessionId === undefined || requestStop === undefined || summary === undefined) return false;
  const changes = sessionChanges(store, sessionId);
  try {
    if ((await summary(sessionId)).status !== "running") return false;
    if (latestRun(await store.loadEntries(sessionId)) !== runId) return false;
    if (!(await requestStop(sessionId, typeof reason === "string" ? reason : undefined))) return false;
    // Ended: the writer let go, a later run began, or the run's closing `aborted` message is in.
    for (;;) {
      await changes.wait(pollMs);
      if ((await summary(sessionId)).status !== "running") return true;
      const entries = await store.loadEntries(sessionId);
      if (latestRun(entries) !== runId) return true;
      const last = runInLog(entries, runId)?.messages.at(-1);
      if (last !== undefined && "role" in last && last.role === "assistant" && last.stopReason === "aborted")
        return true;
    }
  } catch {
    return false;
  } finally {
    changes.stop();
  }
}

function latestRun(entries: readonly LogEntry[]): string | undefined {
  for (let index = entries.length - 1; index >= 0; index--) {
    const entry = entries[index]! as { type: string; customType?: unknown; data?: unknown };
    if (entry.type === "custom" && entry.customType === runEntryType) {
      const runId = (entry.data as { runId?: unknown } | undefined)?.runId;
      return typeof runId === "string" ? runId : undefined;
    }
  }
  return undefined;
}
