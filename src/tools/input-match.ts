import type { JsonValue } from "../session.ts";
import { sameJson } from "./same-json.ts";
import { commandsRun } from "./shell-commands.ts";

/**
 * One input matcher, compiled: whether a property's value matches, for a rule of this action. An
 * `allow` is held to more than a `deny` or `ask`: a value it cannot read as safe never matches it,
 * while a `deny` or `ask` matches whatever part of the value does.
 */
export type CompiledMatch = (value: JsonValue | undefined, strict: boolean) => boolean;

/** The longest string a matcher reads (characters). A longer one matches no `allow`, and every `deny` or `ask` that could apply. */
export const maxMatchedChars = 100_000;

/** The longest string a `regex` matcher reads: a pattern's run time grows with it. */
export const maxRegexChars = 10_000;

/** Compiles a matcher already checked by `checkApprovalPolicy`. */
export function compileMatch(
  matcher: { glob: string | string[] } | { prefix: string | string[] } | { equals: JsonValue } | { regex: string },
): CompiledMatch {
  if ("equals" in matcher) {
    const expected = matcher.equals;
    return (value) => value !== undefined && sameJson(value, expected);
  }
  if ("regex" in matcher) {
    const pattern = new RegExp(matcher.regex);
    return strings((text, strict) => (text.length > maxRegexChars ? !strict : pattern.test(text)));
  }
  if ("glob" in matcher) {
    const patterns = list(matcher.glob).map((glob) => globRegex(glob, ""));
    // A deny or ask also matches the path in other letter case: the same file on a disk that ignores case.
    const anyCase = list(matcher.glob).map((glob) => globRegex(glob, "i"));
    return strings((text, strict) => {
      if (text.length > maxMatchedChars) return !strict;
      const path = lastPath.read(text);
      return (strict ? patterns : anyCase).some((pattern) => pattern.test(path));
    });
  }
  const prefixes = list(matcher.prefix).map(normalizeCommand);
  const anyCase = prefixes.map((prefix) => prefix.toLowerCase());
  return strings((text, strict) => {
    if (text.length > maxMatchedChars) return !strict;
    if (strict) return !chains.test(text) && prefixes.some((prefix) => startsWithWord(lastCommand.read(text), prefix));
    return lastRuns.read(text).some((run) => anyCase.some((prefix) => startsWithLooseWord(run, prefix)));
  });
}

// The rules of a policy read the same value one after another: each reading is made once.
function lastReading<T>(read: (text: string) => T): { read: (text: string) => T } {
  let text: string | undefined;
  let value: T | undefined;
  return {
    read: (next) => {
      if (next !== text) {
        value = read(next);
        text = next;
      }
      return value!;
    },
  };
}

const lastPath = lastReading(normalizePath);
const lastCommand = lastReading(normalizeCommand);
// What each part of a command may run (`commandsRun`), in lower case: what a deny or ask reads.
const lastRuns = lastReading((command) =>
  commandParts(command).flatMap((part) => commandsRun(part).map((run) => normalizeCommand(run).toLowerCase())),
);

// A string, or an array of strings: a strict (allow) match needs every element to be one that
// matches. A loose one (deny, ask) reads whatever the value holds: any string within it, at any
// depth, and numbers and booleans as their JSON text; one too big to read through matches.
function strings(test: (text: string, strict: boolean) => boolean): CompiledMatch {
  return (value, strict) => {
    if (typeof value === "string") return test(value, strict);
    if (!strict) return value !== undefined && anyText(value, (text) => test(text, false));
    if (!Array.isArray(value) || value.length === 0) return false;
    return value.every((entry) => typeof entry === "string" && test(entry, strict));
  };
}

/** How deep, and how many values, a loose match reads into a property's value. */
const maxReadDepth = 64;
const maxReadValues = 10_000;

function anyText(value: JsonValue, test: (text: string) => boolean): boolean {
  let budget = maxReadValues;
  const visit = (item: JsonValue, depth: number): boolean => {
    if (--budget < 0 || depth > maxReadDepth) return true;
    if (typeof item === "string") return test(item);
    if (typeof item === "number" || typeof item === "boolean") return test(String(item));
    if (item === null) return false;
    const entries = Array.isArray(item) ? item : Object.values(item);
    return entries.some((entry) => visit(entry, depth + 1));
  };
  return visit(value, 0);
}

function list(value: string | string[]): string[] {
  return Array.isArray(value) ? value : [value];
}

/** What is wrong with a glob pattern, or undefined. */
export function globProblem(pattern: string): string | undefined {
  if (pattern.length > 1000) return "is longer than 1000 characters";
  return undefined;
}

/**
 * A path as a rule reads it: `\` read as `/`, `.` segments and doubled slashes dropped, `..`
 * taking the segment before it away (`src/../.env` is `.env`). A leading `/` stays; a `..` with
 * nothing before it stays too (the path leaves the directory it is read from).
 */
