import type { McpHeldTool } from "../mcp/tool-registry.ts";
import { canonicalJson } from "../mcp/tool-fingerprint.ts";
import type { JsonObject } from "../session.ts";
import type { Style } from "./ansi.ts";
import type { TerminalInput } from "./terminal-input.ts";
import { visibleLine } from "./visible-text.ts";

/**
 * Asks on the terminal whether to trust an MCP tool whose definition changed since it was
 * trusted (a server can rewrite a tool's description after the user agreed to it): shows what
 * changed, line by line (`-` the trusted definition, `+` the new one), then reads one key: `y`
 * trusts the new definition, `n` (or Ctrl-D) keeps the tool held. Ctrl-C calls `onInterrupt`.
 */
export async function askHeldTool(
  input: TerminalInput,
  out: NodeJS.WritableStream,
  style: Style,
  held: McpHeldTool,
  onInterrupt: () => void,
): Promise<boolean> {
  const changes = lineDiff(definitionLines(held.before), definitionLines(held.after));
  // terminal-safe: definitionLines makes every line visible; the names are made visible here.
  out.write(
    `${style.bold(`● MCP tool ${visibleLine(held.name)} of server ${visibleLine(held.server)} changed since you trusted it:`)}\n` +
      changes
        .map(({ kind, line }) =>
          kind === "-"
            ? style.red(`  - ${line}`)
            : kind === "+"
              ? style.green(`  + ${line}`)
              : style.dim(`    ${line}`),
        )
        .join("\n") +
      "\n",
  );
  for (;;) {
    const answer = await input.key(
      `${style.yellow("?")} Trust the new definition? ${style.dim("[y] yes · [n] no, keep it held (press a key)")} `,
    );
    if (answer.type === "interrupt") {
      onInterrupt();
      return false;
    }
    if (answer.type === "end") return false;
    const key = answer.key.toLowerCase();
    if (key === "y") return true;
    if (key === "n") return false;
    out.write(style.dim("  Press y or n.\n"));
  }
}

/**
 * A definition as visible lines: each line of the description on its own (where a changed
 * instruction hides), then the rest as indented JSON with its keys sorted.
 */
export function definitionLines(definition: JsonObject): string[] {
  const { description, ...rest } = definition;
  const sorted = JSON.parse(canonicalJson(rest)) as JsonObject;
  return [
    ...(typeof description === "string"
      ? description.split("\n").map((line) => `description: ${visibleLine(line)}`)
      : []),
    ...JSON.stringify(sorted, null, 2).split("\n").map(visibleLine),
  ];
}

/** One line of a diff: kept (` `), removed (`-`) or added (`+`). */
export type DiffLine = { kind: " " | "-" | "+"; line: string };

/**
 * The lines of `before` and `after` as a diff (longest common subsequence), with up to two kept
 * lines around each change; past `maxLines` lines on a side, every line of `before` removed and
 * every line of `after` added (the table would be too large to build).
 */
export function lineDiff(before: string[], after: string[], maxLines = 2_000): DiffLine[] {
  if (before.length > maxLines || after.length > maxLines)
    return [
      ...before.map((line) => ({ kind: "-" as const, line })),
      ...after.map((line) => ({ kind: "+" as const, line })),
    ];
  const common: number[][] = Array.from({ length: before.length + 1 }, () =>
    new Array<number>(after.length + 1).fill(0),
  );
  for (let i = before.length - 1; i >= 0; i--)
    for (let j = after.length - 1; j >= 0; j--)
      common[i]![j] =
        before[i] === after[j] ? common[i + 1]![j + 1]! + 1 : Math.max(common[i + 1]![j]!, common[i]![j + 1]!);
  const all: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < before.length || j < after.length) {
    if (i < before.length && j < after.length && before[i] === after[j]) {
      all.push({ kind: " ", line: before[i]! });
      i++;
      j++;
    } else if (j < after.length && (i === before.length || common[i]![j + 1]! >= common[i + 1]![j]!)) {
      all.push({ kind: "+", line: after[j]! });
      j++;
    } else {
      all.push({ kind: "-", line: before[i]! });
      i++;
    }
  }
  const near = (index: number): boolean =>
    all.slice(Math.max(0, index - 2), index + 3).some((entry) => entry.kind !== " ");
  return all.filter((entry, index) => entry.kind !== " " || near(index));
}
