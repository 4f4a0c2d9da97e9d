// Picks a live model from the environment for the examples: ANTHROPIC_API_KEY, then
// OPENAI_API_KEY or OPENAI_BASE_URL (any OpenAI-compatible server, e.g. a local Ollama at
// http://localhost:11434/v1). Returns undefined when none is set.
import type { InvokeModel } from "simple-agent-loop";
import { anthropic } from "simple-agent-loop/anthropic";
import { openaiChat } from "simple-agent-loop/openai";

export type LiveModel = { invokeModel: InvokeModel; description: string };

export function modelFromEnv(): LiveModel | undefined {
  const environment = process.env;
  if (environment.ANTHROPIC_API_KEY) {
    const model = environment.ANTHROPIC_MODEL ?? "claude-sonnet-4-5";
    return { invokeModel: anthropic({ model }), description: `Anthropic ${model}` };
  }
  if (environment.OPENAI_API_KEY || environment.OPENAI_BASE_URL) {
    const model = environment.OPENAI_MODEL ?? (environment.OPENAI_BASE_URL ? "llama3.2" : "gpt-4.1-mini");
    const where = environment.OPENAI_BASE_URL ?? "OpenAI";
    return { invokeModel: openaiChat({ model }), description: `${model} at ${where}` };
  }
  return undefined;
}
