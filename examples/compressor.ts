// A text compressor: a coordinator with two subagents, `shorten` (rewrites a text to half
// its length) and `judge` (is the shortened text too lossy?). Each subagent is a one-shot agent
// loop (maxIterations 1) with no tools. The coordinator loops: shorten, judge, and stops when the
// judge says too_lossy or the last round gained little; otherwise it shortens again.
//   node_modules/.bin/node --conditions=simple-agent-loop-source examples/compressor.ts ["text to compress"]
import { agentLoop, initSession, response, tool, type InvokeModel, type Session } from "simple-agent-loop";
import { isMain, requireModel } from "./run-example.ts";

/** One subagent run, as the coordinator's tool saw it. */
export type SubagentCall = { agent: "shorten" | "judge"; input: Record<string, string>; output: string };

export type CompressorResult = {
  /** Why the coordinator stopped, from its answer's first line (`STOPPED: <reason>`). */
  stoppedBecause: "too_lossy" | "diminishing_returns" | undefined;
  /** The coordinator's chosen text (its answer after the STOPPED line). */
  text: string;
  answer: string;
  calls: SubagentCall[];
  session: Session;
};

/** Below this much shortening (ratio above 0.9) another round is not worth it. */
export const DIMINISHING_RATIO = 0.9;

export const COORDINATOR_PROMPT = [
  "You compress text with two tools, in rounds.",
  "Each round: call `shorten` with the current text, then call `judge` with the ORIGINAL text (the user's) and the shortened text.",
  "Stop when the judge's verdict is too_lossy (then keep the previous, acceptable text; the original if there is none),",
  `or when the round's compression_ratio is above ${DIMINISHING_RATIO} (diminishing returns; keep the new text if acceptable).`,
  "Otherwise start another round with the shortened text.",
  "When you stop, answer with exactly one line `STOPPED: too_lossy` or `STOPPED: diminishing_returns`, then the final text and nothing else.",
].join(" ");

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

export async function compressor(
  invokeModel: InvokeModel,
  text: string,
  options: { signal?: AbortSignal; maxIterations?: number } = {},
): Promise<CompressorResult> {
  const calls: SubagentCall[] = [];

  // Subagent: compresses text.
  const shorten = tool({
    name: "shorten",
    description: "Rewrite a text to about half its length. Returns JSON {compression_ratio, shortened_text}.",
    inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    handler: async (input, { signal }) => {
      const original = String(input.text);
      const shortened = await oneShot(
        invokeModel,
        "shortener",
        "Rewrite the text to half its length. Output ONLY the result.",
        original,
        signal,
      );
      const ratio = original.length === 0 ? 1 : shortened.length / original.length;
      const output = JSON.stringify({ compression_ratio: Math.round(ratio * 1000) / 1000, shortened_text: shortened });
      calls.push({ agent: "shorten", input: { text: original }, output });
      return output;
    },
  });

  // Subagent: judges compression quality.
  const judge = tool({
    name: "judge",
    description: "Judge whether a shortened text keeps the original's meaning. Returns JSON {verdict, reason}.",
    inputSchema: {
      type: "object",
      properties: { original: { type: "string" }, shortened: { type: "string" } },
      required: ["original", "shortened"],
    },
    handler: async (input, { signal }) => {
      const original = String(input.original);
      const shortened = String(input.shortened);
      const output = await oneShot(
        invokeModel,
        "judge",
        'Compare original and shortened text. Return ONLY JSON: {"verdict": "acceptable", "reason": "..."} or {"verdict": "too_lossy", "reason": "..."}',
        `ORIGINAL:\n${original}\n\nSHORTENED:\n${shortened}`,
        signal,
      );
      calls.push({ agent: "judge", input: { original, shortened }, output });
      return output;
    },
  });

  const session = initSession(COORDINATOR_PROMPT, text);
  await agentLoop(invokeModel, [shorten, judge], session, {
    name: "coordinator",
    maxIterations: options.maxIterations ?? 30,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  const answer = response(session)?.content ?? "";
  const match = /^\s*STOPPED:\s*(too_lossy|diminishing_returns)\s*\n?([\s\S]*)$/.exec(answer);
  return {
    stoppedBecause: match?.[1] as CompressorResult["stoppedBecause"],
    text: (match?.[2] ?? answer).trim(),
    answer,
    calls,
    session,
  };
}

const SAMPLE =
  "The agent loop calls the model, runs every tool call the model asks for, appends the results to the " +
  "session in the order the calls were made, and then calls the model again. It keeps going until the " +
  "model answers without asking for any tools, at which point the last assistant message is the answer.";

if (isMain(import.meta.url)) {
  const { invokeModel } = requireModel();
  const result = await compressor(invokeModel, process.argv[2] ?? SAMPLE);
  for (const call of result.calls) console.error(`[${call.agent}] ${call.output}`);
  console.log(`Stopped because: ${result.stoppedBecause ?? "(not stated)"}\n\n${result.text}`);
}
