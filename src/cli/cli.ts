import { homedir, userInfo } from "node:os";
import { describeContent, type ContentPart } from "../content-parts.ts";
import { errorMessage } from "../errors.ts";
import type { Message, Session } from "../session.ts";
import { blobDirectory, fileBlobStore, type BlobStore } from "../store/blobs.ts";
import { priceOf } from "../model/cost.ts";
import { modelPrices, modelPricesDate } from "../prices/index.ts";
import type { Tool } from "../tools/tool.ts";
import type { ToolCallMessage } from "../session.ts";
import { createStyle, useColor, type Style } from "./ansi.ts";
import { cliVersion, parseCliArgs, usage, type RunArgs } from "./args.ts";
import { terminalElicitation } from "./ask-elicitation.ts";
import { askHeldTool } from "./ask-held-tool.ts";
import { askMcpTrust } from "./ask-mcp-trust.ts";
import { signInOpener } from "./mcp-sign-in.ts";
import { loopToolName } from "../mcp/mcp-tools.ts";
import { askingOrder } from "./asking-order.ts";
import { checkpointRecorder, pendingCheckpointEntry, pendingCheckpoints, type FileCheckpoint } from "./checkpoints.ts";
import { appendEntry, loadEntries } from "../store/index.ts";
import { rewindDialog, type RewindDialog } from "./rewind-command.ts";
import { rewindMarker } from "./rewind-marker.ts";
import { rewindRecovery, withRewindRecovery } from "./rewind-recovery.ts";
import { runCassetteCommand } from "./cassette-command.ts";
import { cassette, readCassette } from "../testing/cassette.ts";
import { existsSync } from "node:fs";
import { terminalAsker, type TerminalAskerOptions } from "./ask-permission.ts";
import { CliError, isCliError } from "./cli-error.ts";
import { interactive } from "./interactive.ts";
import { terminalPlanAsker } from "./ask-plan.ts";
import { modeToolOffer } from "./mode-tools.ts";
import { beforeAsking } from "./before-asking.ts";
import { withDenialHints } from "./denial-hints.ts";
import { cliPolicy, type CliPolicy } from "./cli-policy.ts";
import { modeControl, type ModeControl, type PermissionMode } from "./permission-mode.ts";
import { planTool } from "./plan-tool.ts";
import { jsonOutput } from "./json-output.ts";
import { modelControl } from "./model-control.ts";
import { runMcpCommand } from "./mcp-command.ts";
import { connectMcpTools, type CliMcp } from "./mcp-tools.ts";
import { runPolicyCommand } from "./policy-command.ts";
import { protectedTargets } from "./protected-targets.ts";
import { selectModel, type SelectedModel } from "./provider.ts";
import { runTask, type TaskContext } from "./run-task.ts";
import { cliHome } from "./cli-home.ts";
import { launchCommand } from "./launch-command.ts";
import { cliStore, openCliSession, type CliSession } from "./sessions.ts";
import { onSessionSwitch, sessionControl, type SessionControl } from "./session-control.ts";
import { createShutdown, type Shutdown } from "./shutdown.ts";
import { systemPrompt, workspaceMovedPrompt } from "./system-prompt.ts";
import { maxInstructionBytes, readProjectInstructions, type InstructionFile } from "./project-instructions.ts";
import { exitCodeOf, type TaskOutput } from "./task-output.ts";
import { terminalInput, type TerminalInput } from "./terminal-input.ts";
import { promptHistory } from "./prompt-history.ts";
import { terminalOutput } from "./terminal-output.ts";
import { taskContent } from "./attachments.ts";
import { describeAttachments } from "./attachment-lines.ts";
import { replaySession } from "./session-replay.ts";
import {
  checkToolCall,
  codingTools,
  createWorkspace,
  killRunningCommands,
  workspaceRoot,
  type Workspace,
} from "./tools/index.ts";
import { codeOf } from "./tools/workspace-path.ts";
import { runView } from "./view.ts";
import { cliSandbox, type CliSandbox } from "./sandbox/cli-sandbox.ts";
import type { CommandSandbox } from "./sandbox/command-sandbox.ts";
import { visibleJson, visibleLine, visibleText } from "./visible-text.ts";

