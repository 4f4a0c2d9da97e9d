import type { ContentPart } from "../content-parts.ts";
import type { JsonObject, Message } from "../session.ts";
import type { Style } from "./ansi.ts";
import { describeAttachments } from "./attachment-lines.ts";
import { renderMarkdown } from "./markdown.ts";
import { userTurns } from "./rewind-plan.ts";
import { summarizeToolCall } from "./summary.ts";
import { visibleLine, visibleText } from "./visible-text.ts";

/** How many of the last user turns a resumed session shows, by default. */
export const replayedTurns = 5;

/**
 * The end of a resumed session as the terminal showed it, so the user sees where they are: its
 * last `turns` user turns (each task after `> `, its attachments one dim line each), the answers
 * rendered as Markdown and one line per answered tool call; a compaction's summary as one dim
 * line. Everything from the session (untrusted) is made visible. "" for a session without turns.
 */
export function replaySession(
  messages: readonly Message[],
  style: Style,
  options: { turns?: number; width?: number } = {},
): string {
  const turns = userTurns(messages);
  const shown = turns.slice(-(options.turns ?? replayedTurns));
  const first = shown[0];
  if (first === undefined) return "";
  const lines: string[] = [];
  if (turns.length > shown.length)
    lines.push(style.dim(`(${turns.length - shown.length} earlier turns not shown; /rewind lists them all)\n`));
  const calls = new Map<string, { name: string; input: JsonObject }>();
  for (const message of messages.slice(first.index)) {
    if ("type" in message) {
      if (message.type === "tool_call") calls.set(message.id, message);
      if (message.type !== "tool_result") continue;
      const call = calls.get(message.id) ?? { name: "tool", input: {} };
      const { ok, text } = summarizeToolCall(call.name, call.input, message, options.width);
      lines.push(`${(ok ? style.green : style.red)(text.slice(0, 1))}${text.slice(1)}\n`);
    } else if (message.role === "user") {
      if (message.compactionSummary === true) lines.push(style.dim("(a summary of the earlier turns)\n"));
      else if (message.guardrail?.action !== "retry") {
        const task = typeof message.content === "string" ? message.content : firstText(message.content);
        lines.push(
          `\n${style.bold(style.cyan(">"))} ${visibleText(task)}\n`,
          describeAttachments(message.content, style),
        );
      }
    } else if (message.role === "assistant" && message.content !== "") {
      lines.push(`${renderMarkdown(message.content, style).replace(/\n*$/, "")}\n`);
    }
  }
  return `${lines.join("")}${style.dim(`${visibleLine("── resumed here ──")}\n`)}`;
}

// The task as typed: the first part, which `taskContent` makes the task's text.
function firstText(content: readonly ContentPart[]): string {
  const first = content[0];
  return first?.type === "text" ? first.text : "";
}
