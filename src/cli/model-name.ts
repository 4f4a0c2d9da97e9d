import { CliError } from "./cli-error.ts";

/**
 * `name` when it has the form of a model id (`claude-sonnet-4-5`, `llama3.2:latest`,
 * `models/gemini-2.5-flash`, a Bedrock ARN): letters, digits and `. _ - : / @ +`, 1 to 200 of
 * them. Anything else (empty, spaces, quotes, control characters) is a usage `CliError` naming
 * `option`, so a typo never reaches the provider as a request it answers with an unclear error.
 */
export function checkModelName(name: string, option: string): string {
  if (/^[\w.:/@+-]{1,200}$/.test(name)) return name;
  const shown = JSON.stringify(name.length > 60 ? `${name.slice(0, 60)}…` : name);
  throw new CliError(
    `${option} needs a model id (letters, digits and . _ - : / @ +, at most 200), got ${shown}`,
    "usage",
  );
}