/** The process around the CLI, passed in so the CLI itself holds no globals. */
export type CliIo = {
  argv: readonly string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
  stdin: NodeJS.ReadStream;
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  /**
   * The command that starts this CLI where the user is, for the commands it prints (`npm start --`
   * from `npm start`); absent: found from the environment (`launchCommand`).
   */
  launchedAs?: string;
};

/**
 * The `simple-agent-loop` command: parses the arguments and runs the agent (one task, or the
 * interactive prompt) or the session viewer. Resolves with the exit code: 0 done, 1 error, 2
 * usage, 130 interrupted. Errors are reported on stderr as one line, never thrown.
 */
export async function runCli(io: CliIo): Promise<number> {
  let json = false;
  try {
    if (io.argv[0] === "cassette") return await runCassetteCommand(io.argv.slice(1), io);
    if (io.argv[0] === "policy") return runPolicyCommand(io.argv.slice(1), io);
    if (io.argv[0] === "mcp") return await runMcpCommand(io.argv.slice(1), io);
    const args = parseCliArgs(io.argv);
    json = args.command === "run" && args.json;
    if (args.command === "help") {
      io.stdout.write(`${usage}\n`);
      return 0;
    }
    if (args.command === "version") {
      io.stdout.write(`${visibleLine(cliVersion())}\n`);
      return 0;
    }
    if (args.command === "view") return await runView(args, io);
    return await runAgent(args, io);
  } catch (error) {
    const usageHint =
      isCliError(error) && error.exitCode === 2
        ? `\nRun ${visibleLine(launchCommand(io.env, io.launchedAs))} --help for the options.`
        : "";
    io.stderr.write(`simple-agent-loop: ${visibleText(errorMessage(error))}${usageHint}\n`);
    // Scripts are promised a last line saying how the run ended, also when it could not start.
    if (json) io.stdout.write(`${visibleJson({ type: "error", outcome: "error", message: errorMessage(error) })}\n`);
    return isCliError(error) ? error.exitCode : 1;
  }
}

async function runAgent(args: RunArgs, io: CliIo): Promise<number> {
  const setup = await agentSetup(args, io);
  const { workspace, input } = setup;
  const shutdown = createShutdown(io.stderr);
  shutdown.add(killRunningCommands);
  const interrupts: InterruptRoute = { handler: undefined };
  attachToProcess(io, shutdown, interrupts);
  try {
    const style = createStyle(!args.json && useColor(io.stdout, io.env));
    const recover = rewindRecovery({
      root: workspace,
      home: cliHome(io.env),
      store: cliStore(io.env),
      style,
      out: args.json ? io.stderr : io.stdout,
    });
    const sessions = withRewindRecovery(await openSessions(args, io, setup, shutdown), recover.session);
    const opened = sessions.current();
    // A rewind a crash cut short is finished before anything else uses the session, and said so.
    await (opened.resumed ? recover.session(opened) : recover.marked(opened.id));
    announce(io, args.json, style, { version: setup.version, workspace, selected: setup.selected, opened });
    const sandboxChoice = await setup.sandbox;
    if (sandboxChoice.warning !== undefined) io.stderr.write(`${visibleText(sandboxChoice.warning)}\n`);
    const around = { shutdown, interrupts, shown: {} as { output?: TaskOutput } };
    const mcp = await connectMcp(args, io, { ...setup, sandbox: sandboxChoice.sandbox }, style, around);
    // Every write and edit keeps what it replaced in the session's blobs, for a rewind.
    // The blobs go beside the session in use, which /clear and /resume change.
    const checkpoints = checkpointRecorder(
      { write: (bytes) => sessionBlobs(sessions).write(bytes) },
      { pending: (callId, checkpoint) => recordPending(sessions.current().stored(), callId, checkpoint) },
    );
    const files = createWorkspace(workspace, { onFileChange: checkpoints.onFileChange });
    const sandbox = sandboxChoice.sandbox;
    const output = taskOutput(args, io, style, { sessionId: opened.id, terminal: input !== undefined });
    around.shown.output = output;
    const prompt = input === undefined ? undefined : terminalPrompt({ input, io, style, output, interrupts });
    const policy = runPolicy({ args, io, prompt, mcp, sandbox: sandboxChoice });
    const modes = permissionModes(args, io, sandboxChoice, policy.setMode);
    const coding = codingTools(workspace, {
      workspace: files,
      ...(sandbox === undefined ? {} : { bash: { sandbox } }),
    });
    const plan = planTool({ modes, ...(prompt === undefined ? {} : { ask: terminalPlanAsker(prompt) }) });
    // The MCP servers' tools as they are when each task starts (a server may change them meanwhile).
    const tools = (): Tool[] => [...coding, ...mcp.tools(), plan];
    warnUnknownAllowed(args, io, tools());
    const context = taskContext({
      args,
      io,
      setup,
      sessions,
      style,
      shutdown,
      interrupts,
      mcp,
      tools,
      output,
      files,
      checkpoints,
      policy,
      modes,
    });
    const models = modelControl({
      first: setup.selected,
      choose: (model) => {
        checkPriced(model, args, "/model");
        return selectModel({ ...args, provider: setup.selected.provider, model }, io.env);
      },
      ...(args.cassette === undefined
        ? {}
        : { refusal: "/model: a cassette answers in the order it was recorded; the model cannot change" }),
      onChange: (selected) => {
        context.invokeModel = selected.invokeModel;
        context.model = selected.model;
      },
    });
    const rewind = rewinder({ args, io, setup, sessions, style, mcp });
    // "always" answers hold for the session they were given in.
    const switching = onSessionSwitch(sessions, policy.forgetAlways);
    if (args.rewind !== undefined) await rewind(args.rewind.turn);
    // No task means stdin is a terminal (otherwise the task came from stdin, or --rewind was the job).
    const code =
      setup.task !== undefined
        ? exitCodeOf(await runTask(context, setup.task))
        : input !== undefined
          ? await interactive(
              { task: context, input, out: io.stdout, style, sessions: switching, models, modes, rewind, mcp },
              workspace,
            )
          : 0;
    sayHowToGoOn(args, io, style, { session: sessions.current(), workspace });
    return code;
  } finally {
    await shutdown.run();
  }
}

