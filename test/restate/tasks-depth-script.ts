// The agent of the Restate tests of background tasks beyond the plain ones (the object `taskDepth`
// of worker.ts): the task tools, a run that fails while a task runs, an approval pause while a task
// runs, a guardrail on an outcome, a background subagent's spending. A scripted model picks its turn
// from the session; tools record their side effects in the control directory and can be held
// (agent-script.ts's `holdAt`).
//
// The first user message is the tag; its words pick the scenario:
// - "tools": starts `watch` (runs until cancelled), then calls check_task, then cancel_task ("crash":
//   with a parallel `slow` call, held at `tool-slow-<slug>`), then answers.
// - "midcall": starts `watch`, then answers, its first answer held at `model-<slug>-answer`.
// - "fail": starts `rebuild` (onRestart "rerun", held at `task-<slug>-rebuild-<attempt>`) and `scan`
//   (onRestart "lost", held likewise); "quick" instead starts `quick`, which ends at once, with a
//   `settle` call that waits for it; "late" starts `scan` alone; then the model fails (a retryable ProviderError, retried by
//   Restate, then the run fails; "late": releases `scan`, then once it is done, a 400, not retried) until the
//   session has a second user message; then it answers. "limit" starts `scan`, then calls
//   check_task until the object's maxIterations (2, the object `taskDepthLimit`) ends the run.
// - "approval": starts `rebuild`, then calls `ship` (needs approval), then answers.
// - "guard": starts `leak` (its outcome holds a secret; the guardrail `vault` blocks it), then
//   answers (held at `model-<slug>-delivered` once the outcome is delivered).
// - "spend": starts `research`, a background subagent whose every model call costs $0.01 and asks
//   for another step (30 at most; "brief": 3, then it answers: $0.04 in all), then answers (held at
//   `model-<slug>-delivered` once the outcome is delivered); the run's budget is $0.06.
// Effects: `<tool> <tag> start <attempt>`, `<tool> <tag> done <attempt>`, `watch <tag> aborted`,
// `model <tag> <turn>` (the parent's calls), `research <tag> call` (the subagent's calls), `vault
// block` / `vault allow` (the guardrail's verdicts).
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  ProviderError,
  subagentTool,
  taskTools,
  tool,
  type Guardrail,
  type InvokeModel,
  type JsonObject,
  type ModelMessage,
  type ModelPrice,
  type Session,
  type Tool,
  type Usage,
} from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";
import { holdAt } from "./agent-script.ts";
import { heldWork, tagOf } from "./tasks-script.ts";

export const depthPrices: Record<string, ModelPrice> = { cheap: { inputPerMTok: 10, outputPerMTok: 0 } };
// 1,000 input tokens at $10 per million: $0.01 a call.
const centUsage: Usage = { inputTokens: 1_000, outputTokens: 0 };

export function depthModel(dir: string): InvokeModel {
  return async (tools, session, context) => {
    const tag = tagOf(session);
    const words = tag.split(" ");
    const slug = tag.replaceAll(" ", "-");
    const turn = session.messages.filter((message) => "role" in message && message.role === "assistant").length;
    appendFileSync(join(dir, "effects"), `model ${tag} ${calls(session).length} ${turn}\n`);
    const answer: ModelMessage[] = [{ role: "assistant", content: `Done with ${tag}.` }];
    const call = (name: string, input: JsonObject = {}): ModelMessage => ({
      type: "tool_call",
      id: `${name}-${slug}`,
      name,
      input,
    });
    const called = (name: string): boolean => calls(session).includes(name);
    let next: ModelMessage[] = answer;
    if (words.includes("tools")) {
      const watchTask = taskOf(session, `watch-${slug}`);
      if (!called("watch")) next = [call("watch")];
      else if (!called("check_task")) next = [call("check_task")];
      else if (!called("cancel_task"))
        next = [
          call("cancel_task", { id: watchTask ?? "", reason: "not needed" }),
          ...(words.includes("crash") ? [call("slow")] : []),
        ];
    } else if (words.includes("midcall")) {
      if (!called("watch")) next = [call("watch")];
      else if (!session.messages.some((message) => "deliversTask" in message))
        await holdAt(dir, `model-${slug}-answer`, context.signal);
    } else if (words.includes("fail")) {
      const asked = session.messages.filter(
        (message) => "role" in message && message.role === "user" && !("deliversTask" in message),
      ).length;
      if (!called("rebuild") && !called("quick") && !called("scan"))
        next = words.includes("quick")
          ? [call("quick"), call("settle")]
          : words.includes("late") || words.includes("limit")
            ? [call("scan")]
            : [call("rebuild"), call("scan")];
      else if (asked === 1 && words.includes("limit"))
        next = [{ type: "tool_call", id: `check_task-${slug}-${turn}`, name: "check_task", input: {} }];
      else if (asked === 1 && words.includes("late")) {
        // The task ends while this call runs (the test holds it until then).
        writeFileSync(join(dir, `release-task-${slug}-scan-1`), "");
        await waitForEffect(dir, `scan ${tag} done 1`, context.signal);
        throw new ProviderError(`bad request for ${tag}`, { provider: "script", status: 400 });
      } else if (asked === 1)
        throw new ProviderError(`model overloaded for ${tag}`, { provider: "script", status: 529, retryable: true });
    } else if (words.includes("approval")) {
      if (!called("rebuild")) next = [call("rebuild")];
      else if (!called("ship")) next = [call("ship", { target: "prod" })];
      await holdAt(dir, `model-${slug}-${turn}`, context.signal);
    } else if (words.includes("guard")) {
      if (!called("leak")) next = [call("leak")];
      else if (session.messages.some((message) => "deliversTask" in message))
        await holdAt(dir, `model-${slug}-delivered`, context.signal);
    } else if (words.includes("spend")) {
      if (!called("research")) next = [call("research", { prompt: tag })];
      else if (session.messages.some((message) => "deliversTask" in message))
        await holdAt(dir, `model-${slug}-delivered`, context.signal);
    }
    return scriptedModel([next])(tools, session, context) as ModelMessage[] | Promise<ModelMessage[]>;
  };
}

