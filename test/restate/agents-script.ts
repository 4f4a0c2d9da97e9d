// The agents the Restate handoff tests run, in worker processes and in process (the baseline):
// triage hands a request to billing (full history, `onHandoff`) or to refunds (a `summary`
// history), by the tag of the first user message (with "approval" in it, beside a `deploy` call
// that needs approval); each specialist looks a key up, then answers.
// Effects go to the same control file as agent-script.ts's, and points hold the same way:
//   `model <agent> <tag> <turn> system=<prompt> tools=<names>` at each model call's start (point
//   `model-<agent>-<tag>-<turn>`), `summary <tag>` at the summarizer's call, `handoff <tag> <from>
//   <to>` when `onHandoff` runs, `tool <call id>` when the lookup's work is done (point `tool-<call id>`).
import { appendFileSync, existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  defineAgent,
  handoff,
  type AgentDefinition,
  type AgentLoopOptions,
  type InvokeModel,
  type Message,
  type ModelMessage,
} from "simple-agent-loop";
import { scriptTools } from "./agent-script.ts";

export const triagePrompt = "You route requests.";

/**
 * The triage agent, its specialists reachable by handoff; effects and holds in `dir`.
 * `specialistOptions`: run options of both specialists (an approval policy, say).
 */
export function scriptTriage(dir: string, specialistOptions?: AgentLoopOptions): AgentDefinition {
  const lookup = scriptTools(dir).filter((entry) => entry.name === "lookup");
  const deploy = scriptTools(dir).filter((entry) => entry.name === "deploy");
  const onHandoff = ({ session, from, to }: { session: { messages: Message[] }; from: string; to: string }): void =>
    effect(dir, `handoff ${tagOf(session.messages)} ${from} ${to}`);
  const specialist = (name: string, systemPrompt: string): AgentDefinition =>
    defineAgent({
      name,
      systemPrompt,
      invokeModel: specialistModel(dir, name),
      tools: lookup,
      ...(specialistOptions === undefined ? {} : { options: specialistOptions }),
    });
  const billing = specialist("billing", "You handle billing.");
  const refunds = specialist("refunds", "You handle refunds.");
  return defineAgent({
    name: "triage",
    systemPrompt: triagePrompt,
    invokeModel: triageModel(dir),
    tools: deploy,
    handoffs: [
      handoff(billing, { onHandoff }),
      handoff(refunds, { history: "summary", summarizer: summarizerModel(dir), onHandoff }),
    ],
  });
}

function triageModel(dir: string): InvokeModel {
  return async (tools, session, context) => {
    const tag = tagOf(session.messages);
    const turn = agentTurns(session.messages, "triage");
    await called(dir, "triage", tag, turn, session.messages, tools, context.signal);
    const target = tag.includes("refund") ? "refunds" : "billing";
    const handoff: ModelMessage = { type: "tool_call", id: `${tag}-h1`, name: `transfer_to_${target}`, input: {} };
    // A tag with "approval": the handoff beside a call that waits for a human's decision.
    const beside: ModelMessage[] = tag.includes("approval")
      ? [{ type: "tool_call", id: `${tag}-d1`, name: "deploy", input: { target: "prod" } }]
      : [];
    return turn === 0 ? [...beside, handoff] : [{ role: "assistant", content: "(triage has no more turns)" }];
  };
}

function specialistModel(dir: string, name: string): InvokeModel {
  return async (tools, session, context) => {
    const tag = tagOf(session.messages);
    const turn = agentTurns(session.messages, name);
    await called(dir, name, tag, turn, session.messages, tools, context.signal);
    const turns: ModelMessage[][] = [
      [
        {
          type: "tool_call",
          id: `${tag}-s${turn + 1}`,
          name: "lookup",
          input: { key: "invoice" },
          usage: { inputTokens: 20, outputTokens: 5 },
        },
      ],
    ];
    // A later user message (a resumed session) gets one more lookup's worth of turns.
    const answer = `${name} done with ${tag} (${session.messages.filter(isUser).length} user messages).`;
    return turn % 2 === 0
      ? turns[0]!
      : [{ role: "assistant", content: answer, usage: { inputTokens: 30, outputTokens: 8 } }];
  };
}

// Writes the summary of a `summary` handoff: it names the tag, so the target still knows the case.
function summarizerModel(dir: string): InvokeModel {
  return (_tools, session) => {
    const tag = tagOf(session.messages);
    effect(dir, `summary ${tag}`);
    return [
      { role: "assistant", content: `The user asked about ${tag}.`, usage: { inputTokens: 50, outputTokens: 7 } },
    ];
  };
}

async function called(
  dir: string,
  agent: string,
  tag: string,
  turn: number,
  messages: readonly Message[],
  tools: readonly { name: string }[],
  signal: AbortSignal,
): Promise<void> {
  const first = messages[0];
  const system = first !== undefined && "role" in first && first.role === "system" ? String(first.content) : "";
  effect(dir, `model ${agent} ${tag} ${turn} system=${system} tools=${tools.map((entry) => entry.name).join(",")}`);
  const point = `model-${agent}-${tag}-${turn}`;
  if (!existsSync(join(dir, `hold-${point}`))) return;
  writeFileSync(join(dir, `at-${point}`), String(process.pid));
  while (!existsSync(join(dir, `release-${point}`))) {
    signal.throwIfAborted();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function effect(dir: string, line: string): void {
  appendFileSync(join(dir, "effects"), `${line}\n`);
}

function isUser(message: Message): boolean {
  return "role" in message && message.role === "user";
}

// The tag is the first word that starts with "handoff-" in a user message (a summary names it too).
function tagOf(messages: readonly Message[]): string {
  for (const message of messages) {
    if (!isUser(message) || !("content" in message) || typeof message.content !== "string") continue;
    const found = /handoff-[a-z0-9-]+/.exec(message.content);
    if (found !== null) return found[0];
  }
  return "untagged";
}

// The agent's model turns in the messages (a run of its model messages is one turn).
function agentTurns(messages: readonly Message[], agent: string): number {
  let turns = 0;
  let previousWasOwn = false;
  for (const message of messages) {
    const own =
      message.agent === agent && ("role" in message ? message.role === "assistant" : message.type !== "tool_result");
    if (own && !previousWasOwn) turns++;
    previousWasOwn = own;
  }
  return turns;
}
