import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { errorMessage } from "../errors.ts";
import { checkChoice } from "../numeric-options.ts";
import { CliError } from "./cli-error.ts";
import { checkModelName } from "./model-name.ts";
import { parsePermissionMode, type PermissionMode } from "./permission-mode.ts";
import { parseAllowedHost, type AllowedHost } from "./sandbox/allowed-hosts.ts";
import { sandboxModes, type SandboxMode } from "./sandbox/command-sandbox.ts";
import { closestName } from "./closest-name.ts";

/** The providers `--provider` accepts. `auto`: the environment's, else the offline demo. */
export const providerNames = ["anthropic", "openai", "openai-responses", "gemini", "bedrock", "demo", "auto"] as const;
export type ProviderName = (typeof providerNames)[number];

/** What the command line asks for. */
export type CliArgs = { command: "help" } | { command: "version" } | ViewArgs | RunArgs;

/** `path`: a session file, a directory of them, a session id, or a database store's session (`postgres://…/<database>/<id>`, `sqlite:<file>/<id>`); absent: the CLI's sessions directory. */
export type ViewArgs = { command: "view"; path?: string; port?: number; host?: string };

export type RunArgs = {
  command: "run";
  /** The task; absent: an interactive prompt (or the task read from a non-terminal stdin). */
  task?: string;
  provider?: ProviderName;
  model?: string;
  /** The workspace directory (default: the current directory). */
  cwd?: string;
  /** Continue a session: `{}` for the latest of this workspace, `{ id }` for that one. */
  resume?: { id?: string };
  /**
   * `--rewind [n]`: rewind the resumed session (`--resume`'s, else the latest of this workspace)
   * to before its user turn `n` (else the turns are listed and one is asked for), files included.
   */
  rewind?: { turn?: number };
  /** Tools that run without asking: `all` (`--yes`), or names from `--allow`. */
  allow: "all" | string[];
  json: boolean;
  mcpConfig?: string;
  /** At most this many model calls per task. */
  maxTurns: number;
  /**
   * `--record <path>`: the model's answers and the tools' results are written to a cassette;
   * `--replay <path>`: the run answers from it, offline, without running the tools again.
   */
  cassette?: { mode: "record" | "replay"; path: string };
  /** The model's context window in tokens (`--context-window`); default: the provider's usual one. */
  contextWindow?: number;
  /** Workspace files attached to the (first) task (`--attach`, repeatable). */
  attach?: string[];
  /** `--max-cost <usd>`: the most this run may spend on the model, across its tasks, at the CLI's list prices. */
  maxCostUsd?: number;
  /** `--mode`: how tool calls are allowed (default `default`); Shift-Tab changes it at the prompt. */
  mode?: PermissionMode;
  /** `--policy <file.json>`: approval rules added to the mode's (see docs/cli.md). */
  policy?: string;
  /** `--sandbox`: where `bash` commands run (default: `workspace-write` where bwrap works). */
  sandbox?: SandboxMode;
  /** `--allow-network`: sandboxed commands keep the network (absent: they have none). */
  allowNetwork?: boolean;
  /** `--code-mode`: the model also gets `run_code`, a program calling the tools (see docs/code-mode.md). */
  codeMode?: boolean;
  /** `--allow-host` (repeatable, comma-separated): the hosts sandboxed commands reach through the CLI's proxy. */
  allowHosts?: AllowedHost[];
};