// However the session ended (done, failed, Ctrl-C, /exit), the command that goes on with it.
function sayHowToGoOn(args: RunArgs, io: CliIo, style: Style, last: { session: CliSession; workspace: string }): void {
  const { session, workspace } = last;
  if (session.stored() === undefined || args.json) return;
  const command = resumeCommand(
    launchCommand(io.env, io.launchedAs),
    session.id,
    args.cwd === undefined ? undefined : workspace,
  );
  io.stdout.write(style.dim(`To go on with this session: ${command}\n`));
}

// JSONL for --json, else lines on the terminal; without one, denials say on stderr which flags allow the tool.
function taskOutput(args: RunArgs, io: CliIo, style: Style, run: { sessionId: string; terminal: boolean }): TaskOutput {
  const shown = args.json
    ? jsonOutput(io.stdout, { sessionId: run.sessionId })
    : terminalOutput(io.stdout, io.stderr, style);
  return run.terminal ? shown : withDenialHints(shown, io.stderr);
}

// What every question asked on this terminal shares: the run's output pauses while it waits, and
// Ctrl-C reaches the task's interrupt.
function terminalPrompt(parts: {
  input: TerminalInput;
  io: CliIo;
  style: Style;
  output: { pause: () => void; resume: () => void };
  interrupts: InterruptRoute;
}): TerminalAskerOptions {
  const { input, io, style, output, interrupts } = parts;
  return {
    input,
    out: io.stdout,
    style,
    beforeAsk: output.pause,
    afterAsk: output.resume,
    onInterrupt: () => interrupts.handler?.(),
  };
}

// The blobs of the session in use, where its checkpoints keep what files held.
function sessionBlobs(sessions: { current: () => { path: string } }): BlobStore {
  return fileBlobStore(blobDirectory(sessions.current().path), { sync: true });
}

// `/rewind` and `--rewind`: the session in use rewound to before a user turn, files included.
function rewinder(parts: {
  args: RunArgs;
  io: CliIo;
  setup: AgentSetup;
  sessions: { current: () => Parameters<typeof rewindIn>[0] & { path: string; id: string } };
  style: Style;
  mcp: Parameters<typeof cliProtectedTargets>[2];
}): (turn?: number) => Promise<void> {
  const { args, io, setup, sessions, style, mcp } = parts;
  return (turn) =>
    rewindIn(sessions.current(), {
      root: setup.workspace,
      blobs: sessionBlobs(sessions),
      out: io.stdout,
      style,
      ...(setup.input === undefined ? {} : { input: setup.input }),
      ...(turn === undefined ? {} : { turn }),
      yes: args.allow === "all",
      alwaysAsk: cliProtectedTargets(io, setup.workspace, mcp),
      marker: rewindMarker(cliHome(io.env), setup.workspace, sessions.current().id),
    });
}

