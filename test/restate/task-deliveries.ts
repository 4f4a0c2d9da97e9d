import { expect } from "vitest";
import type { Message, Session } from "simple-agent-loop";

/** A user message that gives a background task's outcome. */
export type Delivery = Extract<Message, { role: "user" }> & { deliversTask: string };

/** The session's messages that deliver a task's outcome, in session order. */
export function deliveries(session: Session): Delivery[] {
  return session.messages.filter(
    (message): message is Delivery => "role" in message && message.role === "user" && "deliversTask" in message,
  );
}

/** Every task of the session (at least one) is delivered by exactly one message. */
export function expectDeliveredOnce(session: Session): void {
  const ids = session.messages.flatMap((message) =>
    "type" in message && message.type === "tool_result" && message.task !== undefined ? [message.task.id] : [],
  );
  expect(ids.length).toBeGreaterThan(0);
  const delivered = deliveries(session).map((message) => message.deliversTask);
  expect(delivered.toSorted()).toStrictEqual(ids.toSorted());
}
