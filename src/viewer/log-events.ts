import type { LogProblem, RawLogUpdate } from "./log-reader.ts";

/**
 * The head of a `lines` event of `/api/events`: the first `data:` line of the event, in JSON. The
 * event's other `data:` lines are `count` lines of the log, numbered from `firstLine`, as they are
 * in the file (the page parses them), except those at the indexes in `quoted` (0 is the first line
 * after the head): a line holding a "\r" (which would end a `data:` line) is sent as a JSON string.
 *
 * A read of the log (`RawLogUpdate`) is sent as one or more events, so that a page shows the start
 * of a long log while the rest is on its way: `reset`, `missing` and `problems` come with the first
 * event of a read only, `partial` with each (it holds until an event says otherwise).
 */
export type LogEventHead = {
  reset: boolean;
  firstLine: number;
  count: number;
  problems: LogProblem[];
  missing?: true;
  partial?: { line: number; bytes: number };
  quoted?: number[];
};

/** Lines go into one event until it holds about this many bytes (a longer line is an event of its own). */
export const eventBytes = 256 * 1024;

/** `update` as the Server-Sent Events that send it, each a buffer ready to write (see `LogEventHead`). */
export function logEvents(update: RawLogUpdate): Buffer[] {
  const events: Buffer[] = [];
  let start = 0;
  do {
    let end = start;
    let bytes = 0;
    while (end < update.lines.length && (end === start || bytes + update.lines[end]!.length <= eventBytes))
      bytes += update.lines[end++]!.length;
    events.push(logEvent(update, start, end, start === 0));
    start = end;
  } while (start < update.lines.length);
  return events;
}

function logEvent(update: RawLogUpdate, start: number, end: number, first: boolean): Buffer {
  const head: LogEventHead = {
    reset: first && update.reset,
    firstLine: update.firstLine + start,
    count: end - start,
    problems: first ? update.problems : [],
  };
  if (first && update.missing === true) head.missing = true;
  if (update.partial !== undefined) head.partial = update.partial;
  const parts: Buffer[] = [];
  const quoted: number[] = [];
  for (let index = start; index < end; index++) {
    const line = update.lines[index]!;
    if (line.includes(13)) {
      quoted.push(index - start);
      parts.push(dataPrefix, Buffer.from(JSON.stringify(line.toString("utf8"))), newline);
    } else {
      parts.push(dataPrefix, line, newline);
    }
  }
  if (quoted.length > 0) head.quoted = quoted;
  return Buffer.concat([Buffer.from(`event: lines\ndata: ${JSON.stringify(head)}\n`), ...parts, newline]);
}

const dataPrefix = Buffer.from("data: ");
const newline = Buffer.from("\n");
