import type { ContentPart } from "../content-parts.ts";
import {
  keepOutput,
  type JsonValue,
  type Session,
  type TaskRecord,
  type ToolResultMessage,
  type UserMessage,
} from "../session.ts";
import { offloadedResult } from "./recall-output.ts";

/**
 * The message that gives the model a settled task's outcome, at a safe point: `[background task
 * <id> (<tool>) <status>]` and the output (content parts kept; an output longer than `maxChars`
 * cut as `largeOutput` cuts a result, the whole kept for `recall_output` under the call's id).
 */
export function deliveryMessage(
  session: Session,
  task: { record: TaskRecord; callId: string; name: string },
  maxChars: number | undefined,
): UserMessage {
  const { record } = task;
  const text = deliveryText(record, task.name);
  let body = text;
  if (maxChars !== undefined && record.content === undefined) {
    const cut = offloadedResult({ type: "tool_result", id: task.callId, output: text }, maxChars);
    if (cut !== undefined) {
      keepOutput(session, task.callId, text);
      body = typeof cut.output === "string" ? cut.output : text;
    }
  }
  const content: string | ContentPart[] =
    record.content === undefined ? body : [{ type: "text", text: body }, ...record.content];
  return { role: "user", content, deliversTask: record.id };
}

/** The text of a settled task's outcome: a header naming it, then its output. */
export function deliveryText(record: TaskRecord, name: string): string {
  const header = `[background task ${record.id} (${name}) ${record.status}]`;
  if (record.status === "lost") return `${header}\n${lostText}`;
  return `${header}\n${outputText(record.output)}`;
}

const lostText =
  "The process running this task stopped before it settled: its outcome is unknown, and the work may have partly run.";

function outputText(output: JsonValue | undefined): string {
  if (output === undefined) return "";
  return typeof output === "string" ? output : JSON.stringify(output);
}

/**
 * What `wait_task`'s handler returns for a settled task: the outcome becomes the call's result,
 * which carries `deliversTask`, so no message gives it again.
 */
export type TaskDelivery = {
  readonly id: string;
  readonly output: string;
  readonly content?: ContentPart[];
  readonly isError: boolean;
  readonly [taskDeliveryBrand]: true;
};

const taskDeliveryBrand = Symbol.for("simple-agent-loop.taskDelivery");

/** The outcome of a settled task as a tool's value (see `TaskDelivery`). */
export function taskDelivery(record: TaskRecord, name: string): TaskDelivery {
  const delivery: TaskDelivery = {
    id: record.id,
    output: deliveryText(record, name),
    isError: record.isError === true || record.status === "lost",
    [taskDeliveryBrand]: true,
  };
  return record.content === undefined ? delivery : { ...delivery, content: record.content };
}

/** Whether a handler's value is a task's outcome (`taskDelivery`). Never throws. */
export function isTaskDelivery(value: unknown): value is TaskDelivery {
  try {
    return (
      typeof value === "object" &&
      value !== null &&
      (value as { [taskDeliveryBrand]?: unknown })[taskDeliveryBrand] === true
    );
  } catch {
    return false;
  }
}

/** The result of call `id` that gives a task's outcome. */
export function deliveryResult(id: string, delivery: TaskDelivery): ToolResultMessage {
  const result: ToolResultMessage = { type: "tool_result", id, output: delivery.output, deliversTask: delivery.id };
  if (delivery.content !== undefined) result.content = [{ type: "text", text: delivery.output }, ...delivery.content];
  if (delivery.isError) result.isError = true;
  return result;
}
