import { tool } from "../../tools/tool.ts";
import type { CheckedTool } from "./pre-check.ts";
import { openInWorkspace, readAt, replaceContent, type Access, type OpenedEntry } from "./workspace-file.ts";
import { resolveInWorkspace, type WorkspacePath } from "./workspace-path.ts";
import type { Workspace } from "./workspace.ts";

/**
 * `edit`: replaces one exact, unique piece of a file's text (`oldText`) with `newText`. The file
 * must have been read in this run and be unchanged on disk since (or written by the model
 * itself), so the edit is made against what the model saw. No match, several matches, an empty
 * or unchanged `oldText` are error results that say what to do. Runs in the workspace's write
 * queue: parallel edits of one file never lose each other's changes. A file with CRLF line
 * endings accepts `oldText`/`newText` written with plain newlines. The file is read, matched and
 * written through one verified descriptor (`openInWorkspace`). `check` says, without changing
 * anything, whether a call would fail, so the permission prompt need not ask about it.
 */
export function editTool(workspace: Workspace, limits: { maxFileBytes?: number } = {}): CheckedTool {
  const maxFileBytes = limits.maxFileBytes ?? 20_000_000;
  const check = async (input: unknown): Promise<string | undefined> => {
    const edit = editInput(input);
    if (edit === undefined) return undefined;
    try {
      const planned = await planEdit(workspace, edit, "read", maxFileBytes);
      await planned.file.close();
      return undefined;
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  };
  const editor = tool({
    name: "edit",
    description:
      "Replace one exact piece of text in a file with new text. oldText must match the file exactly (whitespace and indentation included, " +
      "without read's line numbers) and only once: include enough surrounding lines to make it unique. Read the file first. To create a file or replace all of it, use write.",
    inputSchema: {
      type: "object",
      properties: {
        path: { type: "string", description: "Path relative to the workspace." },
        oldText: { type: "string", description: "The exact text to replace; it must occur exactly once in the file." },
        newText: { type: "string", description: "The text to put in its place." },
      },
      required: ["path", "oldText", "newText"],
      additionalProperties: false,
    },
    eager: false,
    handler: async (input, context) => {
      const edit = input as EditInput;
      return workspace.writes(async () => {
        // Read, matched and written through one descriptor: the file edited is the file checked.
        const { file, target, bytes, content, index, search, replacement } = await planEdit(
          workspace,
          edit,
          "update",
          maxFileBytes,
        );
        try {
          const edited = Buffer.from(content.slice(0, index) + replacement + content.slice(index + search.length));
          workspace.onFileChange?.({
            callId: context.id,
            path: target.display,
            previous: { type: "content", bytes, mode: file.stats.mode & 0o7777 },
            content: edited,
          });
          await replaceContent(file.handle, edited);
          workspace.seen.record(target.absolute, await file.handle.stat());
        } finally {
          await file.close();
        }
        const line = lineAt(content, index);
        return `Edited ${target.display}: replaced ${countLines(edit.oldText)} line(s) at line ${line} with ${countLines(edit.newText)} line(s).`;
      });
    },
  });
  return { ...editor, check };
}

type EditInput = { path: string; oldText: string; newText: string };

type PlannedEdit = {
  file: OpenedEntry;
  target: WorkspacePath;
  /** The file as read, byte for byte (`content` is its text). */
  bytes: Uint8Array;
  content: string;
  index: number;
  search: string;
  replacement: string;
};

function editInput(input: unknown): EditInput | undefined {
  if (typeof input !== "object" || input === null) return undefined;
  const { path, oldText, newText } = input as Record<string, unknown>;
  return typeof path === "string" && typeof oldText === "string" && typeof newText === "string"
    ? { path, oldText, newText }
    : undefined;
}

// Opens the file and finds the one place to change; throws the error the model gets otherwise.
// The caller closes the returned file.
async function planEdit(
  workspace: Workspace,
  edit: EditInput,
  access: Access,
  maxFileBytes: number,
): Promise<PlannedEdit> {
  const { oldText, newText } = edit;
  const target = await resolveInWorkspace(workspace.root, edit.path);
  if (!target.exists) throw new Error(`${target.display} does not exist; create it with write`);
  const file = await openInWorkspace(workspace.root, target, access);
  try {
    const { stats } = file;
    if (stats.isDirectory()) throw new Error(`${target.display} is a directory`);
    const seen = workspace.seen.check(target.absolute, stats);
    if (seen === "unread")
      throw new Error(`read ${target.display} before editing it, so the edit matches the file as it is`);
    if (seen === "changed")
      throw new Error(`${target.display} changed on disk since you last read it; read it again before editing`);
    if (oldText === "")
      throw new Error("oldText is empty; give the exact text to replace (to write a whole file, use write)");
    if (oldText === newText) throw new Error("oldText and newText are the same; there is nothing to change");
    if (stats.size > maxFileBytes)
      throw new Error(`${target.display} is too large to edit (${stats.size} bytes); use bash (sed) to change it`);
    const bytes = await readAt(file.handle, 0, stats.size);
    const content = bytes.toString("utf8");
    // The text as given first; in a file with CRLF line endings, then with its newlines made CRLF.
    let search = oldText;
    let replacement = newText;
    let matches = occurrences(content, search);
    if (matches.length === 0 && content.includes("\r\n") && !oldText.includes("\r\n") && oldText.includes("\n")) {
      search = oldText.replace(/\n/g, "\r\n");
      replacement = newText.replace(/\r?\n/g, "\r\n");
      matches = occurrences(content, search);
    } else if (content.includes("\r\n") && !content.replace(/\r\n/g, "").includes("\n")) {
      // A file with only CRLF endings keeps them in the new text too.
      replacement = newText.replace(/\r?\n/g, "\r\n");
    }
    if (matches.length === 0) throw new Error(`oldText not found in ${target.display}${nearMiss(content, oldText)}`);
    if (matches.length > 1) {
      const lines = matches.slice(0, 10).map((index) => lineAt(content, index));
      const count = matches.length > maxCounted ? `${maxCounted} or more` : String(matches.length);
      throw new Error(
        `oldText matches ${count} places in ${target.display} (lines ${lines.join(", ")}${matches.length > 10 ? ", …" : ""}); include more surrounding text to make it unique`,
      );
    }
    return { file, target, bytes, content, index: matches[0]!, search, replacement };
  } catch (error) {
    await file.close();
    throw error;
  }
}

// Counting stops here: each further overlapping match of a long oldText costs its whole length.
const maxCounted = 100;

// Overlapping ones count too: "aa" in "aaa" is ambiguous.
function occurrences(content: string, search: string): number[] {
  const found: number[] = [];
  for (
    let index = content.indexOf(search);
    index !== -1 && found.length <= maxCounted;
    index = content.indexOf(search, index + 1)
  )
    found.push(index);
  return found;
}

/** The 1-based line of a character index. */
function lineAt(content: string, index: number): number {
  let line = 1;
  for (
    let position = content.indexOf("\n");
    position !== -1 && position < index;
    position = content.indexOf("\n", position + 1)
  )
    line++;
  return line;
}

function countLines(text: string): number {
  return text === "" ? 0 : text.replace(/\r?\n$/, "").split(/\r?\n/).length;
}

// The usual cause of a miss is whitespace: say so when the text is there apart from it.
function nearMiss(content: string, oldText: string): string {
  const squeeze = (text: string): string => text.replace(/\s+/g, " ").trim();
  const wanted = squeeze(oldText);
  if (wanted !== "" && squeeze(content).includes(wanted)) {
    return "; the text is there with different whitespace or indentation: copy it exactly from read's output (without the line numbers)";
  }
  return "; it must match the file exactly: read the file again and copy the text";
}
