import type { AgentEvent } from "../loop/events.ts";

/** The headers of every event stream this module sends: no caching, no proxy buffering. */
export const eventStreamHeaders: Readonly<Record<string, string>> = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache, no-transform",
  "x-accel-buffering": "no",
};

const encoder = new TextEncoder();

/**
 * One event as server-sent-event bytes: `id:` its id (its sequence number in the run, from 1, or
 * another token without line breaks), `data:` its JSON on one line (JSON escapes every line
 * break, so one `data:` line always holds it).
 */
export function encodeEvent(id: number | string, event: AgentEvent): Uint8Array {
  return encoder.encode(`id: ${id}\ndata: ${JSON.stringify(event)}\n\n`);
}

/** A comment line: ignored by readers, it keeps proxies and load balancers from closing an idle stream. */
export const heartbeat: Uint8Array = encoder.encode(": keep-alive\n\n");

/** How often an idle stream sends `heartbeat` unless told otherwise (ms). */
export const defaultHeartbeatMs = 15_000;

/**
 * Where a reader resumes: after the id in `?after=` or, failing that, the `Last-Event-ID` header
 * (what a browser's `EventSource` sends when it reconnects); 0 (from the first event) without
 * either. A value that is not a whole number from 0 is a problem, described for a 400.
 */
export function resumePoint(request: Request): { after: number } | { problem: string } {
  const given = resumeId(request);
  if (given === undefined) return { after: 0 };
  const fromQuery = new URL(request.url).searchParams.has("after");
  if (!/^\d{1,15}$/.test(given.trim()))
    return {
      problem: `${fromQuery ? "after" : "Last-Event-ID"} must be the id of an event (a whole number from 0), not ${JSON.stringify(given.slice(0, 40))}`,
    };
  return { after: Number(given.trim()) };
}

/** The id a reader resumes after, as given (`?after=`, else `Last-Event-ID`); `undefined` for none. */
export function resumeId(request: Request): string | undefined {
  const given = new URL(request.url).searchParams.get("after") ?? request.headers.get("last-event-id");
  return given === null || given.trim() === "" ? undefined : given.trim();
}