/**
 * What the agent runs with, settled before anything is opened. `task` undefined: the interactive
 * prompt. `input` is the keyboard, set only when a human can be asked.
 */
type AgentSetup = {
  workspace: string;
  selected: SelectedModel;
  task: string | undefined;
  version: string;
  input: TerminalInput | undefined;
  /** Settled while the session opens (bwrap is probed meanwhile); awaited before the tools are made. */
  sandbox: Promise<CliSandbox>;
};

/** Where SIGINT goes: the running task's handler while a task watches for interrupts; otherwise the process exits. */
type InterruptRoute = { handler: (() => void) | undefined };

async function agentSetup(args: RunArgs, io: CliIo): Promise<AgentSetup> {
  // Never rejects; probing bwrap takes a process start, so it runs while the rest starts.
  const sandbox = cliSandbox({
    mode: args.sandbox,
    allowNetwork: args.allowNetwork === true,
    allowHosts: args.allowHosts ?? [],
    environment: io.env,
    cliHome: cliHome(io.env),
  });
  const workspace = await workspaceRoot(args.cwd ?? io.cwd).catch((error: unknown) => {
    throw new CliError(errorMessage(error));
  });
  const selected = withCassette(selectModel(args, io.env), args);
  checkPriced(selected.model, args, "--model");
  if (selected.note !== undefined) io.stderr.write(`${visibleText(selected.note)}\n`);
  const task =
    args.task ?? (io.stdin.isTTY === true || args.rewind !== undefined ? undefined : await readTask(io.stdin));
  if (task === undefined && args.json) throw new CliError("--json needs a task, as an argument or on stdin", "usage");
  if (args.cassette?.mode === "replay" && task !== undefined) checkReplayedTask(args.cassette.path, task);
  const version = cliVersion();
  // Asking needs a terminal, and --json promises scripts that nothing waits for a human.
  const input =
    !args.json && io.stdin.isTTY === true
      ? terminalInput(io.stdin, io.stdout, { history: promptHistory(cliHome(io.env), workspace) })
      : undefined;
  if (input === undefined && args.rewind !== undefined && (args.rewind.turn === undefined || args.allow !== "all"))
    throw new CliError(
      "--rewind without a terminal cannot ask: give the turn and confirm with --yes (--rewind 2 --yes)",
      "usage",
    );
  return { workspace, selected, task, version, input, sandbox };
}

/** Signals and broken output streams end the process through `shutdown`; the listeners go with it. */
function attachToProcess(io: CliIo, shutdown: Shutdown, interrupts: InterruptRoute): void {
  const signals: [NodeJS.Signals, () => void][] = [
    ["SIGINT", () => (interrupts.handler ?? (() => shutdown.exitNow(130)))()],
    ["SIGTERM", () => shutdown.exitNow(143)],
    ["SIGHUP", () => shutdown.exitNow(129)],
  ];
  for (const [signal, listener] of signals) process.on(signal, listener);
  shutdown.add(() => signals.forEach(([signal, listener]) => process.off(signal, listener)));
  // A reader that went away (`| head -1`) ends the run, as SIGPIPE ends other commands, instead
  // of an unhandled error; a closed stderr just loses the logs. Kept to the end of the process:
  // the last writes may fail after the run.
  io.stdout.on("error", (error) => shutdown.exitNow(codeOf(error) === "EPIPE" ? 141 : 1));
  io.stderr.on("error", () => undefined);
}

