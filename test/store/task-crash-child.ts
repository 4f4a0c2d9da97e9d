// A child process for the background-task crash tests: opens a session (a file, or a database
// location `sqlite:<file>#<id>` / `postgres://…#<id>`), starts or resumes two background tasks
// and, at the point its mode names, says so on stdout and blocks, so the parent's SIGKILL lands there.
//   node --conditions=simple-agent-loop-source test/store/task-crash-child.ts <location> <effects> <mode>
// Modes: `running` (killed while a rerun task and a lost task run: their running records are in
// the log), `settled` (killed after both settled, their records written, before any delivery),
// `resume` (a new process: runs the session to its end, each task's handler returning at once).
// With TASK_CRASH_GUARD=1 each outcome holds a secret that a toolOutput guardrail of the run blocks.
import { appendFileSync, writeSync } from "node:fs";
import {
  agentLoop,
  backgroundTasks,
  initSession,
  extendSession,
  tool,
  type Guardrail,
  type InvokeModel,
  type Session,
} from "simple-agent-loop";
import { closeSession, flushSession, isSessionLockedError, openSession } from "simple-agent-loop/store";
import { databaseStore } from "./crash-agent.ts";

const [location, effectsPath, mode] = process.argv.slice(2);
if (
  location === undefined ||
  effectsPath === undefined ||
  (mode !== "running" && mode !== "settled" && mode !== "resume")
)
  throw new Error("usage: task-crash-child.ts <location> <effects> running|settled|resume");

function stop(): never {
  writeSync(1, `${JSON.stringify({ stopped: mode })}\n`);
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 30_000);
  process.exit(3);
}

const guard = process.env.TASK_CRASH_GUARD === "1";
const vault: Guardrail = {
  name: "vault",
  check: ({ text = "" }) => (text.includes("SECRET") ? { action: "block", message: "a secret" } : { action: "allow" }),
};
const never = new Promise<never>(() => undefined);
let started = 0;
// In "settled", the handlers settle once the run has ended (whenIdle "end"), so their outcomes are
// recorded and not yet delivered when the kill comes; settled at once, they would be delivered
// at the run's next safe point, before its second model call.
let endRun: () => void = () => undefined;
const runEnded = new Promise<void>((resolve) => (endRun = resolve));

// Each start of a handler is a side effect the parent counts: `<tool>:<attempt>`.
function taskTool(name: string, background: { onRestart: "rerun" | "lost" }) {
  return tool({
    name,
    description: `The ${name} step.`,
    inputSchema: { type: "object", properties: { target: { type: "string" } }, required: ["target"] },
    background,
    handler: async (input, context) => {
      appendFileSync(effectsPath!, `${name}:${context.task?.attempt}:${context.task?.id}\n`);
      started++;
      if (mode === "running") return await never;
      if (mode === "settled") await runEnded;
      return `${name} of ${String(input.target)} done${guard ? " with SECRET-7" : ""}`;
    },
  });
}

const tools = [taskTool("rebuild", { onRestart: "rerun" }), taskTool("deploy", { onRestart: "lost" })];

// The model's answer depends only on the session: start both tasks once, else answer.
const model: InvokeModel = async (_tools, session) => {
  const started = session.messages.some((message) => "type" in message && message.type === "tool_call");
  if (!started)
    return [
      { type: "tool_call", id: "r1", name: "rebuild", input: { target: "app" } },
      { type: "tool_call", id: "d1", name: "deploy", input: { target: "prod" } },
    ];
  return [{ role: "assistant", content: `noted ${session.messages.length}` }];
};

const database = databaseStore(location);
const session = await open();
writeSync(1, `${JSON.stringify({ opened: true })}\n`);
try {
  if (session.messages.length === 0)
    for (const message of initSession("You start tasks.", "Rebuild and deploy.").messages)
      extendSession(session, message);
  let settled = 0;
  await agentLoop(model, tools, session, {
    ...(guard ? { guardrails: { toolOutput: [vault] } } : {}),
    backgroundTasks: {
      whenIdle: mode === "resume" ? "wait" : "end",
      onTaskSettled: () => {
        settled++;
        if (mode === "settled" && settled === 2) void flushSession(session).then(stop);
      },
    },
  });
  endRun();
  if (mode === "running") {
    while (started < 2) await new Promise((resolve) => setTimeout(resolve, 5));
    await flushSession(session);
    stop();
  }
  if (mode === "settled") await never;
  writeSync(1, `${JSON.stringify({ done: backgroundTasks(session) })}\n`);
} finally {
  await closeSession(session);
  await database?.store.close();
}

// A killed writer's lease runs out after a second: until then the session is locked.
async function open(): Promise<Session> {
  for (let attempt = 0; ; attempt++) {
    try {
      return database === undefined ? await openSession(location!) : await database.store.open(database.id);
    } catch (error) {
      if (!isSessionLockedError(error) || attempt > 200) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
