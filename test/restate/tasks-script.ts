// The background-task agent of the Restate tests (the object `tasks` of worker.ts): a scripted model
// that starts tasks on its first turn and answers on every later one, and background tools that
// record their side effects in the control directory and can be held (agent-script.ts's `holdAt`).
//
// The first user message is the tag. Its words pick the tasks: "rebuild" (onRestart "rerun"),
// "deploy" (onRestart "lost"), "watch" (runs until it is cancelled). Effects: `<tool> <tag> start
// <attempt>` when a handler starts, `<tool> <tag> done <attempt>` when it ends; hold points
// `task-<tag>-<tool>-<attempt>`.
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { tool, type InvokeModel, type ModelMessage, type Session, type Tool } from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import { holdAt } from "./agent-script.ts";

/** The model: task calls while the session has none, then a final answer (after each delivered outcome too). */
export function tasksModel(): InvokeModel {
  return async (tools, session, context) => {
    const tag = tagOf(session);
    const started = session.messages.some((message) => "type" in message && message.type === "tool_call");
    const names = ["rebuild", "deploy", "watch"].filter((name) => tag.split(" ").includes(name));
    const turn: ModelMessage[] = started
      ? [{ role: "assistant", content: `Done with ${tag}.` }]
      : names.map((name) => ({ type: "tool_call", id: `${name}-${tag.replaceAll(" ", "-")}`, name, input: {} }));
    return scriptedModel([turn])(tools, session, context) as ModelMessage[] | Promise<ModelMessage[]>;
  };
}

export function tasksTools(dir: string): Tool[] {
  const effect = (line: string): void => appendFileSync(join(dir, "effects"), `${line}\n`);
  return [
    tool({
      name: "rebuild",
      description: "Rebuild everything.",
      inputSchema: { type: "object", properties: {} },
      background: { onRestart: "rerun" },
      handler: heldWork(dir, "rebuild"),
    }),
    tool({
      name: "deploy",
      description: "Deploy.",
      inputSchema: { type: "object", properties: {} },
      background: true,
      handler: heldWork(dir, "deploy"),
    }),
    tool({
      name: "watch",
      description: "Watch until cancelled.",
      inputSchema: { type: "object", properties: {} },
      background: true,
      handler: async (_input, { session, signal }) => {
        effect(`watch ${tagOf(session)} start`);
        await new Promise((_resolve, reject) => {
          signal.addEventListener("abort", () => reject(signal.reason as Error), { once: true });
        });
        return "never";
      },
    }),
  ];
}

// The first user message: deliveries come as user messages too.
/**
 * A task handler for tool `name`: records `<name> <tag> start <attempt>`, waits at the hold point
 * `task-<tag>-<name>-<attempt>`, records `<name> <tag> done <attempt>` and answers.
 */
export function heldWork(
  dir: string,
  name: string,
): (
  _input: unknown,
  context: { session: Session; signal: AbortSignal; task?: { attempt: number } },
) => Promise<string> {
  const effect = (line: string): void => appendFileSync(join(dir, "effects"), `${line}\n`);
  return async (_input, context) => {
    const tag = tagOf(context.session);
    const attempt = context.task?.attempt ?? 0;
    effect(`${name} ${tag} start ${attempt}`);
    await holdAt(dir, `task-${tag.replaceAll(" ", "-")}-${name}-${attempt}`, context.signal);
    effect(`${name} ${tag} done ${attempt}`);
    return `${name} finished (attempt ${attempt})`;
  };
}

/** The run's tag: its first user message. */
export function tagOf(session: Session): string {
  const first = session.messages.find((message) => "role" in message && message.role === "user");
  return first !== undefined && "content" in first && typeof first.content === "string" ? first.content : "untagged";
}
