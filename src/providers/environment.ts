import { ProviderError } from "../errors.ts";

// What an adapter reads from its options or, failing them, the environment: the API key and the
// base URL. The transport (`http.ts`) never reads the environment.

/** An environment variable where there is a `process` (Node, Bun, Deno); `undefined` elsewhere. */
export function env(name: string): string | undefined {
  const processLike = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
  const value = processLike?.env?.[name];
  return value === "" ? undefined : value;
}

/** The first of `names` set in the environment (`env`), or undefined. */
export function envFirst(names: readonly string[]): string | undefined {
  for (const name of names) {
    const value = env(name);
    if (value !== undefined) return value;
  }
  return undefined;
}

/**
 * The API key: the option, else the first of `names` set in the environment. A model made without
 * one fails at its first call (not at creation), so a key set later in the process is still read.
 */
export function requireApiKey(option: string | undefined, names: readonly string[], provider: string): string {
  const apiKey = option ?? envFirst(names);
  if (apiKey === undefined) throw missingApiKey(provider, names);
  return apiKey;
}

/** The error for a call without an API key, naming where one is read from. */
export function missingApiKey(provider: string, names: readonly string[]): ProviderError {
  const [first, ...others] = names;
  const alternatives = others.map((name) => ` (or ${name})`).join("");
  return new ProviderError(`${provider}: no API key: set ${first}${alternatives} or pass apiKey`, { provider });
}

/** A base URL from the option, the environment or the default, without trailing slashes. */
export function baseUrlOf(option: string | undefined, envName: string, fallback: string): string {
  return (option ?? env(envName) ?? fallback).replace(/\/+$/, "");
}
