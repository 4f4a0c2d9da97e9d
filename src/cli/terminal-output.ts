import { errorMessage } from "../errors.ts";
import type { RunMetrics } from "../loop/metrics.ts";
import type { AgentEvent } from "../loop/events.ts";
import type { JsonObject, Message } from "../session.ts";
import type { Style } from "./ansi.ts";
import { commandOutputLines } from "./command-output.ts";
import { markdownRenderer, renderMarkdown, type MarkdownRenderer } from "./markdown.ts";
import { createSpinner, type Spinner } from "./spinner.ts";
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
  const screen: Screen = {
    out,
    style,
    spinner: createSpinner(out, style, out.isTTY === true),
    markdown: markdownRenderer(style),
    atLineStart: true,
    held: undefined,
  };
  const task: TaskView = {
    screen,
    running: new Map(),
    calls: new Map(),
    streamedThisTurn: false,
    stopReason: undefined,
  };
  return {
    event: (event) => showEvent(task, event),
    finish: (result) => showResult(task, errors, result),
    interrupting: () => {
      endLine(screen);
      write(screen, `${style.yellow("Interrupting… (Ctrl-C again to quit)")}\n`);
    },
    pause: () => {
      endLine(screen);
      screen.held ??= [];
    },
    resume: () => {
      const pending = screen.held ?? [];
      screen.held = undefined;
      for (const text of pending) write(screen, text);
    },
  };
}

/** The terminal as the task writes to it; changed only through `write`, `endLine` and `wait`. */
type Screen = {
  readonly out: Out;
  readonly style: Style;
  readonly spinner: Spinner;
  /** The answer's Markdown, rendered as it streams; what it holds back goes out when the text stops. */
  readonly markdown: MarkdownRenderer;
  /** Whether the last text written ended its line. */
  atLineStart: boolean;
  /** While a prompt is on the terminal, output of tools still running waits here. */
  held: string[] | undefined;
};

/** What the task's lines are made of: the screen, the tool calls running and the turn's state. */
type TaskView = {
  readonly screen: Screen;
  /** What the spinner names for each call executing, by call id. */
  readonly running: Map<string, string>;
  /** Each started call's name and input, by id: its summary line names them. */
  readonly calls: Map<string, { name: string; input: JsonObject }>;
  /** Whether this turn's text was shown as it streamed (then the turn's message is not shown again). */
  streamedThisTurn: boolean;
  /** The last turn's stop reason, for a run that stopped before finishing. */
  stopReason: string | undefined;
};

function showEvent(task: TaskView, event: AgentEvent): void {
  const { screen } = task;
  switch (event.type) {
    case "turn-start":
      task.streamedThisTurn = false;
      return wait(screen, "thinking");
    case "text-delta":
      task.streamedThisTurn = true;
      return write(screen, screen.markdown.push(event.delta));
    case "thinking-delta":
      return wait(screen, "thinking");
    case "tool-call-start":
      endLine(screen);
      return wait(screen, `preparing ${visibleLine(event.name)}`);
    case "tool-execution-start":
      return showToolStart(task, event);
    case "tool-execution-end":
      return showToolEnd(task, event);
    case "retry":
      return showRetry(task, event);
    case "task-start":
    case "task-update":
    case "task-settled":
      return showTaskEvent(task, event);
    case "compaction":
      endLine(screen);
      return write(
        screen,
        `${screen.style.dim(`(compacted ${event.count} old messages by ${event.strategy}, about ${event.tokensFreed} tokens freed)`)}\n`,
      );
    case "message":
      return showUnstreamedAnswer(task, event.message);
    case "turn-end":
      task.stopReason = event.stopReason;
      return undefined;
    case "run-end":
      return endLine(screen);
    default:
      return undefined;
  }
}

function showToolStart(task: TaskView, event: Extract<AgentEvent, { type: "tool-execution-start" }>): void {
  task.calls.set(event.id, { name: event.name, input: event.input });
  task.running.set(event.id, `${visibleLine(event.name)}${describeTarget(event.name, event.input)}`);
  endLine(task.screen);
  waitForTools(task);
}

function showToolEnd(task: TaskView, event: Extract<AgentEvent, { type: "tool-execution-end" }>): void {
  const { screen } = task;
  const { style } = screen;
  task.running.delete(event.id);
  const call = task.calls.get(event.id) ?? { name: event.name, input: {} };
  const { ok, text } = summarizeToolCall(call.name, call.input, event.result, width(screen));
  endLine(screen);
  write(screen, `${ok ? style.green(text.slice(0, 1)) : style.red(text.slice(0, 1))}${text.slice(1)}\n`);
  if (call.name === "bash")
    for (const line of commandOutputLines(event.result, width(screen) - 4))
      write(screen, `${style.dim(`  │ ${line}`)}\n`);
  if (task.running.size > 0) waitForTools(task);
}

