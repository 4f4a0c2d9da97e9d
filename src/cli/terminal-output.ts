import { errorMessage } from "../errors.ts";
import type { RunMetrics } from "../loop/metrics.ts";
import type { JsonObject } from "../session.ts";
import type { Style } from "./ansi.ts";
import { commandOutputLines } from "./command-output.ts";
import { markdownRenderer, renderMarkdown } from "./markdown.ts";
import { createSpinner } from "./spinner.ts";
import { describeTarget, summarizeToolCall } from "./summary.ts";
import { unknownUsageCalls, type TaskOutput, type TaskResult } from "./task-output.ts";
import { visibleLine, visibleText } from "./visible-text.ts";

type Out = NodeJS.WritableStream & { isTTY?: boolean; columns?: number };

/**
 * A task on the terminal: the assistant's text as it streams, one line per answered tool call
 * (`✓ read a.ts (12 lines)`), a spinner while waiting (TTY only, erased before anything is
 * written), and at the end the outcome and a line of tokens and time. Errors go to `errors`.
 * Text from the model, the tools and the provider is shown with `visibleText`: it never acts
 * on the terminal.
 */
export function terminalOutput(out: Out, errors: NodeJS.WritableStream, style: Style): TaskOutput {
  const spinner = createSpinner(out, style, out.isTTY === true);
  const running = new Map<string, string>();
  const calls = new Map<string, { name: string; input: JsonObject }>();
  let atLineStart = true;
  let streamedThisTurn = false;
  let stopReason: string | undefined;
  // While a prompt is on the terminal, output of tools still running waits here.
  let held: string[] | undefined;
  const write = (text: string): void => {
    if (text === "") return;
    atLineStart = text.endsWith("\n");
    if (held !== undefined) {
      held.push(text);
      return;
    }
    spinner.stop();
    out.write(text);
  };
  // The answer's Markdown, rendered as it streams; what it holds back goes out when the text stops.
  const markdown = markdownRenderer(style);
  const endLine = (): void => {
    spinner.stop();
    write(markdown.end());
    if (!atLineStart) write("\n");
  };
  // The spinner only ever draws on an empty line, never over streamed text.
  const wait = (label: string): void => {
    if (atLineStart && held === undefined) spinner.start(label);
  };
  const width = (): number => Math.max(40, (out.columns ?? 160) - 1);
  return {
    event: (event) => {
      switch (event.type) {
        case "turn-start":
          streamedThisTurn = false;
          wait("thinking");
          break;
        case "text-delta":
          streamedThisTurn = true;
          write(markdown.push(event.delta));
          break;
        case "thinking-delta":
          wait("thinking");
          break;
        case "tool-call-start":
          endLine();
          wait(`preparing ${visibleLine(event.name)}`);
          break;
        case "tool-execution-start":
          calls.set(event.id, { name: event.name, input: event.input });
          running.set(event.id, `${visibleLine(event.name)}${describeTarget(event.name, event.input)}`);
          endLine();
          wait(running.size === 1 ? `running ${running.values().next().value}` : `running ${running.size} tools`);
          break;
        case "tool-execution-end": {
          running.delete(event.id);
          const call = calls.get(event.id) ?? { name: event.name, input: {} };
          const { ok, text } = summarizeToolCall(call.name, call.input, event.result, width());
          endLine();
          write(`${ok ? style.green(text.slice(0, 1)) : style.red(text.slice(0, 1))}${text.slice(1)}\n`);
          if (call.name === "bash") for (const line of commandOutputLines(event.result, width() - 4)) write(`${style.dim(`  │ ${line}`)}\n`);
          if (running.size > 0) wait(running.size === 1 ? `running ${running.values().next().value}` : `running ${running.size} tools`);
          break;
        }
        case "retry":
          markdown.reset();
          endLine();
          write(`${style.yellow(`↻ ${visibleLine(event.error)}; retrying in ${(event.delayMs / 1000).toFixed(1)}s${streamedThisTurn ? " (the text above is void)" : ""}`)}\n`);
          streamedThisTurn = false;
          break;
        case "compaction":
          endLine();
          write(`${style.dim(`(compacted ${event.count} old messages)`)}\n`);
          break;
        case "message": {
          // A model that does not stream its text (or streams it whole) is shown when its turn enters.
          const message = event.message;
          if ("role" in message && message.role === "assistant" && !streamedThisTurn && message.content !== "") write(renderMarkdown(message.content, style));
          break;
        }
        case "turn-end":
          stopReason = event.stopReason;
          break;
        case "run-end":
          endLine();
          break;
        default:
          break;
      }
    },
    finish: (result: TaskResult) => {
      endLine();
      if (result.outcome === "aborted") write(`${style.yellow("⏹ Interrupted: the task was stopped; the session keeps everything up to here.")}\n`);
      else if (result.outcome === "stopped") write(`${style.yellow(`The model stopped before finishing (stop reason: ${visibleLine(stopReason ?? "unknown")}).`)}\n`);
      if (result.error !== undefined && result.outcome !== "aborted") errors.write(`${style.red("✗ Error:")} ${visibleText(errorMessage(result.error))}\n`);
      if (result.metrics !== undefined) {
        write(`${style.dim(`${tokenCounts(result.metrics)} · ${taskTime(result.metrics.durationMs, result.waitMs ?? 0)}`)}\n`);
      }
    },
    interrupting: () => {
      endLine();
      write(`${style.yellow("Interrupting… (Ctrl-C again to quit)")}\n`);
    },
    pause: () => {
      endLine();
      held ??= [];
    },
    resume: () => {
      const pending = held ?? [];
      held = undefined;
      for (const text of pending) write(text);
    },
  };
}

// A model call that ended before its usage arrived (an interrupted stream, an error) used tokens
// nobody counted: the sums are then lower bounds, or unknown if no call reported any.
function tokenCounts(metrics: RunMetrics): string {
  const unknown = unknownUsageCalls(metrics);
  if (unknown > 0 && unknown === metrics.modelCalls) return "tokens unknown";
  const number = (value: number): string => `${value.toLocaleString("en-US")}${unknown > 0 ? "+" : ""}`;
  const note = unknown > 0 ? ` (${unknown} ${unknown === 1 ? "call" : "calls"} not counted)` : "";
  return `tokens ${number(metrics.usage.inputTokens)} in · ${number(metrics.usage.outputTokens)} out${note}`;
}

// Working time first; the time the user took to answer prompts apart: `1.5s (+20.1s waiting for you)`.
function taskTime(durationMs: number, waitMs: number): string {
  const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)}s`;
  const working = seconds(Math.max(0, durationMs - waitMs));
  return waitMs >= 50 ? `${working} (+${seconds(waitMs)} waiting for you)` : working;
}
