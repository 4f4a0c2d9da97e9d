import type { InvokeModel } from "../model/invoke-model.ts";
import { anthropic } from "../providers/anthropic/anthropic.ts";
import { bedrock } from "../providers/bedrock/bedrock.ts";
import { gemini } from "../providers/google/google.ts";
import { openaiChat } from "../providers/openai/chat.ts";
import { openaiResponses } from "../providers/openai/responses.ts";
import type { ProviderName } from "./args.ts";
import { CliError } from "./cli-error.ts";
import { demoModel } from "./demo-model.ts";

/** The model a run uses. `note`, when set, is a line for stderr (the demo standing in for a real model). */
export type SelectedModel = {
  invokeModel: InvokeModel;
  provider: Exclude<ProviderName, "auto">;
  model: string;
  description: string;
  /** Tokens the model takes in, as far as we can tell without asking it (`--context-window` overrides). */
  contextWindow: number;
  note?: string;
};

/** What to set for a real model; the message of a run without one. */
export const noModelMessage =
  "No model configured. Set ANTHROPIC_API_KEY (optionally ANTHROPIC_MODEL), or OPENAI_API_KEY, or OPENAI_BASE_URL for a local " +
  "OpenAI-compatible server such as Ollama (OPENAI_BASE_URL=http://localhost:11434/v1, optionally OPENAI_MODEL); or pick one with " +
  "--provider (anthropic, openai, openai-responses, gemini, bedrock), or try the offline demo with --provider demo.";

/**
 * The model for `--provider` / `--model` and the environment. Without `--provider`, the
 * environment decides (ANTHROPIC_API_KEY, then OPENAI_API_KEY or OPENAI_BASE_URL), and with
 * neither it throws a `CliError` saying what to set: never a silent fall back to the demo. `auto`
 * is the same, except that it falls back to the demo, with a note. A named provider whose key is
 * missing throws, naming the variable.
 */
export function selectModel(
  args: { provider?: ProviderName; model?: string },
  environment: NodeJS.ProcessEnv,
): SelectedModel {
  const fromEnvironment = environment.ANTHROPIC_API_KEY
    ? "anthropic"
    : environment.OPENAI_API_KEY || environment.OPENAI_BASE_URL
      ? "openai"
      : undefined;
  let provider = args.provider;
  if (provider === undefined) {
    if (fromEnvironment === undefined) throw new CliError(noModelMessage);
    provider = fromEnvironment;
  }
  if (provider === "auto") {
    if (fromEnvironment !== undefined) return selectModel({ ...args, provider: fromEnvironment }, environment);
    return {
      ...selectModel({ ...args, provider: "demo" }, environment),
      note: "No model configured (set ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENAI_BASE_URL for a real one): running the offline demo model.",
    };
  }
  const value = (name: string): string | undefined => environment[name] || undefined;
  switch (provider) {
    case "anthropic": {
      const apiKey = needVariable("ANTHROPIC_API_KEY", value, "--provider anthropic");
      const model = args.model ?? value("ANTHROPIC_MODEL") ?? "claude-sonnet-4-5";
      const baseURL = value("ANTHROPIC_BASE_URL");
      return {
        invokeModel: anthropic({ model, apiKey, ...(baseURL === undefined ? {} : { baseURL }) }),
        provider,
        model,
        description: `anthropic ${model}`,
        contextWindow: 200_000,
      };
    }
    case "openai":
    case "openai-responses": {
      const baseURL = value("OPENAI_BASE_URL");
      const apiKey = value("OPENAI_API_KEY");
      if (apiKey === undefined && baseURL === undefined) {
        throw new CliError(
          `--provider ${provider} needs OPENAI_API_KEY, or OPENAI_BASE_URL for an OpenAI-compatible server (e.g. http://localhost:11434/v1 for Ollama)`,
        );
      }
      const model = args.model ?? value("OPENAI_MODEL") ?? (baseURL === undefined ? "gpt-4.1-mini" : "llama3.2");
      const options = {
        model,
        ...(apiKey === undefined ? {} : { apiKey }),
        ...(baseURL === undefined ? {} : { baseURL }),
      };
      const invokeModel = provider === "openai" ? openaiChat(options) : openaiResponses(options);
      // A local server's window depends on how the model was loaded (Ollama's default is small):
      // a modest guess there, OpenAI's usual 128k otherwise.
      const contextWindow = baseURL === undefined || /^https:\/\/api\.openai\.com/.test(baseURL) ? 128_000 : 32_000;
      return {
        invokeModel,
        provider,
        model,
        description: `${provider} ${model}${baseURL === undefined ? "" : ` at ${baseURL}`}`,
        contextWindow,
      };
    }
    case "gemini": {
      const apiKey =
        value("GEMINI_API_KEY") ??
        needVariable("GOOGLE_API_KEY", value, "--provider gemini", "GEMINI_API_KEY (or GOOGLE_API_KEY)");
      const model = args.model ?? value("GEMINI_MODEL") ?? "gemini-2.5-flash";
      return {
        invokeModel: gemini({ model, apiKey }),
        provider,
        model,
        description: `gemini ${model}`,
        contextWindow: 1_000_000,
      };
    }
    case "bedrock": {
      const model = args.model ?? value("BEDROCK_MODEL");
      if (model === undefined) {
        throw new CliError(
          "--provider bedrock needs --model (or BEDROCK_MODEL): a Bedrock model or inference profile id, with AWS credentials and AWS_REGION in the environment",
        );
      }
      return {
        invokeModel: bedrock({ model }),
        provider,
        model,
        description: `bedrock ${model}`,
        contextWindow: 200_000,
      };
    }
    case "demo":
      return {
        invokeModel: demoModel(),
        provider,
        model: "demo",
        description: "demo (offline, scripted)",
        contextWindow: 200_000,
      };
  }
}

function needVariable(name: string, value: (name: string) => string | undefined, who: string, shown = name): string {
  const found = value(name);
  if (found === undefined) throw new CliError(`${who} needs ${shown} in the environment`);
  return found;
}
