import { posix } from "node:path";
import ts from "typescript";
import { lineOf } from "./source-files.ts";
import type { SourceFile } from "./source-files.ts";

/**
 * One module a file names. `target` is the specifier resolved against the importing file (a path from the
 * repository root, as written: relative specifiers in this project carry their `.ts` or `.js` extension),
 * or undefined for a package or `node:` builtin. `typeOnly` means the module is never loaded at run time
 * (`import type`, `export type ... from`, `import("x").T` in a type, a JSDoc type in a page script); an
 * `import { type A }` still loads its module under `verbatimModuleSyntax`, so it is not type-only.
 * `dynamic` is an `import("x")` expression: a dependency, but one loaded on first use.
 */
export interface ImportEdge {
  from: string;
  line: number;
  specifier: string;
  target: string | undefined;
  typeOnly: boolean;
  dynamic: boolean;
}

/** Every module `file` names, in source order, with string-literal specifiers (computed ones cannot be checked). */
export function importsOf(file: SourceFile): ImportEdge[] {
  const edges: ImportEdge[] = [];
  const add = (specifier: ts.Node | undefined, kind: { typeOnly: boolean; dynamic: boolean }): void => {
    if (specifier === undefined || !ts.isStringLiteralLike(specifier)) return;
    edges.push({
      from: file.path,
      line: lineOf(file, specifier.getStart(file.syntax)),
      specifier: specifier.text,
      target: resolve(file.path, specifier.text),
      ...kind,
    });
  };
  // A page script names its types in JSDoc, which only `getChildren` walks into (`forEachChild` skips comments).
  const children = file.path.endsWith(".js")
    ? (node: ts.Node) => node.getChildren(file.syntax)
    : (node: ts.Node) => nodeChildren(node);
  const visit = (node: ts.Node): void => {
    addEdge(node, add);
    children(node).forEach(visit);
  };
  visit(file.syntax);
  return edges.sort((a, b) => a.line - b.line);
}

function nodeChildren(node: ts.Node): ts.Node[] {
  const children: ts.Node[] = [];
  ts.forEachChild(node, (child) => {
    children.push(child);
  });
  return children;
}

type AddEdge = (specifier: ts.Node | undefined, kind: { typeOnly: boolean; dynamic: boolean }) => void;

function addEdge(node: ts.Node, add: AddEdge): void {
  if (ts.isImportDeclaration(node)) {
    add(node.moduleSpecifier, {
      typeOnly: node.importClause?.phaseModifier === ts.SyntaxKind.TypeKeyword,
      dynamic: false,
    });
  } else if (ts.isExportDeclaration(node)) {
    add(node.moduleSpecifier, { typeOnly: node.isTypeOnly, dynamic: false });
  } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
    add(node.moduleReference.expression, { typeOnly: node.isTypeOnly, dynamic: false });
  } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
    add(node.arguments[0], { typeOnly: false, dynamic: true });
  } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
    add(node.argument.literal, { typeOnly: true, dynamic: false });
  } else if (ts.isJSDocImportTag(node)) {
    add(node.moduleSpecifier, { typeOnly: true, dynamic: false });
  }
}

function resolve(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith("./") && !specifier.startsWith("../")) return undefined;
  return posix.normalize(posix.join(posix.dirname(from), specifier));
}
