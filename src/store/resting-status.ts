import { open } from "node:fs/promises";
import type { SessionStatus } from "./session-summary.ts";

/** How much of a log's end `restingStatusFromTail` reads first; a longer last turn falls back to more. */
export const tailBytes = 8 * 1024;

/**
 * Where the session in the JSONL log at `path` rests (`paused`, `done` or `error`, as
 * `summaryTracker` tells from the whole log), read from the log's end: only the last turn can hold
 * calls waiting for a human, and only the last message can have ended in an error. Reads
 * `tailBytes` and, while that window ends inside the last turn, windows eight times larger, up to
 * the whole file. `undefined` when the answer needs the whole log read in order (a splice in the
 * last turn, a line that is not JSON): the caller reads it whole then.
 */
export async function restingStatusFromTail(path: string): Promise<Exclude<SessionStatus, "running"> | undefined> {
  const file = await open(path, "r");
  try {
    const { size } = await file.stat();
    for (let window = tailBytes; ; window *= 8) {
      const start = Math.max(0, size - window);
      const bytes = Buffer.alloc(size - start);
      const { bytesRead } = await file.read(bytes, 0, bytes.length, start);
      const verdict = restingFromEnd(linesOf(bytes.subarray(0, bytesRead), start === 0), start === 0);
      if (verdict !== "more" || start === 0) return verdict === "more" ? undefined : verdict;
    }
  } finally {
    await file.close();
  }
}

// The window's lines, newest first. Unless the window starts the file, its first line may be the
// end of a longer one: it is left out. So is a last line without "\n" that is not JSON (torn), as
// loading leaves it out.
function linesOf(bytes: Buffer, fromStart: boolean): string[] {
  const lines = bytes.toString("utf8").split("\n");
  if (!fromStart) lines.shift();
  else if (lines[0]?.startsWith("\uFEFF") === true) lines[0] = lines[0].slice(1);
  const last = lines.pop() ?? "";
  if (last.trim() !== "" && isJson(last)) lines.push(last);
  return lines.reverse();
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

type Verdict = Exclude<SessionStatus, "running"> | "more" | undefined;

// Walks the entries back from the last. A call's newest state is the first one met (a result, or
// an update or replacement of its message); a call met with `approval.status: "pending"` and no
// newer state pauses the session. The walk ends at the message before the last turn's calls.
function restingFromEnd(lines: readonly string[], reachesStart: boolean): Verdict {
  const settled = new Set<string>();
  let failed: boolean | undefined;
  let sawCall = false;
  for (const line of lines) {
    if (line.trim() === "") continue;
    let entry: unknown;
    try {
      entry = JSON.parse(line);
    } catch {
      return undefined;
    }
    if (!isObject(entry)) continue;
    if (entry.type === "splice") return undefined;
    if (entry.type === "update" || entry.type === "replace") {
      if (callWaits(entry.message, settled)) return "paused";
      continue;
    }
    if (entry.type !== "message" || !isObject(entry.message)) continue;
    const message = entry.message;
    failed ??= message.stopReason === "error";
    if (message.type === "tool_result" && typeof message.id === "string") settled.add(message.id);
    else if (message.type === "tool_call") {
      sawCall = true;
      if (callWaits(message, settled)) return "paused";
    } else if (sawCall || message.role === "user" || message.role === "assistant") {
      // The turn that made the last calls began after this message: nothing older can wait.
      return failed ? "error" : "done";
    }
  }
  if (!reachesStart) return "more";
  return failed === true ? "error" : "done";
}

// Whether a call's state, met walking back, is a wait no newer state settled; marks it settled.
function callWaits(message: unknown, settled: Set<string>): boolean {
  if (!isObject(message) || message.type !== "tool_call" || typeof message.id !== "string") return false;
  if (settled.has(message.id)) return false;
  settled.add(message.id);
  return isObject(message.approval) && message.approval.status === "pending";
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
