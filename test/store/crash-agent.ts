// The agent of the crash tests, shared by the child process (crash-child.ts) and the in-process
// runs: a scripted model whose turn depends only on the session (so a resumed run in a new process
// picks up where the session is), and a tool whose every execution that gets past its work appends
// the call id to a side-effect file.
import { appendFileSync } from "node:fs";
import {
  agentLoop,
  extendSession,
  imagePart,
  initSession,
  tool,
  toolContent,
  type InvokeModel,
  type Message,
  type ModelMessage,
  type Session,
} from "simple-agent-loop";
import {
  closeSession,
  flushSession,
  openSession,
  postgresStore,
  sqliteStore,
  type PostgresStore,
  type SqliteStore,
} from "simple-agent-loop/store";
import { scriptedModel } from "simple-agent-loop/testing";

export const modelDelayMs = 25;
export const toolDelayMs = 8;

/** Points of a run where the child can stop (to be killed there). */
export type Probe = {
  /** The session file is open (the lock taken, the log read). */
  opened?: () => void;
  /** A model call starts; `turn` counts the model turns already in the session. */
  modelCall?: (turn: number) => void;
  /** A tool starts, before its side effect. */
  toolStart?: (id: string) => void;
  /** A tool's side effect is done; its result is not returned yet. */
  toolEffect?: (id: string) => void;
  /** A message entered the session (it is in the log). */
  message?: (message: Message) => void;
};

const reasoning = (topic: string): string => `${topic}: ${"step by step, ".repeat(30)}`;
const step = (id: string, n: number, extra: Record<string, string> = {}): ModelMessage => ({
  type: "tool_call",
  id,
  name: "step",
  input: { n, ...extra },
});

/** The model's turns; long thinking and a long input, so compaction rewrites earlier turns as the run goes. */
export const script: ModelMessage[][] = [
  [{ type: "thinking", content: reasoning("plan") }, step("a1", 1, { note: "n".repeat(200) }), step("a2", 2)],
  [{ type: "thinking", content: reasoning("check") }, step("b1", 3)],
  [{ role: "assistant", content: "Halfway there." }, step("c1", 4), step("c2", 5), step("c3", 6)],
  [{ type: "thinking", content: reasoning("finish") }, step("d1", 7)],
  [{ role: "assistant", content: "done" }],
];

export const callIds = script
  .flat()
  .flatMap((message) => ("type" in message && message.type === "tool_call" ? [message.id] : []));

/**
 * Opens the session file (creating it, or resuming what is there), runs the agent to the end
 * unless the session is finished, and closes it. `parallel: false`: each tool's result is recorded
 * before the next tool starts, so a tool whose work is done is one whose result is in the log or
 * the one that was running.
 */
export async function runCrashAgent(
  sessionPath: string,
  effectsPath: string,
  probe: Probe = {},
  onWarning?: (message: string) => void,
): Promise<Session> {
  const store = databaseStore(sessionPath);
  const session =
    store === undefined
      ? await openSession(sessionPath, onWarning === undefined ? {} : { onWarning })
      : await store.store.open(store.id);
  probe.opened?.();
  try {
    const prompt = [{ type: "text" as const, text: "Run all the steps." }, imagePart(screenshot(0), "image/png")];
    for (const message of initSession("You run steps.", prompt).messages.slice(session.messages.length))
      extendSession(session, message);
    if (!isFinished(session)) {
      await agentLoop(crashModel(probe), [stepTool(effectsPath, probe)], session, {
        parallel: false,
        // A database store writes in the background: a model is called and a tool runs only once
        // everything before is stored, as with the file store.
        ...(store === undefined
          ? {}
          : { hooks: { beforeModelCall: () => flushSession(session), beforeToolCall: () => flushSession(session) } }),
        onEvent: (event) => {
          if (event.type === "message") probe.message?.(event.message);
        },
      });
    }
  } finally {
    try {
      await closeSession(session);
    } finally {
      await store?.store.close();
    }
  }
  return session;
}

/**
 * The database store a location names, with the session id after `#`:
 * `sqlite:<file>#<id>` or `postgres://…#<id>`; undefined for a session file's path. Leases of a
 * second, so a killed writer's session is free again soon.
 */
export function databaseStore(location: string): { store: SqliteStore | PostgresStore; id: string } | undefined {
  const hash = location.lastIndexOf("#");
  if (hash === -1) return undefined;
  const where = location.slice(0, hash);
  const id = location.slice(hash + 1);
  if (where.startsWith("sqlite:")) return { store: sqliteStore(where.slice("sqlite:".length), { leaseMs: 1000 }), id };
  if (/^postgres(ql)?:\/\//.test(where))
    return { store: postgresStore({ connectionString: where, leaseMs: 1000 }), id };
  return undefined;
}

export function isFinished(session: Session): boolean {
  const last = session.messages.at(-1);
  return last !== undefined && "role" in last && last.role === "assistant" && last.content === "done";
}

function crashModel(probe: Probe): InvokeModel {
  return (tools, session, context) => {
    const turn = modelTurns(session.messages);
    probe.modelCall?.(turn);
    const messages = script[turn];
    if (messages === undefined) throw new Error(`crash agent: no model turn ${turn} in the script`);
    return scriptedModel([{ delay: modelDelayMs, messages }], { record: false })(tools, session, context);
  };
}

function stepTool(effectsPath: string, probe: Probe) {
  return tool({
    name: "step",
    description: "Runs a numbered step.",
    inputSchema: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] },
    handler: async (input, { id }) => {
      probe.toolStart?.(id);
      await new Promise((resolve) => setTimeout(resolve, toolDelayMs));
      appendFileSync(effectsPath, `${id}\n`);
      probe.toolEffect?.(id);
      const n = input.n as number;
      // An image in every result: its blob is written before the line that refers to it, so kills
      // also land while a blob is being written.
      return toolContent([
        { type: "text", text: JSON.stringify({ n, squared: n * n }) },
        imagePart(screenshot(n), "image/png"),
      ]);
    },
  });
}

/** 48 KB of bytes that depend only on `n`: a screenshot, as far as the store can tell. */
export function screenshot(n: number): Uint8Array {
  const bytes = new Uint8Array(48 * 1024);
  let state = n + 1;
  for (let index = 0; index < bytes.length; index++) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    bytes[index] = state >>> 24;
  }
  return bytes;
}

// How many model turns the session holds. Each scripted turn starts with thinking or assistant
// text and has none after, so a turn cut short by a kill still counts as one.
function modelTurns(messages: readonly Message[]): number {
  let turns = 0;
  let inTurn = false;
  for (const message of messages) {
    const model = "role" in message ? message.role === "assistant" : message.type !== "tool_result";
    const opens = "role" in message ? message.role === "assistant" : message.type === "thinking";
    if (model && (!inTurn || opens)) turns++;
    inTurn = model;
  }
  return turns;
}
