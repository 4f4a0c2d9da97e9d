/**
 * The commands one part of a shell command line may run, as a `deny` or `ask` prefix reads it:
 * the part itself, and the part as the shell sees it once it is read past what does not change
 * the command run: quotes and backslashes (`\rm`, `"rm"`, `r''m`, `$'\x72m'` are `rm`), a
 * directory (`/bin/rm` is `rm`), variable assignments (`FOO=1 rm`; the value itself too, which
 * a later `$FOO` may run), the shell's keywords (`then rm`, `! rm`, `{ rm`, `time rm`), and
 * from a runner of other commands (`sudo`, `env`, `xargs`, `nohup`, `exec`, `find -exec`…) each
 * word after it. `eval` and `sh -c`/`bash -c` run their text as a command line, read the same way.
 *
 * Over-reading is safe here: a `deny` or `ask` that matches more asks more; the strict reading
 * an `allow` needs is elsewhere (no chaining at all, the prefix at the very start).
 */
export function commandsRun(part: string): string[] {
  const found = new Set<string>([part]);
  readCommands(part, found, 0);
  return [...found];
}

/** How deep `eval` and `sh -c` texts are read within each other. */
const maxNesting = 3;
/** Words read of one part: a longer one is read as far as this. */
const maxWords = 200;

const keywords = new Set([
  "!",
  "{",
  "}",
  "(",
  ")",
  "if",
  "then",
  "else",
  "elif",
  "do",
  "while",
  "until",
  "time",
  "coproc",
]);
// Commands that run the command their later words name (any of them: their options differ).
const runners = new Set([
  "builtin",
  "command",
  "exec",
  "env",
  "sudo",
  "doas",
  "nohup",
  "nice",
  "ionice",
  "timeout",
  "xargs",
  "stdbuf",
  "setsid",
  "chroot",
  "strace",
  "watch",
  "flock",
  "runuser",
  "unbuffer",
  "parallel",
]);
const shells = new Set(["sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "busybox"]);
const assignment = /^[A-Za-z_][A-Za-z0-9_]*\+?=/;

function readCommands(text: string, found: Set<string>, depth: number): void {
  const words = shellWords(text);
  let index = 0;
  // What comes before the command: assignments (their value too) and keywords.
  for (; index < words.length; index++) {
    const word = words[index]!;
    const set = assignment.exec(word);
    if (set !== null) {
      const value = word.slice(set[0].length);
      if (value !== "") addCommand(shellWords(value), 0, found);
      continue;
    }
    if (!keywords.has(word)) break;
  }
  if (index >= words.length) return;
  addCommand(words, index, found);
  const command = baseName(words[index]!);
  if (command === "eval") {
    nested(words.slice(index + 1).join(" "), found, depth);
    return;
  }
  if (shells.has(command)) {
    const script = words.findIndex((word, at) => at > index && /^-[A-Za-z]*c[A-Za-z]*$/.test(word));
    if (script !== -1 && words[script + 1] !== undefined) nested(words[script + 1]!, found, depth);
  }
  for (let at = index + 1; at < words.length; at++) {
    // `find . -exec rm {} ;`: the word after runs.
    if (/^-(exec|execdir|ok|okdir)$/.test(words[at]!) && at + 1 < words.length) addCommand(words, at + 1, found);
  }
  if (!runners.has(command)) return;
  for (let at = index + 1; at < words.length; at++) {
    addCommand(words, at, found);
    if (depth < maxNesting && (baseName(words[at]!) === "eval" || shells.has(baseName(words[at]!))))
      readCommands(words.slice(at).join(" "), found, depth + 1);
  }
}

// A command line inside a command (`eval`'s words, `sh -c`'s text): each of its parts.
function nested(text: string, found: Set<string>, depth: number): void {
  if (depth >= maxNesting) return;
  for (const part of text.split(/[;&|`<>\n\r()]|\$\(/)) {
    const trimmed = part.trim();
    if (trimmed === "") continue;
    found.add(trimmed.replace(/\s+/g, " "));
    readCommands(trimmed, found, depth + 1);
  }
}

// The command from `words[at]` on, its name without a directory.
function addCommand(words: readonly string[], at: number, found: Set<string>): void {
  const name = baseName(words[at]!);
  if (name === "") return;
  found.add([name, ...words.slice(at + 1)].join(" "));
}

function baseName(word: string): string {
  const slash = word.lastIndexOf("/");
  return slash === -1 ? word : word.slice(slash + 1);
}

/**
 * The words of a command as the shell reads them: split at blanks outside quotes; quotes and
 * backslashes taken away; `$'…'` with its escapes decoded. Expansions are left as written.
 */
export function shellWords(text: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let index = 0;
  const end = (): void => {
    if (inWord) words.push(word);
    word = "";
    inWord = false;
  };
  while (index < text.length && words.length < maxWords) {
    const char = text[index]!;
    if (/\s/.test(char)) {
      end();
      index++;
      continue;
    }
    inWord = true;
    if (char === "\\") {
      word += text[index + 1] ?? "";
      index += 2;
    } else if (char === "'") {
      const close = closing(text, "'", index + 1, false);
      word += text.slice(index + 1, close);
      index = close + 1;
    } else if (char === "$" && text[index + 1] === "'") {
      const close = closing(text, "'", index + 2, true);
      word += decodeAnsi(text.slice(index + 2, close));
      index = close + 1;
    } else if (char === '"') {
      const close = closing(text, '"', index + 1, true);
      word += text.slice(index + 1, close).replace(/\\([$`"\\\n])/g, "$1");
      index = close + 1;
    } else {
      word += char;
      index++;
    }
  }
  end();
  return words;
}

// Where a quote closes (the text's end when it never does); `escapes`: a backslash escapes it.
function closing(text: string, quote: string, from: number, escapes: boolean): number {
  for (let index = from; index < text.length; index++) {
    if (escapes && text[index] === "\\") index++;
    else if (text[index] === quote) return index;
  }
  return text.length;
}

const simpleEscapes: Record<string, string> = {
  a: "\x07",
  b: "\b",
  e: "\x1b",
  E: "\x1b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
};

// `$'…'`'s escapes: `\xHH`, `\uHHHH`, `\UHHHHHHHH`, octal `\NNN`, `\n` and the like.
function decodeAnsi(text: string): string {
  return text.replace(
    /\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}|c.|.)/gs,
    (_match, code: string) => {
      const kind = code[0]!;
      if (kind === "x" || kind === "u" || kind === "U") return fromCode(Number.parseInt(code.slice(1), 16));
      if (/[0-7]/.test(kind)) return fromCode(Number.parseInt(code, 8));
      if (kind === "c") return fromCode(code.charCodeAt(1) & 31);
      return simpleEscapes[kind] ?? kind;
    },
  );
}

function fromCode(code: number): string {
  return code <= 0x10ffff ? String.fromCodePoint(code) : "";
}
