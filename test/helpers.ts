import { createServer } from "node:net";
import type { Message, Session, ToolCallMessage, ToolResultMessage, ToolSchema } from "simple-agent-loop";

/**
 * A message without its clock readings, for whole-object assertions: `ts`, and a tool result's
 * `waitMs` (set only when a gate took a millisecond or more, which a loaded machine decides;
 * test/wait-time.test.ts asserts it on its own).
 */
export function withoutClock<M extends Message>(message: M): M {
  const { ts: _ts, ...rest } = message;
  if ("waitMs" in rest) delete rest.waitMs;
  // A decision's time is a clock reading too (a durable run's journaled clock, else the wall's).
  const call = rest as Partial<ToolCallMessage>;
  if (call.type === "tool_call" && call.approval?.at !== undefined) {
    const { at: _at, ...approval } = call.approval;
    return { ...rest, approval } as unknown as M;
  }
  return rest as M;
}

/** The session's messages without their clock readings (`withoutClock`). */
export function withoutTs(session: Session): Message[] {
  return session.messages.map(withoutClock);
}

/** Every tool_call has exactly one tool_result, after it. */
export function expectEveryCallAnsweredOnce(session: Session): void {
  const calls = new Map<string, number>();
  const answers = new Map<string, number>();
  session.messages.forEach((message, index) => {
    if (!("type" in message)) return;
    if (message.type === "tool_call") {
      if (calls.has(message.id)) throw new Error(`duplicate tool_call id ${message.id}`);
      calls.set(message.id, index);
    }
    if (message.type === "tool_result") {
      if (answers.has(message.id)) throw new Error(`tool_call ${message.id} answered twice`);
      const callIndex = calls.get(message.id);
      if (callIndex === undefined) throw new Error(`tool_result ${message.id} without a preceding tool_call`);
      answers.set(message.id, index);
    }
  });
  for (const id of calls.keys()) if (!answers.has(id)) throw new Error(`tool_call ${id} has no tool_result`);
}

export const addSchema: ToolSchema = {
  name: "add",
  description: "Add two integers.",
  input_schema: {
    type: "object",
    properties: { a: { type: "integer" }, b: { type: "integer" } },
    required: ["a", "b"],
  },
};

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A free loopback port: listen on 0, read the port, close (nothing listens on it afterwards). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * Messages (or stream events) without who answered (`model`, `responseId`), for tests about
 * something else; the conformance suite checks those fields for every adapter.
 */
export function withoutAnswerer<T>(value: T): T {
  const strip = (item: unknown): unknown => {
    if (typeof item !== "object" || item === null || Array.isArray(item)) return item;
    const { model: _model, responseId: _responseId, ...rest } = item as Record<string, unknown>;
    return rest;
  };
  return (Array.isArray(value) ? value.map(strip) : strip(value)) as T;
}

/** The tool call `id` of `session`; throws when there is none. */
export function toolCallOf(session: Session, id: string): ToolCallMessage {
  const found = session.messages.find(
    (message): message is ToolCallMessage => "type" in message && message.type === "tool_call" && message.id === id,
  );
  if (found === undefined) throw new Error(`no tool call ${id} in the session`);
  return found;
}

/** The tool result that answers call `id` of `session`, if any. */
export function toolResultOf(session: Session, id: string): ToolResultMessage | undefined {
  return session.messages.find(
    (message): message is ToolResultMessage => "type" in message && message.type === "tool_result" && message.id === id,
  );
}