export function normalizePath(path: string): string {
  const absolute = path.startsWith("/") || path.startsWith("\\");
  const segments: string[] = [];
  for (const segment of path.split(/[\\/]+/)) {
    if (segment === "" || segment === ".") continue;
    if (segment === ".." && segments.length > 0 && segments[segments.length - 1] !== "..") segments.pop();
    else if (segment !== ".." || !absolute) segments.push(segment);
  }
  const joined = segments.join("/");
  return absolute ? `/${joined}` : joined;
}

// `**` as a whole segment: zero or more directories (`dir/**` is `dir` and all below it); `*`
// within a segment; `?` one character.
function globRegex(pattern: string, flags: string): RegExp {
  const normalized = normalizePath(pattern);
  const absolute = normalized.startsWith("/");
  const segments = (absolute ? normalized.slice(1) : normalized).split("/");
  let source = absolute ? "/" : "";
  segments.forEach((segment, index) => {
    const last = index === segments.length - 1;
    if (segment !== "**") source += escapeGlob(segment) + (last ? "" : "/");
    // A leading `**/` covers an absolute path's directories too.
    else if (!last) source += index === 0 && !absolute ? "/?(?:[^/]+/)*" : "(?:[^/]+/)*";
    else source = index === 0 ? `${source}.*` : `${source.slice(0, -1)}(?:/.*)?`;
  });
  return new RegExp(`^${source}$`, flags);
}

function escapeGlob(segment: string): string {
  return segment
    .replace(/[.+^${}()|[\]\\]/g, "\\$&")
    .replace(/\*/g, "[^/]*")
    .replace(/\?/g, "[^/]");
}

/** What chains or substitutes commands: a command holding one never matches an `allow` prefix. */
const chains = /[;&|`<>\n\r]|\$\(/;

// The parts of a command a deny or ask is checked against: split at every chaining or
// substituting character, and at the parentheses of subshells and substitutions.
function commandParts(command: string): string[] {
  return command
    .split(/[;&|`<>\n\r()]|\$\(/)
    .map(normalizeCommand)
    .filter((part) => part !== "");
}

function normalizeCommand(command: string): string {
  return command.trim().replace(/\s+/g, " ");
}

// `git status` starts `git status -s` and `git status`, not `git statusx`.
function startsWithWord(command: string, prefix: string): boolean {
  if (!command.startsWith(prefix)) return false;
  if (command.length === prefix.length) return true;
  return /\s/.test(command[prefix.length]!) || /\s/.test(prefix[prefix.length - 1]!) || !/\w/.test(prefix.at(-1)!);
}

// A deny or ask reads the command past quotes and expansions: `rm${IFS}-rf` runs `rm`.
function startsWithLooseWord(command: string, prefix: string): boolean {
  return startsWithWord(command, prefix) || (command.startsWith(prefix) && /[$`'"\\{]/.test(command[prefix.length]!));
}

/**
 * What is wrong with a regex, or undefined: it must compile, be at most 1000 characters, and not
 * backtrack without bound (no quantified group holding a quantifier, no back-reference), since a
 * pattern is run on the model's input where it cannot be stopped.
 */
export function regexProblem(source: string): string | undefined {
  if (source.length > 1000) return "is longer than 1000 characters";
  try {
    new RegExp(source);
  } catch (error) {
    return `does not compile: ${(error as Error).message}`;
  }
  if (/\\[1-9]|\\k</.test(source)) return "uses a back-reference, which can backtrack without bound";
  if (nestedQuantifier(source))
    return "quantifies a group that holds a quantifier (such as (a+)+), which can backtrack without bound";
  return undefined;
}

// Walks the pattern's groups: one followed by a quantifier that holds a quantifier or an
// alternation (`(a+)+`, `(a|a)*`) can take exponential time on a string that almost matches.
function nestedQuantifier(source: string): boolean {
  const stack: boolean[] = [];
  let inClass = false;
  for (let index = 0; index < source.length; index++) {
    const char = source[index]!;
    if (char === "\\") {
      index++;
      continue;
    }
    if (inClass) {
      if (char === "]") inClass = false;
      continue;
    }
    if (char === "[") inClass = true;
    else if (char === "(") stack.push(false);
    else if (char === ")") {
      const risky = stack.pop() ?? false;
      const next = source[index + 1];
      const quantified = next === "*" || next === "+" || next === "{";
      if (risky && quantified) return true;
      if ((risky || quantified) && stack.length > 0) stack[stack.length - 1] = true;
    } else if ((char === "*" || char === "+" || char === "{" || char === "|") && stack.length > 0)
      stack[stack.length - 1] = true;
  }
  return false;
}
