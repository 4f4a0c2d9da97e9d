// Transform-rule derivation: given a source and a target text, a coordinator derives
// general RULES plus SPECIFIC INFO that together turn the source into the target. Four one-shot
// subagents without tools: an editor applies rules + info to the source, and three judges score
// the result (similarity to the target, generality of the rules, flatness of the specific info).
// The coordinator calls `edit`, then all three judges in one response (so they run in parallel),
// refines, and repeats until every judge scores above 90.
//   node_modules/.bin/node --conditions=simple-agent-loop-source examples/derive-transform.ts
import { agentLoop, initSession, response, tool, type InvokeModel, type Session } from "simple-agent-loop";
import { isMain, requireModel } from "./run-example.ts";

export type JudgeName = "judge_similarity" | "judge_generality" | "judge_specific_info";

/** One subagent run, with when it ran (ms, performance.now()). */
export type SubagentCall = {
  agent: "edit" | JudgeName;
  input: Record<string, string>;
  output: string;
  startedAt: number;
  endedAt: number;
};

export type DeriveResult = { answer: string; calls: SubagentCall[]; session: Session };

export const PASSING_SCORE = 90;

export const COORDINATOR_PROMPT = [
  "You derive transformation rules. The user gives a SOURCE text and a TARGET text.",
  "Find general RULES (abstract, reusable, no content of these particular texts) and SPECIFIC INFO (a flat list of facts)",
  "that together turn the source into the target.",
  "Each round: call `edit` with the source text, your rules and your specific info; then, in ONE response, call all three judges:",
  "`judge_similarity` (the editor's output against the target), `judge_generality` (your rules) and `judge_specific_info` (your specific info).",
  `If every judge scores above ${PASSING_SCORE}, stop and answer with "RULES:" and the rules, then "SPECIFIC INFO:" and the info.`,
  "Otherwise refine the rules and info from the judges' remarks and start another round.",
].join(" ");

const SCORE_FORMAT = 'Return ONLY JSON: {"score": 0-100, "differences": "..."}';

async function oneShot(
  invokeModel: InvokeModel,
  name: string,
  systemPrompt: string,
  userPrompt: string,
  signal: AbortSignal,
): Promise<string> {
  const session = initSession(systemPrompt, userPrompt);
  await agentLoop(invokeModel, [], session, { name, maxIterations: 1, signal });
  return response(session)?.content ?? "";
}

/** The score in a judge's JSON answer, or undefined if it gave none. */
export function scoreOf(output: string): number | undefined {
  const json = /\{[\s\S]*\}/.exec(output)?.[0];
  if (json === undefined) return undefined;
  try {
    const score = (JSON.parse(json) as { score?: unknown }).score;
    return typeof score === "number" ? score : undefined;
  } catch {
    return undefined;
  }
}

export async function deriveTransform(
  invokeModel: InvokeModel,
  source: string,
  target: string,
  options: { signal?: AbortSignal; maxIterations?: number } = {},
): Promise<DeriveResult> {
  const calls: SubagentCall[] = [];

  const subagent = (
    name: SubagentCall["agent"],
    description: string,
    fields: string[],
    systemPrompt: string,
    userPrompt: (input: Record<string, string>) => string,
  ) =>
    tool({
      name,
      description,
      inputSchema: {
        type: "object",
        properties: Object.fromEntries(fields.map((field) => [field, { type: "string" }])),
        required: fields,
      },
      handler: async (raw, { signal }) => {
        const input = Object.fromEntries(fields.map((field) => [field, String(raw[field])]));
        const startedAt = performance.now();
        const output = await oneShot(invokeModel, name, systemPrompt, userPrompt(input), signal);
        calls.push({ agent: name, input, output, startedAt, endedAt: performance.now() });
        return output;
      },
    });

  const tools = [
    // Subagent: applies rules + specific info to the source text.
    subagent(
      "edit",
      "Apply the rules and the specific info to a text. Returns the edited text.",
      ["text", "rules", "specific_info"],
      "Apply the rules to the text using the specific info. Output ONLY the result.",
      (input) => `SOURCE TEXT:\n${input.text}\n\nRULES:\n${input.rules}\n\nSPECIFIC INFO:\n${input.specific_info}`,
    ),
    // Subagent: scores how close the output is to the target.
    subagent(
      "judge_similarity",
      "Score 0-100 how close the editor's output is to the target. Returns JSON {score, differences}.",
      ["editor_output", "target"],
      `Compare texts. ${SCORE_FORMAT}`,
      (input) => `EDITOR OUTPUT:\n${input.editor_output}\n\nTARGET:\n${input.target}`,
    ),
    // Subagent: checks the rules are abstract (no specific content leaked in).
    subagent(
      "judge_generality",
      "Score 0-100 how general the rules are (no content of particular texts). Returns JSON {score, differences}.",
      ["rules"],
      `Judge whether these transformation rules are general: they must not contain names, numbers or other content of a particular text. ${SCORE_FORMAT}`,
      (input) => `RULES:\n${input.rules}`,
    ),
    // Subagent: checks specific_info is a flat fact list.
    subagent(
      "judge_specific_info",
      "Score 0-100 how well the specific info is a flat list of facts (no instructions). Returns JSON {score, differences}.",
      ["specific_info"],
      `Judge whether this specific info is a flat list of facts, with no rules or instructions in it. ${SCORE_FORMAT}`,
      (input) => `SPECIFIC INFO:\n${input.specific_info}`,
    ),
  ];

  const session = initSession(COORDINATOR_PROMPT, `SOURCE:\n${source}\n\nTARGET:\n${target}`);
  await agentLoop(invokeModel, tools, session, {
    name: "coordinator",
    maxIterations: options.maxIterations ?? 30,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  return { answer: response(session)?.content ?? "", calls, session };
}

const SOURCE = "Meeting notes, 3 March. Present: Ana, Ben. Ana will send the budget by Friday. Ben books the venue.";
const TARGET = "ACTION ITEMS (2024-03-03)\n- Ana: send the budget (due Friday)\n- Ben: book the venue";

if (isMain(import.meta.url)) {
  const { invokeModel } = requireModel();
  const result = await deriveTransform(invokeModel, SOURCE, TARGET);
  for (const call of result.calls) console.error(`[${call.agent}] ${call.output}`);
  console.log(result.answer);
}
