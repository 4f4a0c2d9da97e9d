import type { JsonObject, Session } from "../session.ts";
import type { BlobStore } from "../store/blobs.ts";
import type { Style } from "./ansi.ts";
import type { FileCheckpoint } from "./checkpoints.ts";
import type { RewindMarker } from "./rewind-marker.ts";
import { planRewind, userTurns, type RewindPlan, type UserTurn } from "./rewind-plan.ts";
import { rewindSession, type RewindReport } from "./rewind.ts";
import type { TerminalInput } from "./terminal-input.ts";
import { visibleLine } from "./visible-text.ts";

/** What `/rewind` and `--rewind` work with. */
export type RewindDialog = {
  /** The session, bound to its store. */
  session: Session;
  /** The workspace (a real path): files are restored inside it only. */
  root: string;
  /** The session's blobs, where checkpoints keep previous contents. */
  blobs: Pick<BlobStore, "read">;
  out: NodeJS.WritableStream;
  style: Style;
  /** The keyboard: undefined when nobody can be asked (`--rewind <n> --yes` without a terminal). */
  input?: TerminalInput;
  /** The turn, chosen ahead (`--rewind <n>`); else the turns are listed and one is asked for. */
  turn?: number;
  /** Rewind without asking for confirmation (`--yes`); files someone else changed are still never overwritten unasked. */
  yes?: boolean;
  /** Why writing a file is asked about every time (`protectedTargets`), or undefined. */
  alwaysAsk?: (call: { name: string; input: JsonObject }) => Promise<string | undefined>;
  /** Marks the rewind as running, for a later start to find it if a crash cuts it short. */
  marker?: RewindMarker;
  /** Checkpoints recorded before their changes, by call id (`pendingCheckpoints` of the session's log). */
  pending?: ReadonlyMap<string, FileCheckpoint>;
};

/**
 * The rewind dialog: lists the user turns (unless one was given), shows what rewinding to before
 * the chosen one changes (files restored, files deleted because the agent created them, changes
 * nothing can restore, bash commands and other tools whose changes stay, files someone else
 * changed since), asks to confirm, asks about each file someone else changed (kept unless the
 * user says to overwrite it), then rewinds (`rewindSession`) and says what it did. Resolves with
 * the report, or undefined when nothing was rewound (no turns, cancelled).
 */
export async function rewindDialog(dialog: RewindDialog): Promise<RewindReport | undefined> {
  const { session, out, style, input } = dialog;
  const turns = userTurns(session.messages);
  if (turns.length === 0) {
    out.write("Nothing to rewind: this session has no turns yet.\n");
    return undefined;
  }
  const turn = dialog.turn === undefined ? await chooseTurn(turns, dialog) : turns[dialog.turn - 1];
  if (turn === undefined) {
    if (dialog.turn !== undefined)
      out.write(style.red(`There is no turn ${dialog.turn}: this session has ${turns.length}.\n`));
    return undefined;
  }
  const plan = await planRewind(session.messages, turn, dialog.root, dialog.pending);
  const protectedFiles = await protectedOf(plan, dialog);
  // terminal-safe: describePlan makes every path, reason, command and the turn's text visible.
  out.write(describePlan(plan, protectedFiles, style));
  const confirmed = dialog.yes === true || (input !== undefined && (await askYes(input, style, "Rewind?")));
  if (!confirmed) {
    out.write("Rewind cancelled; nothing changed.\n");
    return undefined;
  }
  const overwrite = new Set<string>();
  const keep = new Map<string, string>();
  for (const file of plan.files) {
    const protection = protectedFiles.get(file.path);
    if (protection !== undefined && (input === undefined || dialog.yes === true)) {
      keep.set(file.path, `${protection}; kept as it is without a terminal to ask`);
      continue;
    }
    if (file.status !== "changed" || input === undefined) continue;
    const question = `${visibleLine(file.path)} was changed since the agent left it. Overwrite it with the version from before turn ${turn.number}?`;
    if (await askYes(input, style, question)) overwrite.add(file.path);
  }
  const report = await rewindSession(session, plan, {
    root: dialog.root,
    blobs: dialog.blobs,
    overwrite,
    keep,
    ...(dialog.marker === undefined ? {} : { marker: dialog.marker }),
  });
  // terminal-safe: describeReport makes every path and reason visible.
  out.write(describeReport(report, style));
  return report;
}

/**
 * What a rewind did, as lines for the terminal (also for one a crash cut short and a later start
 * finished: `session` names its session when it is not the one in use).
 */
