import { hasUrlCredentials } from "../../errors.ts";

/**
 * Which variables of the CLI's environment a command started by the `bash` tool receives: all,
 * except those whose name marks a credential (`isCredentialName`) or whose value carries one (a URL
 * with `user:password@`, as `HTTPS_PROXY` or `DATABASE_URL` often do), unless passed on purpose.
 * `pass`: `true` passes every credential, a list passes the ones it names.
 */
export function commandEnvironment(
  environment: NodeJS.ProcessEnv,
  pass: boolean | readonly string[] = false,
): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(environment)) {
    if (value === undefined) continue;
    const credential = isCredentialName(name) || hasUrlCredentials(value);
    if (pass !== true && credential && !(Array.isArray(pass) && pass.includes(name))) continue;
    kept[name] = value;
  }
  return kept;
}

/**
 * Whether a variable's name says it holds a credential. Its parts (split at `_` and other
 * non-alphanumerics, case ignored) include `KEY`, `APIKEY`, `TOKEN`, `SECRET`, `PASSWORD`,
 * `PASSWD`, `PASSPHRASE`, `CREDENTIAL(S)` or `PAT`, or end with `AUTH`; or the name contains
 * `SECRET`, `PASSWORD`, `API_KEY`, `APIKEY`, `ACCESS_KEY`, `PRIVATE_KEY` or `CREDENTIAL`. So
 * `OPENAI_API_KEY`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `GH_TOKEN`, `NPM_TOKEN`,
 * `GOOGLE_APPLICATION_CREDENTIALS`, `DB_PASSWORD` are credentials; `SSH_AUTH_SOCK`,
 * `TOKENIZERS_PARALLELISM`, `PATH` are not.
 */
export function isCredentialName(name: string): boolean {
  const upper = name.toUpperCase();
  if (credentialInfixes.some((infix) => upper.includes(infix))) return true;
  const parts = upper.split(/[^A-Z0-9]+/).filter((part) => part !== "");
  return parts.some((part) => credentialParts.has(part)) || parts.at(-1) === "AUTH";
}

const credentialInfixes = ["SECRET", "PASSWORD", "API_KEY", "APIKEY", "ACCESS_KEY", "PRIVATE_KEY", "CREDENTIAL"];

const credentialParts: ReadonlySet<string> = new Set([
  "KEY",
  "APIKEY",
  "TOKEN",
  "TOKENS",
  "SECRET",
  "PASSWORD",
  "PASSWD",
  "PASSPHRASE",
  "CREDENTIAL",
  "CREDENTIALS",
  "PAT",
]);