/** Opens (or resumes) the workspace's session, which `/clear` and `/resume` may replace; shutdown closes the last one. */
async function openSessions(args: RunArgs, io: CliIo, setup: AgentSetup, shutdown: Shutdown): Promise<SessionControl> {
  const { workspace, selected, version } = setup;
  const store = cliStore(io.env);
  const open = (resume?: { id?: string }): Promise<CliSession> =>
    openCliSession(store, {
      workspace,
      ...(resume === undefined ? {} : { resume }),
      // Read again for each new session (/clear): an edited AGENTS.md counts from the next one.
      systemPrompt: systemPrompt(workspace, new Date(), readProjectInstructions(workspace)),
      movedPrompt: (previous) => workspaceMovedPrompt(previous, workspace),
      details: { provider: selected.provider, model: selected.model, version },
      command: launchCommand(io.env, io.launchedAs),
    });
  const sessions = sessionControl({ store, workspace, first: await open(args.resume), open });
  shutdown.add(() => sessions.close());
  return sessions;
}

/**
 * Starts the MCP servers of `--mcp-config` (asking trust where it can); shutdown stops them. On a
 * terminal, a server's sign-in page is shown and opened, its questions are asked (holding back
 * the task's output, which exists only later: `shown`), and tools that changed since they were
 * trusted are asked about.
 */
async function connectMcp(
  args: RunArgs,
  io: CliIo,
  setup: Omit<AgentSetup, "sandbox"> & { sandbox: CommandSandbox | undefined },
  style: Style,
  around: { shutdown: Shutdown; interrupts: InterruptRoute; shown: { output?: TaskOutput } },
): Promise<CliMcp> {
  const { input } = setup;
  const { shutdown, interrupts, shown } = around;
  const signIn = signInOpener(io.stderr, style, io.env);
  shutdown.add(signIn.close);
  const mcp = await connectMcpTools(args.mcpConfig, {
    workspace: setup.workspace,
    cwd: io.cwd,
    version: setup.version,
    // A server's stderr would reach a terminal unescaped; its last lines still come with an error.
    quiet: input !== undefined || io.stderr.isTTY === true,
    home: cliHome(io.env),
    yes: args.allow === "all",
    env: io.env,
    ...(setup.sandbox === undefined ? {} : { sandbox: setup.sandbox }),
    style,
    warn: (line) => io.stderr.write(`${visibleText(line)}\n`),
    onToolsChanged: (line) => {
      const text = `${style.yellow(visibleLine(line))}\n`;
      // Above the question open on the terminal, else between the task's lines, else on stderr.
      if (input?.aside(text) === true) return;
      shown.output?.pause();
      // terminal-safe: the change's line is made visible above.
      io.stderr.write(text);
      shown.output?.resume();
    },
    command: launchCommand(io.env, io.launchedAs),
    ...(input === undefined
      ? {}
      : {
          ask: (config) => askMcpTrust(input, io.stdout, style, config, () => shutdown.exitNow(130)),
          signIn: signIn.open,
          askHeld: (held) => askHeldTool(input, io.stdout, style, held, () => shutdown.exitNow(130)),
          elicitation: terminalElicitation({
            input,
            out: io.stdout,
            style,
            env: io.env,
            onOpened: (remove) => shutdown.add(remove),
            beforeAsk: () => shown.output?.pause(),
            afterAsk: () => shown.output?.resume(),
            onInterrupt: () => interrupts.handler?.(),
          }),
        }),
  });
  shutdown.add(() => mcp.close());
  const count = mcp.tools().length;
  if (mcp.servers.length > 0)
    io.stderr.write(`MCP: ${visibleLine(mcp.servers.join(", "))} (${count} ${count === 1 ? "tool" : "tools"})\n`);
  return mcp;
}

function warnUnknownAllowed(args: RunArgs, io: CliIo, tools: readonly Tool[]): void {
  const names = new Set(tools.map((definition) => definition.name));
  for (const name of args.allow === "all" ? [] : args.allow) {
    if (!names.has(name))
      io.stderr.write(
        `simple-agent-loop: --allow ${visibleLine(name)}: there is no such tool (${visibleLine([...names].join(", "))})\n`,
      );
  }
}

/** What a task context is made from: the run's arguments and everything opened for it. */
type TaskParts = {
  args: RunArgs;
  io: CliIo;
  setup: AgentSetup;
  sessions: SessionControl;
  style: Style;
  shutdown: Shutdown;
  interrupts: InterruptRoute;
  mcp: CliMcp;
  /** The tools of each task (see `TaskContext.tools`). */
  tools: () => Tool[];
  output: TaskOutput;
  /** What the file tools share; attachments use it too. */
  files: Workspace;
  checkpoints: ReturnType<typeof checkpointRecorder>;
  policy: RunPolicy;
  modes: ModeControl;
};

