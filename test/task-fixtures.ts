import { tool, type Message, type Session, type Tool, type ToolResultMessage } from "simple-agent-loop";

/** A promise the test settles when it says so: what a background task's handler waits on. */
export function gate<T = string>(): {
  promise: Promise<T>;
  resolve: (value: T) => void;
  reject: (error: unknown) => void;
} {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((settle, fail) => {
    resolve = settle;
    reject = fail;
  });
  return { promise, resolve, reject };
}

/** A background tool `build` (no input) whose handler is the test's. */
export function buildTool(handler: () => Promise<string>): Tool<Record<string, never>> {
  return tool({
    name: "build",
    description: "Builds.",
    inputSchema: { type: "object", properties: {} },
    background: true,
    handler,
  });
}

/** The id of the session's first background task (from the result that started it). */
export function taskIdOf(session: Session): string {
  const result = session.messages.find(
    (message): message is ToolResultMessage =>
      "type" in message && message.type === "tool_result" && message.task !== undefined,
  );
  if (result === undefined) throw new Error("no background task in the session");
  return result.task!.id;
}

/** The session's messages that deliver a task's outcome (`deliversTask`). */
export function deliveries(session: Session): Message[] {
  return session.messages.filter((message) => "deliversTask" in message && message.deliversTask !== undefined);
}
