import { isToolCall, type ConsultedLink, type JsonObject, type Session, type ToolCallMessage } from "../session.ts";
import type { ApprovalPolicy, AskHuman } from "../tools/approval-policy.ts";
import { matchPolicy } from "../tools/match-policy.ts";
import type { Style } from "./ansi.ts";
import { serialQueue } from "./serial-queue.ts";
import { describeTarget } from "./summary.ts";
import type { TerminalInput } from "./terminal-input.ts";
import { visibleLine } from "./visible-text.ts";

/** What a question asked on the terminal during a task needs (the permission prompt, the plan's). */
export type TerminalAskerOptions = {
  input: TerminalInput;
  out: NodeJS.WritableStream;
  style: Style;
  /** Clears the task's output (spinner, open line) and holds it back while the prompt is shown. */
  beforeAsk: () => void;
  /** The prompt is answered: the task's output may go on. */
  afterAsk: () => void;
  /** Ctrl-C was pressed at the prompt. */
  onInterrupt: () => void;
};

/** What the permission prompt needs besides the terminal: the policy it is the human of. */
export type PermissionPromptOptions = TerminalAskerOptions & {
  /** The policy in use: a call that waited behind a prompt whose "always" allows it now is not asked about. */
  policy: ApprovalPolicy;
  /** An "always" answer: the tool is allowed for the rest of the session (see `CliPolicy`). */
  allowAlways: (name: string) => void;
  /** Why this call is asked about every time (a write where code runs from), else `undefined`. */
  askedEveryTime?: (call: ToolCallMessage) => string | undefined;
  /** The human's id, recorded with each answer (`decidedBy.user`). */
  user?: string;
};

/** The user's answer to one prompt. */
type PromptAnswer = { type: "once" } | { type: "always" } | { type: "deny"; reason: string };

/**
 * What one prompt shows: the tool, its input, why it is asked every time (then "always" is not
 * offered), and for a call a code-mode program made, the program (its code call's id and first line).
 */
type PromptRequest = { name: string; input: JsonObject; everyTime?: string; program?: string };

/**
 * The human of the CLI's approval policy: asks on the terminal whether a tool call may run, one
 * prompt at a time. Shows what the call would do (the whole command, the text an edit replaces and
 * its replacement, the file a write creates; control characters made visible), then reads one key,
 * no Enter needed: `y` (once), `a` (always: an allow rule for this tool for the rest of the
 * session; not offered for a call a rule or a place asks about every time), `n` (deny; then a line
 * with a reason for the model). A text too long for the screen shows its first and last lines,
 * and `v` shows all of it. Ctrl-C at the prompt interrupts the task; Ctrl-D denies. Each answer is
 * recorded with `user` as `by`.
 */
export function terminalAsker(options: PermissionPromptOptions): AskHuman {
  const prompts = serialQueue();
  const by = options.user === undefined ? {} : { by: options.user };
  return (request) =>
    prompts(async () => {
      const { call, signal } = request;
      if (signal.aborted) return { approved: false, reason: "the task was interrupted", ...by };
      const everyTime = options.askedEveryTime?.(call) ?? askedByRule(request.consulted);
      if (everyTime === undefined && matchPolicy(options.policy, call)?.action === "allow")
        return { approved: true, reason: `"always" was answered for ${call.name} while this call waited`, ...by };
      options.beforeAsk();
      let answer: PromptAnswer;
      try {
        const shown: PromptRequest = { name: call.name, input: call.input };
        if (everyTime !== undefined) shown.everyTime = everyTime;
        if (request.caller !== undefined) shown.program = programLine(request.session, request.caller);
        answer = await ask(options, shown, signal);
      } finally {
        options.afterAsk();
      }
      if (answer.type === "deny") {
        // The reason as typed: the record says a human decided, the result reads `Rejected: <reason>`.
        const reason = answer.reason.trim();
        return reason === "" ? { approved: false, ...by } : { approved: false, reason, ...by };
      }
      if (answer.type === "once") return { approved: true, ...by };
      options.allowAlways(call.name);
      return { approved: true, reason: `"always": ${call.name} is allowed for the rest of the session`, ...by };
    });
}

// Which program a call comes from: its code call's id and the first line of its code (the
// model's text: made visible and cut here, before it reaches the terminal).
function programLine(session: Session, caller: string): string {
  const codeCall = session.messages.findLast((message) => isToolCall(message) && message.id === caller);
  const code = codeCall !== undefined && isToolCall(codeCall) ? codeCall.input.code : undefined;
  const first = typeof code === "string" ? (code.split("\n").find((line) => line.trim() !== "") ?? "").trim() : "";
  const shown = first.length > 120 ? `${first.slice(0, 120)}…` : first;
  return `called by the program of ${caller}${shown === "" ? "" : `: ${shown}`}`;
}

// The reason of the rule that asked for a human: such a call is asked every time (no allow overrides an ask).
function askedByRule(consulted: readonly ConsultedLink[] | undefined): string | undefined {
  const rule = consulted?.find((link) => link.by === "rule");
  if (rule === undefined || rule.by !== "rule") return undefined;
  return rule.reason ?? `rule ${JSON.stringify(rule.rule)} asks about it every time`;
}

