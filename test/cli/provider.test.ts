// Which model a run gets: the flags, then the environment; never the demo unless asked for.
import { describe, expect, it } from "vitest";
import { isCliError } from "../../src/cli/cli-error.ts";
import { noModelMessage, selectModel } from "../../src/cli/provider.ts";

function failure(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (isCliError(error) && error.exitCode === 1) return error.message;
    throw error;
  }
  throw new Error("it did not fail");
}

const pick = (args: Parameters<typeof selectModel>[0], environment: NodeJS.ProcessEnv) => {
  const { provider, model, description, note } = selectModel(args, environment);
  return { provider, model, description, ...(note === undefined ? {} : { note }) };
};

describe("selectModel", () => {
  it("without --provider, takes the environment's: Anthropic first, then OpenAI or a compatible server", () => {
    expect(pick({}, { ANTHROPIC_API_KEY: "k", OPENAI_API_KEY: "o" })).toStrictEqual({
      provider: "anthropic",
      model: "claude-sonnet-4-5",
      description: "anthropic claude-sonnet-4-5",
    });
    expect(pick({}, { ANTHROPIC_API_KEY: "k", ANTHROPIC_MODEL: "claude-x" })).toMatchObject({ model: "claude-x" });
    expect(pick({}, { OPENAI_API_KEY: "o" })).toStrictEqual({
      provider: "openai",
      model: "gpt-4.1-mini",
      description: "openai gpt-4.1-mini",
    });
    expect(pick({ model: "qwen3" }, { OPENAI_BASE_URL: "http://localhost:11434/v1" })).toStrictEqual({
      provider: "openai",
      model: "qwen3",
      description: "openai qwen3 at http://localhost:11434/v1",
    });
  });

  it("without --provider and without any configuration, says what to set, and does not fall back to the demo", () => {
    expect(failure(() => selectModel({}, {}))).toBe(noModelMessage);
    expect(noModelMessage).toMatch(
      /ANTHROPIC_API_KEY.*OPENAI_API_KEY.*OPENAI_BASE_URL=http:\/\/localhost:11434\/v1.*--provider demo/,
    );
    expect(failure(() => selectModel({}, { ANTHROPIC_API_KEY: "" }))).toBe(noModelMessage);
  });

  it("with --provider auto, falls back to the demo with a note saying what to set", () => {
    expect(pick({ provider: "auto" }, {})).toStrictEqual({
      provider: "demo",
      model: "demo",
      description: "demo (offline, scripted)",
      note: "No model configured (set ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENAI_BASE_URL for a real one): running the offline demo model.",
    });
    expect(pick({ provider: "auto" }, { ANTHROPIC_API_KEY: "k" })).toMatchObject({ provider: "anthropic" });
  });

  it("names the variable a chosen provider is missing", () => {
    expect(failure(() => selectModel({ provider: "anthropic" }, { OPENAI_API_KEY: "o" }))).toBe(
      "--provider anthropic needs ANTHROPIC_API_KEY in the environment",
    );
    expect(failure(() => selectModel({ provider: "openai-responses" }, {}))).toMatch(
      /^--provider openai-responses needs OPENAI_API_KEY, or OPENAI_BASE_URL/,
    );
    expect(failure(() => selectModel({ provider: "gemini" }, {}))).toBe(
      "--provider gemini needs GEMINI_API_KEY (or GOOGLE_API_KEY) in the environment",
    );
    expect(failure(() => selectModel({ provider: "bedrock" }, {}))).toMatch(/^--provider bedrock needs --model/);
    expect(pick({ provider: "gemini" }, { GOOGLE_API_KEY: "g" })).toMatchObject({
      provider: "gemini",
      model: "gemini-2.5-flash",
    });
    expect(pick({ provider: "bedrock", model: "us.anthropic.claude" }, {})).toMatchObject({
      provider: "bedrock",
      model: "us.anthropic.claude",
    });
  });
});
