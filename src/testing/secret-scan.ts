/**
 * The usual shapes of provider keys and tokens. A cassette refuses to write a value that matches
 * one: a leaked key in a committed recording is worse than a failed test.
 */
const secretShapes: { kind: string; pattern: RegExp }[] = [
  { kind: "an Anthropic API key", pattern: /\bsk-ant-[A-Za-z0-9_-]{16,}/ },
  { kind: "an OpenAI-style API key", pattern: /\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}/ },
  { kind: "a Google API key", pattern: /\bAIza[0-9A-Za-z_-]{30,}/ },
  { kind: "an AWS access key id", pattern: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/ },
  { kind: "a GitHub token", pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})/ },
  { kind: "a Slack token", pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,}/ },
  { kind: "a bearer token", pattern: /\bBearer\s+[A-Za-z0-9._~+/-]{16,}=*/i },
];

/** The first string in `value` shaped like a secret: where (a path under `where`) and what kind. */
export function findSecret(value: unknown, where: string): { where: string; kind: string } | undefined {
  if (typeof value === "string") {
    for (const shape of secretShapes) if (shape.pattern.test(value)) return { where, kind: shape.kind };
    return undefined;
  }
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      const found = findSecret(value[index], `${where}[${index}]`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (typeof value === "object" && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      const keyFound = findSecret(key, `${where} (a key)`);
      if (keyFound !== undefined) return keyFound;
      const found = findSecret(item, `${where}.${key}`);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}