async function ask(options: TerminalAskerOptions, request: PromptRequest, signal: AbortSignal): Promise<PromptAnswer> {
  const { input, out, style } = options;
  const name = visibleLine(request.name);
  const lines = previewLines(request.name, request.input, style);
  const shown = condense(lines, style);
  // A command is shown once, whole, in the lines below: the heading names the tool only.
  const target = request.name === "bash" ? "" : describeTarget(request.name, request.input);
  // terminal-safe: previewLines makes every line of the preview visible before `condense` cuts it.
  out.write(`${style.bold(`● ${name}${target}`)}\n${shown.text}`);
  if (request.program !== undefined) out.write(`${style.dim(`  ↳ ${visibleLine(request.program)}`)}\n`);
  if (request.everyTime !== undefined) out.write(`${style.yellow(`  ⚠ ${visibleLine(request.everyTime)}`)}\n`);
  const interrupted = (): PromptAnswer => {
    if (!signal.aborted) options.onInterrupt();
    return { type: "deny", reason: "the task was interrupted" };
  };
  const keys = [
    "[y] yes once",
    ...(request.everyTime === undefined ? [`[a] always for ${name}`] : []),
    "[n] no",
    ...(shown.condensed ? ["[v] view all"] : []),
  ];
  for (;;) {
    const answer = await input.key(
      `${style.yellow("?")} Allow ${name}? ${style.dim(`${keys.join(" · ")} (press a key)`)} `,
      {
        signal,
      },
    );
    if (answer.type === "interrupt") return interrupted();
    if (answer.type === "end") return { type: "deny", reason: "no answer" };
    const key = answer.key.toLowerCase();
    if (key === "y") return { type: "once" };
    if (key === "a" && request.everyTime === undefined) return { type: "always" };
    if (key === "v" && shown.condensed) {
      // terminal-safe: `lines` are previewLines', each made visible.
      out.write(render(lines));
      continue;
    }
    if (key === "n") {
      const reason = await input.question(`  ${style.dim("Why? (sent to the model; Enter to skip)")} `, { signal });
      if (reason.type === "interrupt") return interrupted();
      return { type: "deny", reason: reason.type === "line" ? reason.text : "" };
    }
    out.write(
      style.dim(
        `  Press ${request.everyTime === undefined ? "y, a or n" : "y or n"}${shown.condensed ? " (v to view all)" : ""}.\n`,
      ),
    );
  }
}

/** Up to this many lines, of up to `longLine` characters, are shown whole; past it, the first and last `endLines`. */
const wholeLines = 60;
const endLines = 20;
const longLine = 400;

/** One line of a preview: its text (escaped) and how it is styled. */
type PreviewLine = { text: string; mark: (text: string) => string };

// Everything the call would do, one display line each, escaped.
function previewLines(name: string, input: JsonObject, style: Style): PreviewLine[] {
  const lines = (value: unknown): string[] =>
    typeof value === "string" ? value.replace(/\n$/, "").split("\n").map(visibleLine) : [];
  const plain = (text: string): string => text;
  switch (name) {
    case "bash":
      return lines(input.command).map((line) => ({ text: `  $ ${line}`, mark: plain }));
    case "edit":
      return [
        ...lines(input.oldText).map((line) => ({ text: `  - ${line}`, mark: style.red })),
        ...lines(input.newText).map((line) => ({ text: `  + ${line}`, mark: style.green })),
      ];
    case "write": {
      const content = lines(input.content);
      return [
        { text: `  ${content.length} ${content.length === 1 ? "line" : "lines"}`, mark: style.dim },
        ...content.map((line) => ({ text: `  │ ${line}`, mark: style.dim })),
      ];
    }
    default:
      return JSON.stringify(input, null, 2)
        .split("\n")
        .map((line) => ({ text: `  ${visibleLine(line)}`, mark: style.dim }));
  }
}

function render(lines: PreviewLine[]): string {
  return lines.map((line) => `${line.mark(line.text)}\n`).join("");
}

// A preview that fits is shown whole; a longer one shows its start and its end (where a
// dangerous last line would hide), long lines cut, and says that `v` shows everything.
function condense(lines: PreviewLine[], style: Style): { text: string; condensed: boolean } {
  if (lines.length <= wholeLines && lines.every((line) => line.text.length <= longLine))
    return { text: render(lines), condensed: false };
  const cut = (line: PreviewLine): string =>
    line.text.length > longLine
      ? `${line.mark(line.text.slice(0, longLine))}${style.yellow(`… (${line.text.length - longLine} more characters)`)}\n`
      : `${line.mark(line.text)}\n`;
  if (lines.length <= wholeLines)
    return {
      text: `${lines.map(cut).join("")}${style.yellow("  (long lines cut: press v to view all)")}\n`,
      condensed: true,
    };
  const hidden = lines.length - 2 * endLines;
  return {
    text: `${lines.slice(0, endLines).map(cut).join("")}${style.yellow(`  … ${hidden} more lines here: press v to view all`)}\n${lines.slice(-endLines).map(cut).join("")}`,
    condensed: true,
  };
}
