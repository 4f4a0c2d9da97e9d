import type { ServerResponse } from "node:http";
import { followLog } from "./follow-log.ts";
import { logEvents } from "./log-events.ts";
import { readLineRange, startCursor, type LineCursor, type ReadLimits } from "./log-lines.ts";
import type { RawLogUpdate } from "./log-reader.ts";

export type LogFeedOptions = {
  pollInterval: number;
  limits: ReadLimits;
  /** A stream holding more unsent bytes than this gets nothing more until its client reads them. */
  clientBufferBytes: number;
};

/** Sends logs to event streams; `stream` returns a function that stops sending to that stream. */
export type LogFeeds = { stream: (path: string, response: ServerResponse) => () => void };

/**
 * Sends each log to any number of event streams (each a `ServerResponse` whose headers are
 * written) as `lines` events (see `LogEventHead`): the whole log first, then each change.
 *
 * One follower reads each log, however many streams show it, and the events it makes are shared
 * by the streams that are up to date. A stream that is new, or whose client reads slower than the
 * log grows (more than `clientBufferBytes` unsent), stops getting those: it reads the log itself
 * from where it is, one piece at a time and only as fast as its client reads, until it is up to
 * date again. So memory stays bounded per stream and overall, whatever the clients do.
 */
export function createLogFeeds(options: LogFeedOptions): LogFeeds {
  const feeds = new Map<string, Feed>();
  return {
    stream: (path, response) => {
      const feed = feeds.get(path) ?? startFeed(feeds, path, options);
      return addClient(feeds, feed, response, options);
    },
  };
}

function startFeed(feeds: Map<string, Feed>, path: string, options: LogFeedOptions): Feed {
  const feed: Feed = {
    path,
    generation: 0,
    cursor: startCursor(),
    ino: undefined,
    missing: false,
    partial: undefined,
    clients: new Set(),
    stop: () => {},
  };
  feeds.set(path, feed);
  feed.stop = followLog(path, (update) => deliver(feed, update, options), options);
  return feed;
}

// A stream starts by catching up from the file, and catches up again each time its client has read
// what it was sent ("drain"). Its stop function lets the log go once no stream shows it.
function addClient(
  feeds: Map<string, Feed>,
  feed: Feed,
  response: ServerResponse,
  options: LogFeedOptions,
): () => void {
  const client: Client = {
    response,
    generation: 0,
    cursor: startCursor(),
    resetPending: false,
    live: false,
    reading: false,
    closed: false,
  };
  feed.clients.add(client);
  const resume = (): void => void catchUp(feed, client, options);
  response.on("drain", resume);
  resume();
  return () => {
    client.closed = true;
    response.off("drain", resume);
    feed.clients.delete(client);
    if (feed.clients.size === 0 && feeds.get(feed.path) === feed) {
      feed.stop();
      feeds.delete(feed.path);
    }
  };
}

// What the follower read: sent once, as shared events, to every stream that is up to date; a stream
// that is not, or that falls behind with this, catches up from the file instead.
function deliver(feed: Feed, update: RawLogUpdate, options: LogFeedOptions): void {
  if (update.cursor === undefined) {
    // A read that failed: only news, and small. Every stream hears it.
    const events = logEvents(update);
    for (const client of feed.clients) send(client, events);
    return;
  }
  const generation = feed.generation;
  if (update.reset) {
    feed.generation++;
    feed.missing = update.missing === true;
  }
  feed.cursor = update.cursor;
  if (update.ino !== undefined) feed.ino = update.ino;
  if (update.more !== true || update.reset) feed.partial = update.partial;
  let events: Buffer[] | undefined;
  for (const client of feed.clients) {
    if (client.live && client.generation === generation) {
      events ??= logEvents(update);
      send(client, events);
      client.generation = feed.generation;
      client.cursor = feed.cursor;
      client.live = client.response.writableLength <= options.clientBufferBytes;
    } else {
      client.live = false;
      void catchUp(feed, client, options);
    }
  }
}

// Brings a stream up to date from the file, a piece at a time, waiting for its client to read
// each (its "drain" calls this again); then the stream gets the shared events.
async function catchUp(feed: Feed, client: Client, options: LogFeedOptions): Promise<void> {
  if (client.reading || client.closed || client.live) return;
  client.reading = true;
  try {
    while (!client.closed && feed.generation !== 0 && client.response.writableLength <= options.clientBufferBytes) {
      if (client.generation !== feed.generation) {
        client.generation = feed.generation;
        client.cursor = startCursor();
        client.resetPending = true;
      }
      if (client.cursor.offset >= feed.cursor.offset) return joinShared(feed, client);
      if ((await sendNextPiece(feed, client, options.limits)) === "stop") return;
    }
  } finally {
    client.reading = false;
  }
}

// A stream that has read everything the follower has: it is told what no piece said (a log that is
// empty or missing, a last line being written), then gets the shared events.
function joinShared(feed: Feed, client: Client): void {
  if (client.resetPending || feed.partial !== undefined) {
    const update: RawLogUpdate = {
      reset: client.resetPending,
      firstLine: feed.cursor.line + 1,
      lines: [],
      problems: [],
    };
    if (client.resetPending && feed.missing) update.missing = true;
    if (feed.partial !== undefined) update.partial = feed.partial;
    send(client, logEvents(update));
  }
  client.resetPending = false;
  client.cursor = feed.cursor;
  client.live = true;
}

/**
 * Reads and sends the stream the next piece of the log, up to where the follower stands. "stop":
 * the stream is up to date, or the file changed under the reader (the follower will tell, and
 * catching up starts again); "read on": more to read, or the log was reset meanwhile.
 */
async function sendNextPiece(feed: Feed, client: Client, limits: ReadLimits): Promise<"read on" | "stop"> {
  const generation = feed.generation;
  const batch =
    feed.ino === undefined
      ? undefined
      : await readLineRange(feed.path, feed.ino, client.cursor, feed.cursor.offset, limits);
  if (client.closed || generation !== feed.generation) return "read on";
  if (batch === undefined) return "stop";
  const update: RawLogUpdate = {
    reset: client.resetPending,
    firstLine: client.cursor.line + 1,
    lines: batch.lines,
    problems: batch.problems,
  };
  const upToDate = !batch.more && batch.cursor.offset >= feed.cursor.offset;
  if (upToDate && feed.partial !== undefined) update.partial = feed.partial;
  if (update.reset || update.lines.length > 0 || update.problems.length > 0 || update.partial !== undefined)
    send(client, logEvents(update));
  client.resetPending = false;
  client.cursor = upToDate ? feed.cursor : batch.cursor;
  client.live = upToDate;
  return upToDate ? "stop" : "read on";
}

/** One followed log. `generation` counts the resets read (0: none yet); `cursor` is where its follower stands. */
type Feed = {
  path: string;
  generation: number;
  cursor: LineCursor;
  ino: number | undefined;
  missing: boolean;
  partial: RawLogUpdate["partial"];
  clients: Set<Client>;
  stop: () => void;
};

/** A stream: what it was sent is the log of `generation` up to `cursor`. `live`: it gets the shared events. */
type Client = {
  response: ServerResponse;
  generation: number;
  cursor: LineCursor;
  /** The next piece sent must reset the page: the stream is new, or the log was rewritten. */
  resetPending: boolean;
  live: boolean;
  reading: boolean;
  closed: boolean;
};

function send(client: Client, events: Buffer[]): void {
  if (client.closed || client.response.destroyed) return;
  for (const event of events) client.response.write(event);
}
