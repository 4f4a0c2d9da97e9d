import ts from "typescript";
import { lineOf } from "./source-files.ts";
import type { SourceFile } from "./source-files.ts";

/**
 * A comment that points outside the repository instead of stating its rule: a seed document and its
 * sections, "the Python package", an issue number. A reader of the code has none of these at hand.
 */
export const citation = /seed\s*0\d\d|§|Python package|issue #?\d+/i;

/** Each comment of `file` (line, block or JSDoc) that matches `citation`, as `file:line: the matching text`. */
export function commentCitations(file: SourceFile): string[] {
  // Walking every token is the slow part; most files cannot match anywhere, comment or not.
  if (!citation.test(file.syntax.text)) return [];
  return commentsOf(file).flatMap(({ pos, end }) => {
    const text = file.syntax.text.slice(pos, end);
    const match = citation.exec(text);
    if (match === null) return [];
    const line = lineOf(file, pos + match.index);
    const lineText = text.slice(0, match.index).split("\n").length - 1;
    return [`${file.path}:${line}: ${text.split("\n")[lineText]!.trim()}`];
  });
}

/**
 * Every comment of the file exactly once. Comments are trivia before or after a token, so the walk
 * goes over tokens (`getChildren`, which also yields the punctuation `forEachChild` skips) and asks for
 * the comments around each; JSDoc nodes are skipped because their positions lie inside a comment.
 */
function commentsOf(file: SourceFile): ts.CommentRange[] {
  const text = file.syntax.text;
  const byPosition = new Map<number, ts.CommentRange>();
  const collect = (ranges: ts.CommentRange[] | undefined): void => {
    for (const range of ranges ?? []) byPosition.set(range.pos, range);
  };
  const visit = (node: ts.Node): void => {
    if (node.kind >= ts.SyntaxKind.FirstJSDocNode && node.kind <= ts.SyntaxKind.LastJSDocNode) return;
    const children = node.getChildren(file.syntax);
    if (children.length > 0) {
      children.forEach(visit);
      return;
    }
    collect(ts.getLeadingCommentRanges(text, node.pos));
    collect(ts.getTrailingCommentRanges(text, node.end));
  };
  visit(file.syntax);
  collect(ts.getLeadingCommentRanges(text, 0));
  return [...byPosition.values()].sort((a, b) => a.pos - b.pos);
}
