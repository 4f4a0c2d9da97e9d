import { AgentError, describeValue } from "../errors.ts";
import { checkNumber } from "../numeric-options.ts";
import type { JsonObject } from "../session.ts";

/**
 * How to call the model, for every call of a run (`settings` option) or for one call (returned by
 * `beforeModelCall`, merged over the run's). Every adapter maps each field to its provider's own
 * and throws an `AgentError` before sending anything when its provider cannot take one; a field
 * left out keeps the adapter's own option.
 */
export type ModelSettings = {
  /** The model to call instead of the adapter's `model`. */
  model?: string;
  /** The most tokens the answer may use, reasoning included where the provider counts it so. */
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  stopSequences?: string[];
  /**
   * `auto`: the model decides; `none`: no tool call; `required`: at least one call of any tool;
   * `{ name }`: a call of that tool.
   */
  toolChoice?: "auto" | "none" | "required" | { name: string };
  /** Reasoning as a level (OpenAI, Gemini 3) or a budget of tokens (Anthropic, Bedrock-Claude, Gemini 2.5). */
  reasoning?: { effort?: "minimal" | "low" | "medium" | "high"; budgetTokens?: number };
  /**
   * Prompt caching. `breakpoints: "auto"` (the default) marks the system prompt and tools and the
   * last message where the provider caches by marks (Anthropic, Bedrock-Claude); `"off"` marks
   * nothing. `key` routes requests to a cache where the provider does so (OpenAI's
   * `prompt_cache_key`; default: the session's id when the session is bound to a store); providers
   * that cache by prefix alone ignore it. `retention: "long"`: a one-hour cache (Anthropic, Bedrock)
   * or 24 hours (OpenAI); `"short"` is each provider's default.
   */
  cache?: { breakpoints?: "auto" | "off"; key?: string; retention?: "short" | "long" };
  /** Deep-merged into the request body last: anything the fields above do not model. */
  providerOptions?: JsonObject;
};

/** `over` merged over `base`: each field of `over` replaces the base's, `cache` and `reasoning` field by field. */
export function mergeSettings(base: ModelSettings | undefined, over: ModelSettings | undefined): ModelSettings {
  if (over === undefined) return base ?? {};
  if (base === undefined) return over;
  const merged: ModelSettings = { ...base, ...over };
  if (base.cache !== undefined && over.cache !== undefined) merged.cache = { ...base.cache, ...over.cache };
  if (base.reasoning !== undefined && over.reasoning !== undefined)
    merged.reasoning = { ...base.reasoning, ...over.reasoning };
  return merged;
}

/** Throws an `AgentError` naming a setting that is not a value it can mean (checked where a run starts and per call). */
export function checkModelSettings(settings: ModelSettings, where = "settings"): void {
  if (typeof settings !== "object" || settings === null || Array.isArray(settings))
    throw new AgentError(`${where} must be an object; got ${describeValue(settings)}`);
  checkNumber(`${where}.maxTokens`, settings.maxTokens, { min: 1, integer: true });
  checkNumber(`${where}.temperature`, settings.temperature, { min: 0 });
  checkNumber(`${where}.topP`, settings.topP, { min: 0, max: 1 });
  checkNumber(`${where}.reasoning.budgetTokens`, settings.reasoning?.budgetTokens, { min: 0, integer: true });
  const effort = settings.reasoning?.effort;
  if (effort !== undefined && !efforts.includes(effort))
    throw new AgentError(
      `${where}.reasoning.effort must be one of ${efforts.join(", ")}; got ${describeValue(effort)}`,
    );
  const choice = settings.toolChoice;
  if (
    choice !== undefined &&
    choice !== "auto" &&
    choice !== "none" &&
    choice !== "required" &&
    (typeof choice !== "object" || choice === null || typeof choice.name !== "string")
  )
    throw new AgentError(
      `${where}.toolChoice must be "auto", "none", "required" or { name }; got ${describeValue(choice)}`,
    );
  const stops = settings.stopSequences;
  if (stops !== undefined && (!Array.isArray(stops) || stops.some((stop) => typeof stop !== "string")))
    throw new AgentError(`${where}.stopSequences must be an array of strings; got ${describeValue(stops)}`);
  const cache = settings.cache;
  if (cache?.breakpoints !== undefined && cache.breakpoints !== "auto" && cache.breakpoints !== "off")
    throw new AgentError(`${where}.cache.breakpoints must be "auto" or "off"; got ${describeValue(cache.breakpoints)}`);
  if (cache?.retention !== undefined && cache.retention !== "short" && cache.retention !== "long")
    throw new AgentError(`${where}.cache.retention must be "short" or "long"; got ${describeValue(cache.retention)}`);
}

const efforts: readonly string[] = ["minimal", "low", "medium", "high"];
