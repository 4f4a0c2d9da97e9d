import { once } from "node:events";
import type { ServerResponse } from "node:http";
import type { ReadLimits } from "./log-lines.ts";
import { createRawLogReader, parseLogLine, type LogProblem, type LogRecord, type LogUpdate } from "./log-reader.ts";

/** Problems listed at most in one response; the rest are counted in one more. */
export const maxListedProblems = 1000;

/**
 * Answers with the log at `path` read once, as a `LogUpdate` in JSON, written as it is read: a
 * piece of the log at a time, each once the client has taken the one before, so a response holds
 * little memory however large the log and however slow the client. A log rewritten while it is
 * sent ends the response early (the client sees a broken response, and asks again).
 */
export async function sendEntries(
  response: ServerResponse,
  path: string,
  limits: ReadLimits,
  headers: Record<string, string>,
  headOnly: boolean,
): Promise<void> {
  const reader = createRawLogReader(path, limits);
  let update = await reader.read();
  response.writeHead(200, { ...headers, "content-type": "application/json; charset=utf-8" });
  if (headOnly) return void response.end();
  const problems: LogProblem[] = [];
  let unlisted = 0;
  let separator = "";
  await write(response, '{"reset":true,"records":[');
  while (update !== undefined) {
    const records: LogRecord[] = [];
    const found: LogProblem[] = [...update.problems];
    update.lines.forEach((bytes, index) =>
      parseLogLine(bytes.toString("utf8"), update!.firstLine + index, records, found),
    );
    for (const problem of found) {
      if (problems.length < maxListedProblems) problems.push(problem);
      else unlisted++;
    }
    let text = "";
    for (const record of records) {
      text += separator + JSON.stringify(record);
      separator = ",";
    }
    if (!(await write(response, text))) return;
    if (update.more !== true) break;
    const next = await reader.read();
    if (next?.reset === true) return void response.destroy();
    update = next;
  }
  problems.sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
  if (unlisted > 0)
    problems.push({
      message: `${unlisted} more lines could not be read (only the first ${maxListedProblems} are listed)`,
    });
  const tail: Omit<LogUpdate, "reset" | "records"> = { problems };
  if (update?.missing === true) tail.missing = true;
  if (update?.partial !== undefined) tail.partial = update.partial;
  response.end(`],${JSON.stringify(tail).slice(1)}`);
}

// Writes `text`; once the client has it all (or most: the socket's own buffer), resolves true;
// false when the response closed first.
async function write(response: ServerResponse, text: string): Promise<boolean> {
  if (response.destroyed) return false;
  if (text === "" || response.write(text)) return !response.destroyed;
  const closed = once(response, "close").then(() => false);
  const drained = once(response, "drain").then(() => true);
  return Promise.race([closed, drained]);
}
