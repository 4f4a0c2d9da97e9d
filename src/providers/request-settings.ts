import { AgentError } from "../errors.ts";
import type { ModelContext } from "../model/invoke-model.ts";
import type { ModelSettings } from "../model/model-settings.ts";
import type { JsonObject } from "../session.ts";

/**
 * The settings of one call as an adapter applies them: the loop's (the run's `settings` with a
 * `beforeModelCall` hook's over them), with the cache key defaulting to the session's id where
 * `keyBySession` (the provider routes its cache by key).
 */
export function callSettings(context: ModelContext | undefined, keyBySession = false): ModelSettings | undefined {
  const settings = context?.settings;
  const sessionId = context?.sessionId;
  if (!keyBySession || sessionId === undefined || settings?.cache?.key !== undefined) return settings;
  if (settings?.cache?.breakpoints === "off") return settings;
  return { ...settings, cache: { ...settings?.cache, key: sessionId } };
}

/**
 * The error an adapter throws, before sending anything, for a setting its provider cannot take:
 * silently dropping it would make the run do something other than what was asked.
 */
export function unsupportedSetting(provider: string, setting: string, reason: string): AgentError {
  return new AgentError(`${provider}: settings.${setting} cannot be sent: ${reason}`);
}

/**
 * `providerOptions` merged into a request body, in place: objects field by field, all the way
 * down; anything else (arrays too) replaces what was there. Applied last, so it can override any
 * field an adapter set. Keys go in as own properties (`__proto__` is a key like any other).
 */
export function mergeProviderOptions<T extends object>(request: T, providerOptions: JsonObject | undefined): T {
  if (providerOptions !== undefined) mergeInto(request as Record<string, unknown>, providerOptions);
  return request;
}

function mergeInto(target: Record<string, unknown>, source: JsonObject): void {
  for (const [key, value] of Object.entries(source)) {
    const existing = Object.hasOwn(target, key) ? target[key] : undefined;
    if (isObject(value) && isObject(existing)) {
      // A copy: the request may share objects with the adapter's options.
      const copy = { ...existing };
      mergeInto(copy, value);
      define(target, key, copy);
    } else define(target, key, structuredClone(value));
  }
}

function define(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The `{ name }` of a `toolChoice` that names a tool, which must be one of the request's tools. */
export function chosenTool(
  provider: string,
  choice: ModelSettings["toolChoice"],
  toolNames: readonly string[],
): string | undefined {
  if (choice === undefined || typeof choice === "string") return undefined;
  if (!toolNames.includes(choice.name))
    throw unsupportedSetting(provider, "toolChoice", `no tool named "${choice.name}" is offered in this call`);
  return choice.name;
}

/** The answer's length for a Claude request (Anthropic's default of this adapter) when nothing gives one. */
export const defaultMaxTokens = 8192;

/**
 * The thinking budget of a Claude request (Anthropic's API and Bedrock's), from the settings or the
 * adapter's `thinking` option; `undefined` for none (a budget of 0 turns it off). Claude takes a
 * budget, not a level: an `effort` alone is refused.
 */
export function thinkingBudget(
  provider: string,
  thinking: false | { budgetTokens: number } | undefined,
  settings: ModelSettings,
): number | undefined {
  const reasoning = settings.reasoning;
  if (reasoning?.effort !== undefined && reasoning.budgetTokens === undefined)
    throw unsupportedSetting(
      provider,
      "reasoning.effort",
      "Claude takes a budget of thinking tokens: give reasoning.budgetTokens",
    );
  const budget =
    reasoning?.budgetTokens ?? (thinking === undefined || thinking === false ? undefined : thinking.budgetTokens);
  return budget === undefined || budget === 0 ? undefined : budget;
}

/**
 * `max_tokens` for a thinking budget, which must be below it: the one given when it fits, else
 * (none given) the budget plus the default answer length; a given one that does not fit is refused.
 */
export function maxTokensAbove(provider: string, budget: number, maxTokens: number | undefined): number {
  if (maxTokens === undefined) return Math.max(defaultMaxTokens, budget + defaultMaxTokens);
  if (budget >= maxTokens)
    throw unsupportedSetting(
      provider,
      "reasoning.budgetTokens",
      `the thinking budget (${budget}) must be below maxTokens (${maxTokens})`,
    );
  return maxTokens;
}

/**
 * Claude with extended thinking takes no sampling changes (temperature only 1, top_p from 0.95):
 * the API refuses the request, so the adapter says so first (Anthropic, Bedrock-Claude).
 */
export function checkThinkingSampling(
  provider: string,
  budget: number | undefined,
  temperature: number | undefined,
  topP: number | undefined,
): void {
  if (budget === undefined) return;
  if (temperature !== undefined && temperature !== 1)
    throw unsupportedSetting(
      provider,
      "temperature",
      `Claude takes only temperature 1 while it thinks (got ${temperature})`,
    );
  if (topP !== undefined && topP < 0.95)
    throw unsupportedSetting(provider, "topP", `Claude takes topP from 0.95 to 1 while it thinks (got ${topP})`);
}