/** What every task of this process runs with: the model, the tools under the approval policy, the output, interrupts. */
function taskContext(parts: TaskParts): TaskContext {
  const { args, io, setup, sessions, style, shutdown, interrupts, mcp, tools, output, files, checkpoints, policy } =
    parts;
  const { modes } = parts;
  const { noted } = policy;
  const { input, workspace } = setup;
  const order = askingOrder();
  return {
    runEnded: order.clear,
    invokeModel: setup.selected.invokeModel,
    tools,
    session: () => sessions.current().store(),
    maxTurns: args.maxTurns,
    ...(args.codeMode === true ? { codeMode: true } : {}),
    contextWindow: args.contextWindow ?? setup.selected.contextWindow,
    output,
    prices: { ...modelPrices },
    model: setup.selected.model,
    spending: { spentUsd: 0, ...(args.maxCostUsd === undefined ? {} : { limitUsd: args.maxCostUsd }) },
    warn: (text) => {
      output.pause();
      io.stderr.write(`${visibleText(text)}\n`);
      output.resume();
    },
    approvalPolicy: policy.policy,
    hooks: {
      beforeToolCall: beforeAsking({
        policy: policy.policy,
        terminal: input !== undefined,
        everyTime: cliProtectedTargets(io, workspace, mcp),
        check: (call) => checkToolCall(tools(), call),
        noted,
        order,
      }),
      afterToolCall: ({ call, result }) => {
        order.leave(call);
        return checkpoints.attach(result);
      },
      beforeModelCall: modeToolOffer(modes, policy.policy),
    },
    watchInterrupts: (handler, join) => watchInterrupts(handler, join, input, (next) => (interrupts.handler = next)),
    exitNow: shutdown.exitNow,
    userContent: userContent(files, args.attach ?? [], cliHome(io.env), (content) => {
      // terminal-safe: describeAttachments makes every name and media type visible.
      if (!args.json) io.stdout.write(describeAttachments(content, style));
    }),
  };
}

/**
 * The approval policy of this process (`cliPolicy`): the mode's preset, `--yes`/`--allow`, the
 * unsandboxed bash's ask, the `--policy` file; its human is the terminal's prompt, or `"deny"`
 * when there is no one to ask (`--json`, no terminal).
 */
function runPolicy(parts: {
  args: RunArgs;
  io: CliIo;
  prompt: TerminalAskerOptions | undefined;
  mcp: CliMcp;
  sandbox: CliSandbox;
}): RunPolicy {
  const { args, io, prompt, mcp, sandbox } = parts;
  const noted = new WeakMap<ToolCallMessage, string>();
  const cli = cliPolicy({
    mode: args.mode ?? "default",
    allow: args.allow,
    ...(args.policy === undefined ? {} : { file: args.policy }),
    // Every tool of each server, also those it adds while the CLI runs.
    planDenies: mcp.servers.map((server) => `${loopToolName(server, "", true)}*`),
    ...(sandbox.askEveryCommand ? { unsandboxed: sandbox.unavailable ?? "bwrap cannot run" } : {}),
    human:
      prompt === undefined
        ? "deny"
        : (cli) =>
            terminalAsker({
              ...prompt,
              policy: cli.policy,
              allowAlways: cli.allowAlways,
              askedEveryTime: (call) => noted.get(call),
              ...userName(io.env),
            }),
  });
  return { ...cli, noted };
}

/** The process's policy, and why each call the `beforeAsking` hook sent to the prompt is asked every time. */
type RunPolicy = CliPolicy & { noted: WeakMap<ToolCallMessage, string> };

// Who answers the prompt, recorded with each decision: the login name.
function userName(env: NodeJS.ProcessEnv): { user?: string } {
  try {
    return { user: userInfo().username };
  } catch {
    const name = env.USER ?? env.USERNAME;
    return name === undefined || name === "" ? {} : { user: name };
  }
}

// `--attach` goes with the first task (the one on the command line, or the first one typed);
// `@path` works in every task. What a task attaches is shown as it is sent.
function userContent(
  files: Workspace,
  attach: readonly string[],
  home: string,
  show: (content: string | ContentPart[]) => void,
): (task: string) => Promise<string | ContentPart[]> {
  let pending = attach;
  return async (task) => {
    const content = await taskContent(files, task, pending, { home });
    pending = [];
    show(content);
    return content;
  };
}

