import type { Style } from "../ansi.ts";
import type { CliMcp } from "../mcp-tools.ts";
import type { ModelControl } from "../model-control.ts";
import type { ModeControl } from "../permission-mode.ts";
import type { TaskContext } from "../run-task.ts";
import type { SessionControl } from "../session-control.ts";
import type { TerminalInput } from "../terminal-input.ts";

/**
 * A command of the interactive prompt: `/name argument`. Each lives in its own file and is listed
 * in `slashCommands` (`./index.ts`), which `/help` and Tab completion read.
 */
export type SlashCommand = {
  /** Without the slash: lowercase letters, digits and dashes. */
  name: string;
  /** Other names that run it (`/quit` for `/exit`); not listed by Tab completion. */
  aliases?: readonly string[];
  /** How its argument is shown in `/help` (`<name>`, `[id]`); absent: it takes none. */
  argument?: string;
  /** One line for `/help`. */
  summary: string;
  /** Runs it; `argument` is the rest of the line, trimmed (may be ""). Reports problems on `out`, never throws. */
  run: (argument: string, context: CommandContext) => Promise<CommandOutcome>;
};

/** What the prompt does after a command: read the next line, or end the CLI with `code`. */
export type CommandOutcome = { type: "continue" } | { type: "exit"; code: number };

/** What a command can see and change. */
export type CommandContext = {
  /** What tasks run with: the model, the session, the tools. */
  task: TaskContext;
  input: TerminalInput;
  out: NodeJS.WritableStream;
  style: Style;
  /** Every command, for `/help`. */
  commands: readonly SlashCommand[];
  sessions: SessionControl;
  models: ModelControl;
  /** The permission mode (Shift-Tab cycles it at the prompt). */
  modes: ModeControl;
  /** Runs the rewind dialog on the current session: to before user turn `turn`, else one asked for. */
  rewind: (turn?: number) => Promise<void>;
  /** The MCP servers connected (`/mcp`); absent: none were configured. */
  mcp?: CliMcp;
};

/** The outcome of a command that lets the prompt go on. */
export const goOn: CommandOutcome = { type: "continue" };
