import { errorMessage } from "../../errors.ts";
import type { CompactionFallback } from "../../loop/compaction-strategy.ts";
import { estimateTokens, summarizeOlderTurns } from "../../loop/context-strategies.ts";
import { visibleLine, visibleText } from "../visible-text.ts";
import { goOn, type SlashCommand } from "./slash-command.ts";

/**
 * `/compact`: summarizes the older turns now, with the compaction the tasks use near the window
 * (`summarizeOlderTurns`: the recent turns kept whole, the summary written by the model). A summary
 * that fails or would not be shorter leaves the session as it was, and says why. Ctrl-C stops it.
 */
export const compactCommand: SlashCommand = {
  name: "compact",
  summary: "summarize the older turns now, to free context",
  run: async (_argument, { task, sessions, input, out, style }) => {
    const session = sessions.current().stored();
    if (session === undefined) {
      out.write(style.dim("Nothing to compact yet: the session has no task.\n"));
      return goOn;
    }
    const before = { messages: session.messages.length, tokens: estimateTokens(session.messages) };
    const controller = new AbortController();
    const stopWatching = input.watchInterrupts(() => controller.abort());
    const problems: CompactionFallback[] = [];
    out.write(style.dim("Summarizing the older turns…\n"));
    try {
      // A threshold above zero but below any size: compact whatever the session's size.
      const compact = summarizeOlderTurns({
        invokeModel: task.invokeModel,
        contextWindow: task.contextWindow,
        threshold: Number.MIN_VALUE,
      });
      await compact(session, {
        reason: "before-call",
        signal: controller.signal,
        report: (problem) => problems.push(problem),
      });
    } catch (error) {
      problems.push({ strategy: "summary", reason: errorMessage(error), fallback: "none" });
    } finally {
      stopWatching();
    }
    if (controller.signal.aborted) out.write(style.yellow("Interrupted: the session is as it was.\n"));
    else if (problems.length > 0)
      out.write(style.red(`Not compacted: ${visibleText(problems.map((problem) => problem.reason).join("; "))}\n`));
    else if (session.messages.length === before.messages)
      out.write(style.dim("Nothing to compact: the session has only its recent turns.\n"));
    else {
      const tokens = `about ${before.tokens.toLocaleString("en-US")} → ${estimateTokens(session.messages).toLocaleString("en-US")} tokens`;
      out.write(
        `Compacted ${before.messages - session.messages.length + 1} messages into a summary: ${visibleLine(tokens)}.\n`,
      );
    }
    return goOn;
  },
};