// The permission mode of --mode; yolo without a sandbox for bash is said at start and whenever it is chosen.
function permissionModes(
  args: RunArgs,
  io: CliIo,
  sandbox: CliSandbox,
  onChange: (mode: PermissionMode) => void,
): ModeControl {
  const warn = (mode: PermissionMode): void => {
    if (mode !== "yolo" || sandbox.sandbox !== undefined) return;
    io.stderr.write(
      sandbox.askEveryCommand
        ? "warning: yolo mode: bash has no sandbox here, so each of its commands is still asked about (--sandbox off runs them unasked, with your rights). Writes where code runs from still ask.\n"
        : "warning: yolo mode: every tool call runs without asking, and bash has no sandbox here (see --sandbox): commands run with your rights. Writes where code runs from still ask.\n",
    );
  };
  const first = args.mode ?? "default";
  warn(first);
  return modeControl(first, (mode) => {
    onChange(mode);
    warn(mode);
  });
}

// The places where writing is asked about every time (a rewind restoring a file there too).
function cliProtectedTargets(io: CliIo, workspace: string, mcp: CliMcp): ReturnType<typeof protectedTargets> {
  return protectedTargets({
    workspace,
    home: cliHome(io.env),
    runs: mcp.runs,
    user: { home: io.env.HOME ?? homedir(), xdgConfigHome: io.env.XDG_CONFIG_HOME },
  });
}

// The rewind dialog on the session, once it is stored (a new one without a task has nothing to rewind).
async function rewindIn(opened: CliSession, dialog: Omit<RewindDialog, "session">): Promise<void> {
  const session = opened.stored();
  if (session === undefined) dialog.out.write("Nothing to rewind: this session has no turns yet.\n");
  else {
    const pending = pendingCheckpoints(await loadEntries(opened.path, { onWarning: () => undefined }));
    await rewindDialog({ ...dialog, session, pending });
  }
}

// A checkpoint goes into the log before its file changes: a crash before the result keeps it there.
function recordPending(session: Session | undefined, callId: string, checkpoint: FileCheckpoint): void {
  if (session !== undefined) appendEntry(session, pendingCheckpointEntry, { callId, checkpoint });
}

// Ctrl-C reaches a running task as a signal (cooked terminal, `kill -INT`) or as a key (raw mode).
function watchInterrupts(
  handler: () => void,
  join: ((line: string) => () => boolean) | undefined,
  input: TerminalInput | undefined,
  route: (handler: (() => void) | undefined) => void,
): () => void {
  route(handler);
  const stopKeys = input?.watchInterrupts(handler, join);
  return () => {
    route(undefined);
    stopKeys?.();
  };
}

async function readTask(stdin: NodeJS.ReadStream): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of stdin) parts.push(typeof part === "string" ? Buffer.from(part) : (part as Buffer));
  const task = Buffer.concat(parts).toString("utf8").trim();
  if (task === "")
    throw new CliError(
      "no task: give one as an argument or on stdin, or start it in a terminal for the interactive prompt",
      "usage",
    );
  return task;
}