export const usage = `Usage: simple-agent-loop [options] [task]
       simple-agent-loop view [session.jsonl | directory | id] [--port <n>] [--host <address>]
       simple-agent-loop mcp login|logout <server> [--mcp-config <file>] [-C <dir>]
       simple-agent-loop policy [--mode <mode>] [--policy <file>] [--json]
       simple-agent-loop cassette diff <a.jsonl> <b.jsonl>

A coding agent in your terminal. With a task, it runs that task and exits; without one, it
starts an interactive prompt (one session, many tasks; /exit or Ctrl-D to leave). It works in
the workspace directory: read, grep and list run freely; write, edit and bash ask first.
AGENTS.md and CLAUDE.md, from the workspace up to the repository's root, go into the
system prompt.
view serves a web page of a session (default: every session of the CLI).
mcp login signs in to an MCP server (OAuth) ahead of time; mcp logout forgets its tokens.
policy prints the approval policy a run would use (the mode's preset and the file's rules).
cassette diff says what changed between two recordings (--record); exit 1 when they differ.

Options:
  -p, --provider <name>  anthropic, openai, openai-responses, gemini, bedrock, demo, or auto
                         (default: from the environment; auto: the environment's, else demo)
  -m, --model <name>     the model (default: ANTHROPIC_MODEL, OPENAI_MODEL or GEMINI_MODEL,
                         else the provider's usual one)
  -C, --cwd <dir>        the workspace (default: the current directory); the file tools
                         cannot reach outside it
  -r, --resume [id]      continue session <id>, or without one (last, or before -- and a
                         task) the latest session of this workspace
      --rewind [n]       rewind that session (--resume's, else the latest) to before its
                         turn n, files the agent wrote or edited included: lists the turns
                         (without n), shows what changes and asks first; with a task, runs
                         it after. Without a terminal: --rewind <n> --yes
      --allow <tools>    run these tools without asking, comma-separated (e.g. edit,write)
  -y, --yes              run every tool without asking
      --mode <mode>      default (write, edit, bash and MCP tools ask), accept-edits (write
                         and edit run, the rest asks), plan (read-only tools; the model
                         proposes a plan you accept first) or yolo (nothing asks: use it with
                         the sandbox); Shift-Tab switches at the prompt. Writes where code
                         runs from (.git, hooks, the CLI's config) ask in every mode
      --policy <file>    approval rules (JSON { "rules": [...] }) added to the mode's: allow,
                         ask or deny calls by tool and input; "simple-agent-loop policy
                         --policy <file> --json" prints the result
      --json             JSONL events on stdout, for scripts; never asks: a call no rule
                         allows is denied (use --allow, --yes, --mode or --policy)
      --mcp-config <file>  MCP servers to use (default: <workspace>/.simple-agent-loop/mcp.json)
      --max-turns <n>    at most n model calls per task (default 100)
      --record <file>    record the model's answers and the tools' results to a cassette
      --replay <file>    rerun a recorded session offline from its cassette (no model, no tools)
      --context-window <tokens>  the model's context window; past 80% of it, older turns
                         are summarized (default: the provider's usual window)
      --attach <file>    attach a workspace file to the (first) task: images (png, jpeg,
                         gif, webp) and PDFs as they are, other files as text; repeatable.
                         @path in a task attaches that file too
      --max-cost <usd>   stop once this run's model calls cost more than this (list prices
                         of simple-agent-loop/prices; the model must have one); /cost shows it
      --sandbox <mode>   where bash commands run: workspace-write (default: only the
                         workspace is writable, no network, home secrets hidden),
                         read-only, or off (unconfined); needs bwrap (bubblewrap) on Linux
      --allow-network    sandboxed bash commands may use the network
      --code-mode        the model may also write a program that calls the tools (run_code),
                         each call checked and approved as a direct one
      --allow-host <host>  sandboxed bash commands may reach this host over HTTP(S), through
                         a proxy (any port, or host:port; *.domain for its subdomains);
                         repeatable or comma-separated; other hosts are refused
  -h, --help             this help
  -v, --version          the version

Environment:
  ANTHROPIC_API_KEY, OPENAI_API_KEY, or OPENAI_BASE_URL (an OpenAI-compatible server, e.g.
  http://localhost:11434/v1 for Ollama) choose the provider; GEMINI_API_KEY and AWS credentials
  serve --provider gemini and bedrock. SIMPLE_AGENT_LOOP_HOME (default ~/.simple-agent-loop)
  holds the sessions.

bash runs in a bubblewrap sandbox where it can (see --sandbox); without one, a command can do
anything you can, and each one is asked about.
Ctrl-C interrupts a task; a second Ctrl-C, or one at the prompt, exits.
Exit codes: 0 done, 1 error, 2 usage, 130 interrupted.`;