// A background task's life, one dim line each: started, its handler's progress (what it says in
// words: a string, or an object's `message`; a subagent's own events are not repeated), settled.
function showTaskEvent(
  task: TaskView,
  event: Extract<AgentEvent, { type: "task-start" | "task-update" | "task-settled" }>,
): void {
  const { screen } = task;
  let text: string;
  if (event.type === "task-start")
    text = `⧗ ${visibleLine(event.name)} runs in the background (${visibleLine(event.id)})`;
  else if (event.type === "task-settled") text = `⧗ background task ${visibleLine(event.id)} ${event.status}`;
  else {
    const said = progressText(event.progress);
    if (said === undefined) return;
    text = `⧗ ${visibleLine(event.name)}: ${visibleLine(said).slice(0, 200)}`;
  }
  endLine(screen);
  write(screen, `${screen.style.dim(text)}\n`);
  if (task.running.size > 0) waitForTools(task);
}

function progressText(progress: unknown): string | undefined {
  if (typeof progress === "string") return progress;
  if (typeof progress !== "object" || progress === null || Array.isArray(progress)) return undefined;
  const { message } = progress as { message?: unknown };
  return typeof message === "string" ? message : undefined;
}

function waitForTools(task: TaskView): void {
  const { running } = task;
  wait(task.screen, running.size === 1 ? `running ${running.values().next().value}` : `running ${running.size} tools`);
}

function showRetry(task: TaskView, event: Extract<AgentEvent, { type: "retry" }>): void {
  const { screen } = task;
  screen.markdown.reset();
  endLine(screen);
  write(
    screen,
    `${screen.style.yellow(`↻ ${visibleLine(event.error)}; retrying in ${(event.delayMs / 1000).toFixed(1)}s${task.streamedThisTurn ? " (the text above is void)" : ""}`)}\n`,
  );
  task.streamedThisTurn = false;
}

// A model that does not stream its text (or streams it whole) is shown when its turn enters.
function showUnstreamedAnswer(task: TaskView, message: Message): void {
  if ("role" in message && message.role === "assistant" && !task.streamedThisTurn && message.content !== "")
    write(task.screen, renderMarkdown(message.content, task.screen.style));
  // A user message entering while the task runs is a line typed meanwhile, taken up as a follow-up:
  // shown after the prompt, as if typed there.
  if ("role" in message && message.role === "user" && typeof message.content === "string") {
    const { screen } = task;
    endLine(screen);
    write(screen, `\n${screen.style.bold(screen.style.cyan(">"))} ${visibleText(message.content)}\n`);
  }
}

function showResult(task: TaskView, errors: NodeJS.WritableStream, result: TaskResult): void {
  const { screen } = task;
  const { style } = screen;
  endLine(screen);
  if (result.outcome === "aborted")
    write(screen, `${style.yellow("⏹ Interrupted: the task was stopped; the session keeps everything up to here.")}\n`);
  else if (result.outcome === "stopped")
    write(
      screen,
      `${style.yellow(`The model stopped before finishing (stop reason: ${visibleLine(task.stopReason ?? "unknown")}).`)}\n`,
    );
  if (result.error !== undefined && result.outcome !== "aborted")
    errors.write(`${style.red("✗ Error:")} ${visibleText(errorMessage(result.error))}\n`);
  if (result.metrics !== undefined) {
    write(
      screen,
      `${style.dim(`${tokenCounts(result.metrics)} · ${taskTime(result.metrics.durationMs, result.waitMs ?? 0)}`)}\n`,
    );
  }
}

function write(screen: Screen, text: string): void {
  if (text === "") return;
  screen.atLineStart = text.endsWith("\n");
  if (screen.held !== undefined) {
    screen.held.push(text);
    return;
  }
  screen.spinner.stop();
  // terminal-safe: the task's output, rendered by the Markdown renderer or made visible where it is made.
  screen.out.write(text);
}

/** Ends the line being written, with what the Markdown renderer still holds back. */
function endLine(screen: Screen): void {
  screen.spinner.stop();
  write(screen, screen.markdown.end());
  if (!screen.atLineStart) write(screen, "\n");
}

// The spinner only ever draws on an empty line, never over streamed text.
function wait(screen: Screen, label: string): void {
  if (screen.atLineStart && screen.held === undefined) screen.spinner.start(label);
}

function width(screen: Screen): number {
  return Math.max(40, (screen.out.columns ?? 160) - 1);
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
