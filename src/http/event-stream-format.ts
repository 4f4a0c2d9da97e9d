import type { AgentEvent } from "../loop/events.ts";

/** The headers of every event stream this module sends: no caching, no proxy buffering. */
export const eventStreamHeaders: Readonly<Record<string, string>> = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache, no-transform",
  "x-accel-buffering": "no",
};

const encoder = new TextEncoder();

/**
 * One event as server-sent-event bytes: `id:` its sequence number in the run (from 1), `data:` its
 * JSON on one line (JSON escapes every line break, so one `data:` line always holds it).
 */
export function encodeEvent(id: number, event: AgentEvent): Uint8Array {
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
  const fromQuery = new URL(request.url).searchParams.get("after");
  const given = fromQuery ?? request.headers.get("last-event-id");
  if (given === null || given === "") return { after: 0 };
  if (!/^\d{1,15}$/.test(given.trim()))
    return {
      problem: `${fromQuery === null ? "Last-Event-ID" : "after"} must be the id of an event (a whole number from 0), not ${JSON.stringify(given.slice(0, 40))}`,
    };
  return { after: Number(given.trim()) };
}