/** Reads the command line (without `node` and the script). Throws a usage `CliError` for anything it cannot make sense of. */
export function parseCliArgs(argv: readonly string[]): CliArgs {
  // Help wins over everything, even arguments it would otherwise refuse.
  const options = argv.includes("--") ? argv.slice(0, argv.indexOf("--")) : argv;
  if (options.includes("--help") || options.includes("-h")) return { command: "help" };
  let parsed;
  try {
    parsed = parseArgs({ args: withResumeValue(argv), allowPositionals: true, strict: true, options: optionSpecs });
  } catch (error) {
    throw new CliError(parseProblem(error), "usage");
  }
  const { values, positionals } = parsed;
  if (values.help === true) return { command: "help" };
  if (values.version === true) return { command: "version" };
  if (positionals[0] === "view") return viewArgs(positionals.slice(1), values);
  if (values.port !== undefined || values.host !== undefined)
    throw new CliError("--port and --host go with view", "usage");
  const args: RunArgs = {
    command: "run",
    allow: values.yes === true ? "all" : allowList(values.allow ?? []),
    json: values.json === true,
    maxTurns: 100,
  };
  if (positionals.length > 0) {
    const task = positionals.join(" ").trim();
    if (task === "") throw new CliError("the task is empty", "usage");
    args.task = task;
  }
  if (values.provider !== undefined) {
    const provider = providerNames.find((name) => name === values.provider);
    if (provider === undefined)
      throw new CliError(`unknown provider ${values.provider}: use one of ${providerNames.join(", ")}`, "usage");
    args.provider = provider;
  }
  if (values.model !== undefined) args.model = checkModelName(values.model, "--model");
  if (values.cwd !== undefined) args.cwd = values.cwd;
  if (values.resume !== undefined) args.resume = values.resume === "" ? {} : { id: values.resume };
  if (values.rewind !== undefined) {
    if (args.json) throw new CliError("--rewind asks before it changes files; it does not go with --json", "usage");
    args.rewind = values.rewind === "" ? {} : { turn: positiveInteger(values.rewind, "--rewind") };
    args.resume ??= {};
  }
  if (values["mcp-config"] !== undefined) args.mcpConfig = values["mcp-config"];
  if (values.record !== undefined && values.replay !== undefined) {
    throw new CliError("--record and --replay cannot go together", "usage");
  }
  if (values.record !== undefined) args.cassette = { mode: "record", path: values.record };
  if (values.replay !== undefined) args.cassette = { mode: "replay", path: values.replay };
  if (values.attach !== undefined) args.attach = values.attach;
  if (values["max-turns"] !== undefined) args.maxTurns = positiveInteger(values["max-turns"], "--max-turns");
  if (values["context-window"] !== undefined)
    args.contextWindow = positiveInteger(values["context-window"], "--context-window");
  if (values.mode !== undefined) args.mode = parsePermissionMode(values.mode);
  if (values.policy !== undefined) args.policy = values.policy;
  if (values["max-cost"] !== undefined) args.maxCostUsd = dollars(values["max-cost"], "--max-cost");
  if (values.sandbox !== undefined) args.sandbox = sandboxMode(values.sandbox);
  if (values["allow-network"] === true) args.allowNetwork = true;
  if (values["code-mode"] === true) args.codeMode = true;
  if (values["allow-host"] !== undefined) args.allowHosts = allowedHosts(values["allow-host"]);
  if (args.allowNetwork === true && args.allowHosts !== undefined)
    throw new CliError(
      "--allow-network and --allow-host do not go together: --allow-network already allows every host",
      "usage",
    );
  return args;
}

const optionSpecs = {
  provider: { type: "string", short: "p" },
  model: { type: "string", short: "m" },
  cwd: { type: "string", short: "C" },
  resume: { type: "string" },
  rewind: { type: "string" },
  allow: { type: "string", multiple: true },
  yes: { type: "boolean", short: "y" },
  json: { type: "boolean" },
  "mcp-config": { type: "string" },
  "max-turns": { type: "string" },
  "context-window": { type: "string" },
  attach: { type: "string", multiple: true },
  "max-cost": { type: "string" },
  mode: { type: "string" },
  policy: { type: "string" },
  record: { type: "string" },
  replay: { type: "string" },
  sandbox: { type: "string" },
  "allow-network": { type: "boolean" },
  "code-mode": { type: "boolean" },
  "allow-host": { type: "string", multiple: true },
  port: { type: "string" },
  host: { type: "string" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean", short: "v" },
} as const;

// parseArgs's own messages speak of positional arguments and quote unevenly; the user gets one
// line in the CLI's words (the caller adds where to find the options).
function parseProblem(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  const message = error instanceof Error ? error.message : String(error);
  const quoted = /'([^']+)'/.exec(message)?.[1] ?? "";
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") {
    const near = closestOption(quoted);
    return `unknown option ${quoted}${near === undefined ? "" : ` (did you mean ${near}?)`}; a task that starts with - goes after --`;
  }
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") {
    const name = /--[\w-]+/.exec(quoted)?.[0] ?? quoted;
    return message.includes("argument missing") ? `${name} needs a value` : `${name} takes no value`;
  }
  return `cannot read the command line: ${message}`;
}

