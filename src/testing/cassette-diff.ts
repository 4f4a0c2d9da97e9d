import { readFile } from "node:fs/promises";
import { firstDifference, showValue } from "./cassette-compare.ts";
import type { CassetteAnswer, CassetteModelEntry } from "./cassette-entry.ts";
import { readCassette } from "./cassette.ts";

/** One change between two recordings, as a line a PR check can print. */
export type CassetteDifference = {
  call?: number;
  what: "calls" | "request" | "tools" | "text" | "error";
  line: string;
};

/**
 * What changed between recordings `a` and `b`: the number of model calls, and per call the first
 * difference of the request, the tools the model called (names and inputs), its text and its
 * failure. Timing is not a change. An empty list: the same run.
 */
export async function cassetteDiff(a: string, b: string): Promise<CassetteDifference[]> {
  const [before, after] = await Promise.all([modelCalls(a), modelCalls(b)]);
  const differences: CassetteDifference[] = [];
  if (before.length !== after.length) {
    differences.push({ what: "calls", line: `model calls: ${before.length} → ${after.length}` });
  }
  for (let index = 0; index < Math.max(before.length, after.length); index++) {
    const call = index + 1;
    const left = before[index];
    const right = after[index];
    if (left === undefined || right === undefined) {
      const only = (left ?? right)!;
      const side = left === undefined ? "only in b" : "only in a";
      differences.push({
        call,
        what: "calls",
        line: `call ${call} ${side}: tools ${toolsText(only.answer)}, text ${showValue(textOf(only.answer))}`,
      });
      continue;
    }
    const request = firstDifference(left.request, right.request);
    if (request !== undefined) {
      differences.push({
        call,
        what: "request",
        line: `call ${call} request ${request.path}: ${showValue(request.recorded)} → ${showValue(request.now)}`,
      });
    }
    const tools = firstDifference(toolCalls(left.answer), toolCalls(right.answer));
    if (tools !== undefined) {
      differences.push({
        call,
        what: "tools",
        line: `call ${call} tools: ${toolsText(left.answer)} → ${toolsText(right.answer)}`,
      });
    }
    if (textOf(left.answer) !== textOf(right.answer)) {
      differences.push({
        call,
        what: "text",
        line: `call ${call} text: ${showValue(textOf(left.answer))} → ${showValue(textOf(right.answer))}`,
      });
    }
    const leftError = errorOf(left.answer);
    const rightError = errorOf(right.answer);
    if (leftError !== rightError) {
      differences.push({
        call,
        what: "error",
        line: `call ${call} error: ${leftError ?? "(none)"} → ${rightError ?? "(none)"}`,
      });
    }
  }
  return differences;
}

async function modelCalls(path: string): Promise<CassetteModelEntry[]> {
  const text = await readFile(path, "utf8").catch(() => undefined);
  return readCassette(path, text).filter((entry): entry is CassetteModelEntry => entry.kind === "model");
}

function messagesOf(answer: CassetteAnswer): Record<string, unknown>[] {
  if (answer.type === "messages") return answer.messages;
  if (answer.type === "stream") {
    return answer.events.flatMap(({ event }) =>
      event.type === "message" ? [event.message as unknown as Record<string, unknown>] : [],
    );
  }
  return [];
}

function toolCalls(answer: CassetteAnswer): { name: unknown; input: unknown }[] {
  return messagesOf(answer)
    .filter((message) => message.type === "tool_call")
    .map((message) => ({ name: message.name, input: message.input }));
}

function toolsText(answer: CassetteAnswer): string {
  const calls = toolCalls(answer);
  return calls.length === 0
    ? "(none)"
    : calls.map((call) => `${String(call.name)}(${showValue(call.input, 60)})`).join(", ");
}

function textOf(answer: CassetteAnswer): string {
  return messagesOf(answer)
    .filter((message) => message.role === "assistant" && typeof message.content === "string")
    .map((message) => message.content as string)
    .join("\n");
}

function errorOf(answer: CassetteAnswer): string | undefined {
  const error = answer.type === "error" ? answer.error : answer.type === "stream" ? answer.error : undefined;
  return error === undefined ? undefined : `${error.name}: ${error.message}`;
}
