import ts from "typescript";
import { lineOf } from "./source-files.ts";
import type { SourceFile } from "./source-files.ts";

/** A function (declaration, method, accessor, constructor, arrow or function expression with a body) and its length in lines, first line to last. */
export interface FunctionLength {
  where: string;
  name: string;
  lines: number;
}

/** Every function in `file` longer than `maxLines`, nested ones included (each counted whole, with what it nests). */
export function longFunctions(file: SourceFile, maxLines: number): FunctionLength[] {
  const found: FunctionLength[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && "body" in node && node.body !== undefined) {
      const first = lineOf(file, node.getStart(file.syntax));
      const lines = lineOf(file, node.getEnd()) - first + 1;
      if (lines > maxLines) found.push({ where: `${file.path}:${first}`, name: nameOf(node), lines });
    }
    ts.forEachChild(node, visit);
  };
  visit(file.syntax);
  return found;
}

/** The name a reader searches for: the function's own, else the variable, property or class member it is assigned to. */
function nameOf(node: ts.SignatureDeclaration): string {
  const named = node.name ?? namedParent(node.parent);
  if (named === undefined) return "(anonymous)";
  const owner = ts.isClassLike(node.parent) && node.parent.name !== undefined ? `${node.parent.name.text}.` : "";
  return owner + named.getText();
}

function namedParent(parent: ts.Node): ts.Node | undefined {
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent))
    return parent.name;
  return undefined;
}