/** Blocks a tool output holding a secret; records `vault <verdict>` as its effect each time it is asked. */
export function vault(dir: string): Guardrail {
  return {
    name: "vault",
    check: ({ text = "" }) => {
      const blocked = text.includes("SECRET");
      appendFileSync(join(dir, "effects"), `vault ${blocked ? "block" : "allow"}\n`);
      return blocked ? { action: "block", message: "holds a secret" } : { action: "allow" };
    },
  };
}

export function depthTools(dir: string): Tool[] {
  const effect = (line: string): void => appendFileSync(join(dir, "effects"), `${line}\n`);
  const background = (name: string, onRestart: "rerun" | "lost", handler = heldWork(dir, name)): Tool =>
    tool({
      name,
      description: `${name} in the background.`,
      inputSchema: { type: "object", properties: {} },
      background: { onRestart },
      handler,
    });
  const research = subagentTool({
    name: "research",
    description: "Researches in the background.",
    systemPrompt: "Research.",
    maxIterations: 30,
    background: true,
    tools: [
      tool({
        name: "step",
        description: "One step.",
        inputSchema: { type: "object", properties: {} },
        handler: () => "ok",
      }),
    ],
    invokeModel: async (_tools, session) => {
      // The subagent's first user message is the parent's tag.
      const tag = tagOf(session);
      effect(`research ${tag} call`);
      const steps = session.messages.filter((message) => "type" in message && message.type === "tool_call").length;
      if (tag.includes("brief") && steps === 3)
        return [{ role: "assistant", content: "researched", usage: centUsage, model: "cheap" }];
      return [
        {
          type: "tool_call",
          id: `step-${steps + 1}`,
          name: "step",
          input: {},
          usage: centUsage,
          model: "cheap",
          stopReason: "tool_use",
        },
      ];
    },
  });
  return [
    ...taskTools().filter((definition) => definition.name !== "wait_task"),
    background("rebuild", "rerun"),
    background("scan", "lost"),
    background("quick", "lost"),
    background("leak", "lost", () => Promise.resolve("the key is SECRET-42")),
    tool({
      name: "watch",
      description: "Watch until cancelled.",
      inputSchema: { type: "object", properties: {} },
      background: true,
      handler: async (_input, { session, signal }) => {
        effect(`watch ${tagOf(session)} start`);
        await new Promise((_resolve, reject) => {
          signal.addEventListener(
            "abort",
            () => {
              effect(`watch ${tagOf(session)} aborted`);
              reject(signal.reason as Error);
            },
            { once: true },
          );
        });
        return "never";
      },
    }),
    tool({
      name: "slow",
      description: "A slow direct call.",
      inputSchema: { type: "object", properties: {} },
      handler: async (_input, { session, signal }) => {
        await holdAt(dir, `tool-slow-${tagOf(session).replaceAll(" ", "-")}`, signal);
        return "slow done";
      },
    }),
    tool({
      name: "settle",
      description: "Waits until quick is done.",
      inputSchema: { type: "object", properties: {} },
      handler: async (_input, { session, signal }) => {
        await waitForEffect(dir, `quick ${tagOf(session)} done 1`, signal);
        return "settled";
      },
    }),
    tool({
      name: "ship",
      description: "Ships.",
      inputSchema: { type: "object", properties: { target: { type: "string" } }, required: ["target"] },
      requireApproval: true,
      handler: (input) => `shipped to ${String(input.target)}`,
    }),
    research,
  ];
}

async function waitForEffect(dir: string, line: string, signal: AbortSignal): Promise<void> {
  while (!readFileSync(join(dir, "effects"), "utf8").split("\n").includes(line)) {
    signal.throwIfAborted();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function calls(session: Session): string[] {
  return session.messages.flatMap((message) =>
    "type" in message && message.type === "tool_call" ? [message.name] : [],
  );
}

// The task id the running result of call `callId` carries.
function taskOf(session: Session, callId: string): string | undefined {
  for (const message of session.messages)
    if ("type" in message && message.type === "tool_result" && message.id === callId) return message.task?.id;
  return undefined;
}

// The first user message: deliveries and later runs' messages come as user messages too.
