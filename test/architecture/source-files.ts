import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";

/** One source file as the architecture checks read it: its path from the repository root (always with `/`), parsed once. */
export interface SourceFile {
  path: string;
  syntax: ts.SourceFile;
}

/**
 * Every `.ts` and `.js` file under `directory` (declaration files excluded), in path order. Paths are
 * relative to `root`, so a failure message names a file as a reader finds it in the repository.
 */
export function readSourceFiles(root: string, directory: string): SourceFile[] {
  return listFiles(root, directory).map((path) => parseSource(path, readFileSync(join(root, path), "utf8")));
}

/** Parses one file (TypeScript or, for `.js`, JavaScript with its JSDoc) the way every check expects it. */
export function parseSource(path: string, text: string): SourceFile {
  const kind = path.endsWith(".js") ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  return { path, syntax: ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, kind) };
}

/** The 1-based line of `position` in `file`, for messages a reader can jump to. */
export function lineOf(file: SourceFile, position: number): number {
  return file.syntax.getLineAndCharacterOfPosition(position).line + 1;
}

function listFiles(root: string, directory: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(join(root, directory), { withFileTypes: true })) {
    const path = `${directory}/${entry.name}`;
    if (entry.isDirectory()) found.push(...listFiles(root, path));
    else if (/\.(ts|js)$/.test(entry.name) && !entry.name.endsWith(".d.ts")) found.push(path);
  }
  return found.sort();
}
