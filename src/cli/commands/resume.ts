import { describeContent } from "../../content-parts.ts";
import { errorMessage } from "../../errors.ts";
import type { Message } from "../../session.ts";
import type { SessionSummary } from "../../store/index.ts";
import { replaySession } from "../session-replay.ts";
import { isSessionId } from "../sessions.ts";
import { visibleLine, visibleText } from "../visible-text.ts";
import { goOn, type CommandContext, type SlashCommand } from "./slash-command.ts";

/** How many sessions `/resume` offers. */
const offered = 10;

/**
 * `/resume [id]`: continues an earlier session of this workspace: the one named, or one picked
 * from the latest (by number). The current session is closed and stays resumable.
 */
export const resumeCommand: SlashCommand = {
  name: "resume",
  argument: "[id]",
  summary: "continue an earlier session of this workspace (pick from a list)",
  run: async (argument, context) => {
    const { sessions, out, style } = context;
    try {
      const id = argument === "" ? await pick(context) : argument;
      if (id === undefined) return goOn;
      if (!isSessionId(id)) {
        out.write(
          style.red(`/resume: ${visibleLine(id)} is not a session id (they look like 20250102-030405-a1b2c3)\n`),
        );
        return goOn;
      }
      const opened = await sessions.resume(id);
      const messages = opened.stored()?.messages ?? [];
      const last = messages.findLast(
        (message): message is Extract<Message, { role: "user" }> => "role" in message && message.role === "user",
      );
      out.write(
        `Resumed session ${visibleLine(opened.id)} (${messages.length} messages${last === undefined ? "" : `; last task: ${visibleLine(JSON.stringify(short(describeContent(last.content))))}`})\n`,
      );
      // terminal-safe: replaySession makes every text of the session visible (or renders it as Markdown).
      out.write(replaySession(messages, style));
    } catch (error) {
      out.write(style.red(`/resume: ${visibleText(errorMessage(error))}\n`));
    }
    return goOn;
  },
};

// The latest sessions, numbered; the user types a number (Enter alone cancels).
async function pick(context: CommandContext): Promise<string | undefined> {
  const { sessions, input, out, style } = context;
  const current = sessions.current().id;
  const found = (await sessions.list(offered + 1)).filter((summary) => summary.id !== current).slice(0, offered);
  if (found.length === 0) {
    out.write(style.dim("No earlier session of this workspace to resume.\n"));
    return undefined;
  }
  // terminal-safe: numbers, and each session's id, time and title made visible in describe.
  out.write(found.map((summary, index) => `  ${String(index + 1).padStart(2)}. ${describe(summary)}\n`).join(""));
  for (;;) {
    const answer = await input.question(`${style.dim(`Resume which? (1-${found.length}, Enter to cancel)`)} `);
    if (answer.type !== "line" || answer.text.trim() === "") return undefined;
    const chosen = found[Number(answer.text.trim()) - 1];
    if (/^\d+$/.test(answer.text.trim()) && chosen !== undefined) return chosen.id;
    out.write(style.dim(`Type a number from 1 to ${found.length}.\n`));
  }
}

function describe(summary: SessionSummary): string {
  const when = summary.lastActivity.slice(0, 16).replace("T", " ");
  return `${visibleLine(summary.id)}  ${visibleLine(when)}  ${visibleLine(short(summary.title ?? ""))}`;
}

function short(text: string): string {
  return text.length > 60 ? `${text.slice(0, 59)}…` : text;
}
