import { tool, type Tool } from "simple-agent-loop";

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
