import type { JsonObject, ToolResultMessage } from "../session.ts";
import { visibleLine } from "./visible-text.ts";

/**
 * One line for an answered tool call: `✓ read src/a.ts (120 lines)` or
 * `✗ edit x.ts: oldText not found in x.ts; …`, at most `width` characters, every control
 * character of the call and its result made visible (`visibleLine`).
 */
export function summarizeToolCall(
  name: string,
  input: JsonObject,
  result: ToolResultMessage,
  width = 160,
): { ok: boolean; text: string } {
  const ok = result.isError !== true;
  const output = typeof result.output === "string" ? result.output : JSON.stringify(result.output);
  const subject = `${visibleLine(name)}${describeTarget(name, input)}`;
  const text = visibleLine(
    ok ? `✓ ${subject}${detail(name, input, output)}` : `✗ ${subject}: ${firstLine(output.replace(/^Error: /, ""))}`,
  );
  return { ok, text: text.length > width ? `${text.slice(0, width - 1)}…` : text };
}

/**
 * What a call is about, with a leading space: a path, a pattern, a command (every line of it,
 * joined by ` ↵ `, with the count of lines when there are several), control characters made
 * visible (`visibleLine`).
 */
export function describeTarget(name: string, input: JsonObject): string {
  return visibleLine(target(name, input));
}

function target(name: string, input: JsonObject): string {
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
    case "bash": {
      // Every line: a second command must not hide behind the first.
      const lines = (text(input.command) ?? "").replace(/\n+$/, "").split("\n");
      const shown = shorten(lines.map(visibleLine).join(" ↵ "), 70);
      return lines.length === 1 ? ` ${shown}` : ` ${shown} (${lines.length} lines)`;
    }
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
      // An image or a PDF: its one line names the media type and size.
      const media = /: ((?:image\/[\w.+-]+|application\/pdf), [\d.]+ [KM]?B)$/.exec(output)?.[1];
      if (shown === 0 && media !== undefined) return ` (${media})`;
      return shown === 0
        ? " (empty)"
        : ` (${total === undefined ? plural(shown, "line") : `${shown} of ${total} lines`})`;
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
      const count = (value: unknown): number =>
        typeof value === "string" && value !== "" ? value.replace(/\n$/, "").split("\n").length : 0;
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
