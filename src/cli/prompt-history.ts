import { createHash, randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** The most lines kept per workspace. */
export const historyLimit = 500;

/** The prompt's history of one workspace: what Up and Down recall, kept across runs. */
export type PromptHistory = {
  /** The lines, newest first; [] when there is no file yet or it cannot be read. */
  load: () => string[];
  /** Keeps `lines` (newest first, at most `historyLimit`). Never throws: a history that cannot be written is lost. */
  save: (lines: readonly string[]) => void;
};

/**
 * The history of `workspace` in the CLI's home: `<home>/history/<hash of the workspace path>.json`,
 * a JSON array of lines, newest first, written whole (a temporary file renamed over it) with mode
 * 0600 in a directory of mode 0700: what was typed is only the user's to read.
 */
export function promptHistory(home: string, workspace: string): PromptHistory {
  const directory = join(home, "history");
  const path = join(directory, `${createHash("sha256").update(workspace).digest("hex").slice(0, 32)}.json`);
  return {
    load: () => {
      try {
        const lines: unknown = JSON.parse(readFileSync(path, "utf8"));
        return Array.isArray(lines)
          ? lines.filter((line): line is string => typeof line === "string").slice(0, historyLimit)
          : [];
      } catch {
        return [];
      }
    },
    save: (lines) => {
      try {
        mkdirSync(directory, { recursive: true, mode: 0o700 });
        const temporary = join(directory, `.${randomBytes(6).toString("hex")}.tmp`);
        writeFileSync(temporary, JSON.stringify(lines.slice(0, historyLimit)), { mode: 0o600 });
        chmodSync(temporary, 0o600);
        renameSync(temporary, path);
      } catch {
        // The history is a convenience: a full disk or a read-only home must not end the CLI.
      }
    },
  };
}
