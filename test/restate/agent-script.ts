// The agent the Restate tests run, in worker processes and in process (the baseline): a scripted
// model and tools that record their side effects in a file, and can be held at a point (a model
// call, a tool) until the test releases them, so a SIGKILL lands exactly there.
//
// Control files in `dir`: `hold-<point>` holds the point; the held process writes
// `at-<point>` (its pid inside) and waits for `release-<point>`. Points are `model-<tag>-<turn>`
// and `tool-<call id>`. Effects (`effects`): `model <tag> <turn>` at each model call's start,
// `tool <call id>` when a tool's work is done (after any hold).
import { appendFileSync, existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  tool,
  type ApprovalClassifier,
  type Guardrails,
  type InvokeModel,
  type ModelMessage,
  type Session,
  type Tool,
} from "simple-agent-loop";
import { scriptedModel } from "simple-agent-loop/testing";

/**
 * The script, by model turn since the last user message; `tag` (that message) prefixes every call
 * id, so sessions and runs never share ids. Turn 0 calls two tools in parallel, turn 1 a slower one, turn 2 a
 * tool that needs approval, turn 3 answers. A tag with "timeout": a tool that outlives its timeout.
 */
export function script(tag: string, withApproval: boolean): ModelMessage[][] {
  if (tag.includes("timeout")) {
    return [
      [
        { type: "tool_call", id: `${tag}-t1`, name: "sleepy", input: {} },
        { type: "tool_call", id: `${tag}-t2`, name: "lookup", input: { key: "delta" } },
      ],
      [{ role: "assistant", content: `Done with ${tag}.` }],
    ];
  }
  // A tag with "throws": the second lookup's id ends in "-throws" (scriptClassifier throws on it).
  const second = tag.includes("throws") ? `${tag}-a2-throws` : `${tag}-a2`;
  const turns: ModelMessage[][] = [
    [
      { type: "thinking", content: "Two lookups first." },
      { type: "tool_call", id: `${tag}-a1`, name: "lookup", input: { key: "alpha" } },
      { type: "tool_call", id: second, name: "lookup", input: { key: "beta" } },
    ],
    [
      {
        type: "tool_call",
        id: `${tag}-b1`,
        name: "lookup",
        input: { key: "gamma" },
        stopReason: "tool_use",
        usage: { inputTokens: 10, outputTokens: 3 },
      },
    ],
  ];
  if (withApproval) turns.push([{ type: "tool_call", id: `${tag}-c1`, name: "deploy", input: { target: "prod" } }]);
  turns.push([{ role: "assistant", content: `Done with ${tag}.`, stopReason: "end_turn" }]);
  return turns;
}

/** The model: the turn is read from the session (how many model turns it has), so any process can answer any turn. */
export function scriptModel(dir: string): InvokeModel {
  return async (tools, session, context) => {
    const tag = tagOf(session);
    const turn = modelTurns(session);
    appendFileSync(join(dir, "effects"), `model ${tag} ${turn}\n`);
    await holdAt(dir, `model-${tag}-${turn}`, context.signal);
    const turns = script(tag, tag.includes("approval"));
    const model = scriptedModel([turns[turn] ?? [{ role: "assistant", content: "(no more turns)" }]]);
    return model(tools, session, context) as ModelMessage[] | Promise<ModelMessage[]>;
  };
}

/** `lookup` (side effect, then the key reversed), `deploy` (needs approval), `sleepy` (times out after 100 ms). */
export function scriptTools(dir: string): Tool[] {
  const effect = async (id: string, signal: AbortSignal): Promise<void> => {
    await holdAt(dir, `tool-${id}`, signal);
    appendFileSync(join(dir, "effects"), `tool ${id}\n`);
  };
  return [
    tool({
      name: "lookup",
      description: "Look a key up.",
      inputSchema: { type: "object", properties: { key: { type: "string" } }, required: ["key"] },
      handler: async (input, { id, signal }) => {
        const key = String(input.key);
        await effect(id, signal);
        return { key, value: [...key].reverse().join("") };
      },
    }),
    tool({
      name: "sleepy",
      description: "Sleeps past its timeout.",
      inputSchema: { type: "object", properties: {} },
      timeout: 100,
      handler: async (_input, { id }) => {
        // Ignores its signal: the timeout must still end the call.
        await new Promise((resolve) => setTimeout(resolve, 2_000));
        appendFileSync(join(dir, "effects"), `tool ${id}\n`);
        return "woke up";
      },
    }),
    tool({
      name: "deploy",
      description: "Deploy.",
      inputSchema: { type: "object", properties: { target: { type: "string" } }, required: ["target"] },
      requireApproval: true,
      handler: async (input, { id, signal }) => {
        await effect(id, signal);
        return `deployed to ${String(input.target)}`;
      },
    }),
  ];
}

/**
 * A classifier that allows every call, recording `classifier <call id>` as its effect each time it
 * is asked; it throws (`judge down for <call id>`) on a call whose id ends in `-throws`.
 */
export function scriptClassifier(dir: string): ApprovalClassifier {
  return {
    name: "script-judge",
    classify: ({ call }) => {
      appendFileSync(join(dir, "effects"), `classifier ${call.id}\n`);
      if (call.id.endsWith("-throws")) throw new Error(`judge down for ${call.id}`);
      return { decision: "allow", reason: `${call.name} is harmless`, usage: { inputTokens: 7, outputTokens: 2 } };
    },
  };
}

/**
 * The script agent's guardrails: `screen` checks each new user message (blocks one that says
 * "forbidden"), `review` each final answer; each records `guardrail <name> <text>` as its effect.
 */
export function scriptGuardrails(dir: string): Guardrails {
  const asked = (name: string, text: string | undefined): void =>
    appendFileSync(join(dir, "effects"), `guardrail ${name} ${text ?? ""}\n`);
  return {
    input: [
      {
        name: "screen",
        check: ({ text }) => {
          asked("screen", text);
          return text?.includes("forbidden") === true
            ? { action: "block", message: "not allowed here" }
            : { action: "allow" };
        },
      },
    ],
    output: [
      {
        name: "review",
        check: ({ text }) => {
          asked("review", text);
          return { action: "allow" };
        },
      },
    ],
  };
}

/** Counts of each effect line. */
export function effectCounts(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const line of text.split("\n")) if (line !== "") counts.set(line, (counts.get(line) ?? 0) + 1);
  return counts;
}

function tagOf(session: Session): string {
  const last = session.messages.findLast((message) => "role" in message && message.role === "user");
  return last !== undefined && "content" in last && typeof last.content === "string" ? last.content : "untagged";
}

function modelTurns(session: Session): number {
  let turns = 0;
  let previousWasModel = false;
  const lastUser = session.messages.findLastIndex((message) => "role" in message && message.role === "user");
  for (const message of session.messages.slice(lastUser + 1)) {
    const isModel = "role" in message ? message.role === "assistant" : message.type !== "tool_result";
    if (isModel && !previousWasModel) turns++;
    previousWasModel = isModel;
  }
  return turns;
}

/** Waits while `hold-<point>` is set and `release-<point>` is not, after saying (`at-<point>`) which process waits. */
export async function holdAt(dir: string, point: string, signal: AbortSignal): Promise<void> {
  if (!existsSync(join(dir, `hold-${point}`))) return;
  writeFileSync(join(dir, `at-${point}`), String(process.pid));
  while (!existsSync(join(dir, `release-${point}`))) {
    signal.throwIfAborted();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