function announce(
  io: CliIo,
  json: boolean,
  style: Style,
  run: { version: string; workspace: string; selected: SelectedModel; opened: CliSession },
): void {
  const { opened, selected, workspace } = run;
  // A new session's system prompt takes them now; a resumed one keeps the prompt it started with.
  const instructions = opened.resumed ? [] : readProjectInstructions(workspace);
  if (json) {
    const start = {
      type: "session-start",
      sessionId: opened.id,
      sessionFile: opened.path,
      resumed: opened.resumed,
      workspace,
      ...(opened.movedFrom === undefined ? {} : { movedFrom: opened.movedFrom }),
      provider: selected.provider,
      model: selected.model,
      version: run.version,
      ...(instructions.length === 0 ? {} : { instructions: instructions.map((file) => file.shown) }),
    };
    io.stdout.write(`${visibleJson(start)}\n`);
    io.stderr.write(`session ${visibleLine(opened.id)} (${visibleLine(opened.path)})\n`);
    return;
  }
  const messages = opened.stored()?.messages ?? [];
  const lastTask = messages.findLast(
    (message): message is Extract<Message, { role: "user" }> => "role" in message && message.role === "user",
  );
  const state = opened.resumed
    ? `resumed, ${messages.length} messages${lastTask === undefined ? "" : `; last task: ${visibleLine(JSON.stringify(shortTask(describeContent(lastTask.content))))}`}`
    : "new";
  io.stdout.write(
    `${style.bold("simple-agent-loop")} ${visibleLine(run.version)} · ${visibleLine(selected.description)}\n` +
      style.dim(
        `workspace ${visibleLine(workspace)}${opened.movedFrom === undefined ? "" : ` (the session worked in ${visibleLine(opened.movedFrom)} until now)`}\nsession ${visibleLine(opened.id)} (${state})\n`,
      ) +
      describeInstructions(instructions, style),
  );
  // terminal-safe: replaySession makes every text of the session visible (or renders it as Markdown).
  if (opened.resumed) io.stdout.write(replaySession(messages, style));
}

// The instruction files a new session's system prompt takes, and a notice for any that was cut.
function describeInstructions(files: readonly InstructionFile[], style: Style): string {
  if (files.length === 0) return "";
  const cut = files
    .filter((file) => file.cutFrom !== undefined)
    .map((file) =>
      style.yellow(
        `⚠ ${visibleLine(file.shown)} is cut: ${visibleLine(file.cutFrom!.toLocaleString("en-US"))} bytes, and the instructions are limited to ${visibleLine(maxInstructionBytes.toLocaleString("en-US"))} bytes in all\n`,
      ),
    );
  return `${style.dim(`instructions ${visibleLine(files.map((file) => file.shown).join(", "))}`)}\n${cut.join("")}`;
}

// The command that resumes this session, with the workspace when it was not the current directory;
// the workspace's name is untrusted (a cloned directory's), so it is shown escaped like any path.
function resumeCommand(command: string, id: string, workspace: string | undefined): string {
  const quoted = (text: string): string => (/^[\w./@%+=:,-]+$/.test(text) ? text : `'${text.replace(/'/g, "'\\''")}'`);
  return visibleLine(`${command} --resume ${id}${workspace === undefined ? "" : ` -C ${quoted(workspace)}`}`);
}

/** A task as one short line for the resumed-session banner. */
function shortTask(task: string): string {
  return task.length > 60 ? `${task.slice(0, 59)}…` : task;
}

// --record and --replay wrap the chosen model; tool results go in the cassette too, so a replay runs no command.
function withCassette(selected: SelectedModel, args: RunArgs): SelectedModel {
  if (args.cassette === undefined) return selected;
  const { mode, path } = args.cassette;
  if (mode === "replay" && !existsSync(path)) throw new CliError(`--replay: no cassette at ${path}`);
  const invokeModel = cassette(selected.invokeModel, { path, mode, tools: "record" });
  return {
    ...selected,
    invokeModel,
    description: `${selected.description}, ${mode === "record" ? "recording to" : "replaying"} ${path}`,
  };
}

// A replay whose task is not the recording's would fail at its first model call, after a session
// was made for it: it is refused before anything starts (no session, no resume hint).
function checkReplayedTask(path: string, task: string): void {
  const first = readCassette(path).find((entry) => entry.kind === "model");
  if (first === undefined || first.kind !== "model") return;
  const recorded = first.request.messages.findLast((message) => "role" in message && message.role === "user");
  if (recorded === undefined || !("role" in recorded) || typeof recorded.content !== "string") return;
  if (recorded.content.trim() === task.trim()) return;
  throw new CliError(
    `--replay: ${path} recorded the task ${JSON.stringify(shortTask(recorded.content))}, not ${JSON.stringify(shortTask(task))}; nothing was run`,
  );
}

// --max-cost counts what the model calls cost: a model without a known price would never reach it.
function checkPriced(model: string, args: RunArgs, option: string): void {
  if (args.maxCostUsd === undefined || priceOf(modelPrices, model) !== undefined) return;
  throw new CliError(
    `${option} ${model}: --max-cost needs the model's price, and the list of ${modelPricesDate} has none for it (it has ${Object.keys(modelPrices).join(", ")})`,
  );
}
