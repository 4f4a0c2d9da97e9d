// Every text the CLI writes to the terminal goes through the one escaping path: what it writes is
// built from its own literals, numbers, and text made visible (`visibleText`, `visibleLine`,
// `visibleJson`) or rendered by a function that makes it so (the Markdown renderer, a style over
// such text). Read from the sources: a write whose text this cannot follow says why it is safe in
// a `// terminal-safe: <why>` comment just above it, so every exception is named in review.
import { readdirSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");
const cli = join(root, "src", "cli");

/** Functions whose result is terminal-safe whatever their arguments: they escape what they are given. */
const escaping = new Set(["visibleText", "visibleLine", "visibleJson", "renderMarkdown", "formatContextTable"]);
/** The stream objects the CLI writes the terminal through. */
const terminalStream = /(^|\.)(out|stdout|stderr|output|errors|screen\.out)$/;

describe("text reaching the terminal", () => {
  it("is built only from the CLI's literals, numbers and escaped or rendered text", () => {
    const files = sourceFiles(cli);
    const program = ts.createProgram({
      rootNames: files,
      options: { allowImportingTsExtensions: true, noEmit: true, target: ts.ScriptTarget.ES2023, strict: true },
    });
    const checker = program.getTypeChecker();
    const unsafe: string[] = [];
    let writes = 0;
    for (const file of files) {
      const source = program.getSourceFile(file)!;
      const visit = (node: ts.Node): void => {
        if (
          ts.isCallExpression(node) &&
          ts.isPropertyAccessExpression(node.expression) &&
          node.expression.name.text === "write" &&
          terminalStream.test(node.expression.expression.getText(source)) &&
          node.arguments.length > 0
        ) {
          writes++;
          const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
          const above = source.text.split("\n")[line - 1] ?? "";
          if (!/\/\/ terminal-safe: \S/.test(above)) {
            for (const part of unsafeParts(node.arguments[0]!, checker, source, new Set()))
              unsafe.push(`${relative(root, file)}:${line + 1}: ${part}`);
          }
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
      for (const match of source.text.matchAll(/console\.(log|error|warn|info)\(/g))
        unsafe.push(`${relative(root, file)}: console.${match[1]} writes around the CLI's streams`);
    }
    expect(writes).toBeGreaterThan(20);
    expect(
      unsafe,
      "pass the text through visibleText/visibleLine/visibleJson (or a style over such text), or say why it is safe in a `// terminal-safe: <why>` comment above the write",
    ).toStrictEqual([]);
  }, 120_000);
});

// The parts of `node` (the text written) that are not known to be safe, as source text.
function unsafeParts(
  node: ts.Expression,
  checker: ts.TypeChecker,
  source: ts.SourceFile,
  seen: Set<ts.Node>,
): string[] {
  if (seen.has(node)) return [];
  seen.add(node);
  const parts = (expression: ts.Expression): string[] => unsafeParts(expression, checker, source, seen);
  if (ts.isParenthesizedExpression(node) || ts.isAsExpression(node) || ts.isNonNullExpression(node))
    return parts(node.expression);
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isNumericLiteral(node)) return [];
  if (ts.isTemplateExpression(node)) return node.templateSpans.flatMap((span) => parts(span.expression));
  if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken)
    return [...parts(node.left), ...parts(node.right)];
  if (ts.isConditionalExpression(node)) return [...parts(node.whenTrue), ...parts(node.whenFalse)];
  // Numbers and booleans print as digits and words.
  const type = checker.getTypeAtLocation(node);
  if ((type.flags & (ts.TypeFlags.NumberLike | ts.TypeFlags.BooleanLike)) !== 0) return [];
  if (ts.isCallExpression(node)) {
    const callee = node.expression;
    const name = ts.isIdentifier(callee) ? callee.text : ts.isPropertyAccessExpression(callee) ? callee.name.text : "";
    if (escaping.has(name)) return [];
    // A style adds its own codes around text that must be safe itself.
    if (ts.isPropertyAccessExpression(callee) && /(^|\.)style$/.test(callee.expression.getText(source)))
      return node.arguments.flatMap((argument) => parts(argument));
    // `.join(...)`, `.repeat(n)`, `.padEnd(n)`… of safe text with safe separators.
    if (
      ts.isPropertyAccessExpression(callee) &&
      ["join", "repeat", "padEnd", "padStart", "trim", "trimEnd", "slice"].includes(name)
    )
      return [...parts(callee.expression), ...node.arguments.flatMap((argument) => parts(argument))];
    // `.map(...)` of safe items by a function returning safe text.
    if (ts.isPropertyAccessExpression(callee) && name === "map") {
      const mapper = node.arguments[0];
      if (
        mapper !== undefined &&
        (ts.isArrowFunction(mapper) || ts.isFunctionExpression(mapper)) &&
        ts.isExpression(mapper.body)
      )
        return parts(mapper.body);
    }
    // A function of the CLI's own whose every returned text is safe (followed through its returns).
    const declaration = ts.isIdentifier(callee) ? declarationOf(callee, checker) : undefined;
    const body =
      declaration !== undefined && ts.isFunctionDeclaration(declaration)
        ? declaration.body
        : declaration !== undefined &&
            ts.isVariableDeclaration(declaration) &&
            declaration.initializer !== undefined &&
            ts.isArrowFunction(declaration.initializer)
          ? declaration.initializer.body
          : undefined;
    if (body !== undefined) {
      if (ts.isExpression(body)) return unsafeParts(body, checker, body.getSourceFile(), seen);
      const returned = returnedExpressions(body);
      if (
        returned.length > 0 &&
        returned.every((expression) => unsafeParts(expression, checker, expression.getSourceFile(), seen).length === 0)
      )
        return [];
    }
    return [node.getText(source)];
  }
  // A name declared with an initializer: what it was set to (a constant, a local).
  if (ts.isIdentifier(node)) {
    const declaration = declarationOf(node, checker);
    if (declaration !== undefined && ts.isVariableDeclaration(declaration) && declaration.initializer !== undefined) {
      const flags = ts.getCombinedNodeFlags(declaration);
      if ((flags & ts.NodeFlags.Const) !== 0)
        return unsafeParts(declaration.initializer, checker, declaration.getSourceFile(), seen);
    }
  }
  return [node.getText(source)];
}

function declarationOf(name: ts.Identifier, checker: ts.TypeChecker): ts.Declaration | undefined {
  const symbol = checker.getSymbolAtLocation(name);
  const resolved =
    symbol !== undefined && symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
  return resolved?.valueDeclaration;
}

// The expressions a function body returns (not those of functions nested in it).
function returnedExpressions(body: ts.Node): ts.Expression[] {
  const found: ts.Expression[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node)) return;
    if (ts.isReturnStatement(node) && node.expression !== undefined) found.push(node.expression);
    ts.forEachChild(node, visit);
  };
  ts.forEachChild(body, visit);
  return found;
}

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(join(directory, entry.name))
      : entry.name.endsWith(".ts")
        ? [join(directory, entry.name)]
        : [],
  );
}
