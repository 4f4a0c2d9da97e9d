import type { JsonObject, ToolResultMessage } from "../session.ts";
import { visibleText } from "./visible-text.ts";

/**
 * One line for an answered tool call: `✓ read src/a.ts (120 lines)` or
 * `✗ edit x.ts: oldText not found in x.ts; …`, at most `width` characters, control characters
 * of the call and its result made visible.
 */
export function summarizeToolCall(name: string, input: JsonObject, result: ToolResultMessage, width = 160): { ok: boolean; text: string } {
  const ok = result.isError !== true;
  const output = typeof result.output === "string" ? result.output : JSON.stringify(result.output);
  const subject = `${name}${describeTarget(name, input)}`;
  const line = ok ? `✓ ${subject}${detail(name, input, output)}` : `✗ ${subject}: ${firstLine(output.replace(/^Error: /, ""))}`;
  // One line on the terminal: a path or pattern with a line break in it must not start another.
  const text = visibleText(line).replace(/[\n\t]/g, " ");
  return { ok, text: text.length > width ? `${text.slice(0, width - 1)}…` : text };
}

/** What a call is about, with a leading space: a path, a pattern, a command. */
export function describeTarget(name: string, input: JsonObject): string {
  const text = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);
  switch (name) {
    case "read":
    case "edit":
    case "write":
      return ` ${text(input.path) ?? "?"}`;
    case "list":
      return ` ${text(input.path) ?? "."}`;
    case "grep": {
      const where = text(input.path) === undefined ? "" : ` in ${text(input.path)}`;
      const glob = text(input.glob) === undefined ? "" : ` (${text(input.glob)})`;
      return ` ${JSON.stringify(input.pattern)}${where}${glob}`;
    }
    case "bash":
      return ` ${shorten(firstLine(text(input.command) ?? ""), 70)}`;
    default: {
      const json = JSON.stringify(input);
      return json === "{}" ? "" : ` ${shorten(json, 70)}`;
    }
  }
}

function detail(name: string, input: JsonObject, output: string): string {
  const lines = output.replace(/\n$/, "").split("\n");
  const plural = (count: number, word: string, words = `${word}s`): string => `${count} ${count === 1 ? word : words}`;
  switch (name) {
    case "read": {
      const shown = lines.filter((line) => /^\s*\d+\t/.test(line)).length;
      const total = /of (\d+); read on/.exec(output)?.[1];
      return shown === 0 ? " (empty)" : ` (${total === undefined ? plural(shown, "line") : `${shown} of ${total} lines`})`;
    }
    case "grep": {
      if (output === "No matches.") return " (no matches)";
      const matches = lines.filter((line) => !line.startsWith("[")).length;
      return ` (${plural(matches, "match", "matches")}${output.includes("[stopped at") ? "+" : ""})`;
    }
    case "list":
      if (output.endsWith(" is empty")) return " (empty)";
      return ` (${plural(lines.filter((line) => !line.startsWith("[")).length, "entry", "entries")})`;
    case "edit": {
      const count = (value: unknown): number => (typeof value === "string" && value !== "" ? value.replace(/\n$/, "").split("\n").length : 0);
      return ` (−${count(input.oldText)} +${count(input.newText)} lines)`;
    }
    case "write":
      return ` (${plural(typeof input.content === "string" && input.content !== "" ? input.content.replace(/\n$/, "").split("\n").length : 0, "line")})`;
    case "bash": {
      if (output === "(no output)") return " (no output)";
      // Long output comes cut in the middle, with a note of how many lines were left out.
      const cut = /^\[… \d+ bytes \((\d+) lines?\) of output cut here;.*…\]$/m.exec(output);
      if (cut === null) return ` (${plural(lines.length, "line")} of output)`;
      return ` (${plural(lines.length - 1 + Number(cut[1]), "line")} of output, the middle cut)`;
    }
    default:
      return "";
  }
}

function firstLine(text: string): string {
  const line = text.split("\n").find((candidate) => candidate.trim() !== "") ?? "";
  return line.trim();
}

function shorten(text: string, length: number): string {
  return text.length > length ? `${text.slice(0, length - 1)}…` : text;
}