function closestOption(unknown: string): string | undefined {
  if (!unknown.startsWith("--")) return undefined;
  const near = closestName(unknown.slice(2).split("=")[0]!, Object.keys(optionSpecs));
  return near === undefined ? undefined : `--${near}`;
}

/** The version of the package this CLI belongs to. */
export function cliVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
    version?: string;
  };
  return manifest.version ?? "unknown";
}

// `--resume` takes an optional id, which parseArgs cannot express: the next argument, when there
// is one and it is not an option (nor `--`), is always the id, whatever it looks like (a mistyped
// id is refused by name, never sent to the model as a task with the latest session resumed).
// `--resume` stands alone at the end, before another option or before `--`: `--resume -- "go on"`
// continues the latest session with a task. `--rewind` takes a turn number the same way, but only
// digits (a task is never only digits).
function withResumeValue(argv: readonly string[]): string[] {
  const args: string[] = [];
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index]!;
    if (arg === "--") {
      args.push(...argv.slice(index));
      break;
    }
    const next = argv[index + 1];
    if (arg === "--rewind") {
      if (next !== undefined && /^\d{1,9}$/.test(next)) {
        args.push(`--rewind=${next}`);
        index++;
      } else args.push("--rewind=");
      continue;
    }
    if (arg !== "--resume" && arg !== "-r") {
      args.push(arg);
      continue;
    }
    if (next !== undefined && !next.startsWith("-")) {
      args.push(`--resume=${next}`);
      index++;
    } else args.push("--resume=");
  }
  return args;
}

function viewArgs(rest: string[], values: { port?: string | undefined; host?: string | undefined }): ViewArgs {
  if (rest.length > 1) throw new CliError("view takes one session file, directory or session id", "usage");
  const args: ViewArgs = { command: "view" };
  if (rest[0] !== undefined) args.path = rest[0];
  if (values.port !== undefined) args.port = positiveInteger(values.port, "--port", true);
  if (values.host !== undefined) args.host = values.host;
  return args;
}

function allowList(values: string[]): string[] {
  return values
    .flatMap((value) => value.split(","))
    .map((name) => name.trim())
    .filter((name) => name !== "");
}

function sandboxMode(value: string): SandboxMode {
  try {
    checkChoice("--sandbox", value, sandboxModes);
  } catch (error) {
    throw new CliError(errorMessage(error), "usage");
  }
  return value as SandboxMode;
}

function allowedHosts(values: readonly string[]): AllowedHost[] {
  try {
    return allowList([...values]).map(parseAllowedHost);
  } catch (error) {
    throw new CliError(errorMessage(error), "usage");
  }
}

// Digits only: Number() would also take "", " 5", "0x10" and "1e3".
function positiveInteger(text: string, option: string, zeroAllowed = false): number {
  const value = /^[0-9]{1,15}$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < (zeroAllowed ? 0 : 1))
    throw new CliError(`${option} needs a ${zeroAllowed ? "non-negative" : "positive"} integer, got ${text}`, "usage");
  return value;
}

// An amount in USD: digits with an optional fraction ("0.50", "2"), above zero; no sign, exponent or "$".
function dollars(text: string, option: string): number {
  const value = /^[0-9]{1,9}(\.[0-9]{1,6})?$/.test(text) ? Number(text) : Number.NaN;
  if (!(value > 0)) throw new CliError(`${option} needs an amount in USD above 0 (e.g. 0.50), got ${text}`, "usage");
  return value;
}
