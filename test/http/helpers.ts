import { tool, type AgentEvent } from "simple-agent-loop";

/** Every event of a stream, in order. */
export async function collect(events: AsyncIterable<AgentEvent>): Promise<AgentEvent[]> {
  const all: AgentEvent[] = [];
  for await (const event of events) all.push(event);
  return all;
}

/** A tool the test releases: the run waits in it until then. */
export function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  let entered!: () => void;
  const inside = new Promise<void>((resolve) => (entered = resolve));
  const wait = tool({
    name: "wait",
    description: "waits for the test",
    inputSchema: { type: "object" },
    handler: async (_input, { signal }) => {
      entered();
      await Promise.race([
        opened,
        new Promise((_resolve, reject) => signal.addEventListener("abort", () => reject(new Error("stopped")))),
      ]);
      return "released";
    },
  });
  return { wait, open, inside };
}