export function describeReport(report: RewindReport, style: Style, session?: string): string {
  const interrupted = `An interrupted rewind${session === undefined ? "" : ` of session ${visibleLine(session)}`} was finished`;
  const lines = [
    style.green(
      `${report.recovered === true ? interrupted : "Rewound"}: the conversation is back to before turn ${report.turn}.`,
    ),
  ];
  for (const path of report.restored) lines.push(`  restored ${visibleLine(path)}`);
  for (const path of report.deleted) lines.push(`  deleted  ${visibleLine(path)}`);
  for (const path of report.removedDirectories) lines.push(`  removed  ${visibleLine(path)}/ (empty)`);
  for (const { path, reason } of report.skipped)
    lines.push(style.yellow(`  kept     ${visibleLine(path)}: ${visibleLine(reason)}`));
  return `${lines.join("\n")}\n`;
}

async function chooseTurn(turns: readonly UserTurn[], dialog: RewindDialog): Promise<UserTurn | undefined> {
  const { out, style, input } = dialog;
  out.write("Turns of this session:\n");
  const width = String(turns.length).length;
  for (const turn of turns)
    out.write(`  ${visibleLine(String(turn.number).padStart(width))}  ${visibleLine(oneLine(turn.text))}\n`);
  if (input === undefined) return undefined;
  const answer = await input.question(
    `Rewind to before which turn? ${style.dim(`(1-${turns.length}; Enter cancels)`)} `,
  );
  const text = answer.type === "line" ? answer.text.trim() : "";
  if (text === "") {
    out.write("Rewind cancelled; nothing changed.\n");
    return undefined;
  }
  const chosen = /^\d{1,9}$/.test(text) ? turns[Number(text) - 1] : undefined;
  if (chosen === undefined) out.write(style.red(`There is no turn ${visibleLine(text)}; nothing changed.\n`));
  return chosen;
}

// The plan's files that lie where writing is asked about every time, with why.
async function protectedOf(plan: RewindPlan, dialog: RewindDialog): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  if (dialog.alwaysAsk === undefined) return found;
  for (const file of plan.files) {
    const reason = await dialog.alwaysAsk({ name: "write", input: { path: file.path } });
    if (reason !== undefined) found.set(file.path, reason);
  }
  return found;
}

function describePlan(plan: RewindPlan, protectedFiles: ReadonlyMap<string, string>, style: Style): string {
  const { turn } = plan;
  const lines = [
    style.bold(
      `Rewind to before turn ${turn.number} (${visibleLine(JSON.stringify(oneLine(turn.text)))}): the conversation loses ${plan.removedMessages} ${plan.removedMessages === 1 ? "message" : "messages"}.`,
    ),
  ];
  const files: string[] = [];
  for (const file of plan.files) {
    const path = visibleLine(file.path);
    const protection = protectedFiles.get(file.path);
    const note = protection === undefined ? "" : style.yellow(` (⚠ ${visibleLine(protection)})`);
    if (file.status === "done") files.push(style.dim(`  unchanged ${path} (already as before turn ${turn.number})`));
    else if (file.status === "unreadable")
      files.push(
        style.yellow(`  kept     ${path}: ${visibleLine(file.now.type === "unreadable" ? file.now.reason : "")}`),
      );
    else if (file.status === "changed")
      files.push(style.yellow(`  changed  ${path}: someone else changed it since the agent did (asked below)${note}`));
    else if (file.target.type === "absent") files.push(`  delete   ${path} (the agent created it)${note}`);
    else files.push(`  restore  ${path}${note}`);
  }
  for (const directory of plan.directories)
    files.push(`  remove   ${visibleLine(directory)}/ if it is empty then (the agent created it)`);
  for (const { path, reason } of plan.notRestorable)
    files.push(style.yellow(`  cannot restore ${visibleLine(path)}: ${visibleLine(reason)}`));
  lines.push(files.length === 0 ? "No file the agent wrote or edited changes." : "Files:", ...files);
  if (plan.commands.length > 0) {
    lines.push(style.yellow("Not restorable: what these bash commands changed stays as it is:"));
    for (const command of plan.commands) lines.push(`  $ ${visibleLine(command)}`);
  }
  if (plan.otherCalls.length > 0)
    lines.push(
      style.yellow(
        `Not restorable: what these tools changed stays as it is: ${visibleLine([...new Set(plan.otherCalls)].join(", "))}`,
      ),
    );
  return `${lines.join("\n")}\n`;
}

async function askYes(input: TerminalInput, style: Style, question: string): Promise<boolean> {
  const answer = await input.key(`${style.yellow("?")} ${question} ${style.dim("[y] yes · [n] no")} `);
  return answer.type === "key" && answer.key.toLowerCase() === "y";
}

// A turn's text on one line, short enough for a list.
function oneLine(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > 70 ? `${line.slice(0, 69)}…` : line;
}
