import path from "node:path";
import ts from "typescript";

/**
 * How often a reader following `run` through one model call enters each file: from
 * `callModelStep`, depth first, every call that passes `run` on to a function declared in src/,
 * each function read once; entering a function in another file than its caller's is one entry.
 */
export function modelCallWalk(root: string): Map<string, number> {
  const config = ts.getParsedCommandLineOfConfigFile(
    path.join(root, "tsconfig.json"),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"));
      },
    },
  );
  if (config === undefined) throw new Error("tsconfig.json: not found");
  const sources = config.fileNames.filter((file) => file.includes(`${path.sep}src${path.sep}`));
  const program = ts.createProgram(sources, config.options);
  const checker = program.getTypeChecker();
  const start = functionNamed(program.getSourceFile(path.join(root, "src/loop/call-model.ts")), "callModelStep");
  const entries = new Map<string, number>();
  const read = new Set<ts.FunctionDeclaration>();
  const walk = (declaration: ts.FunctionDeclaration, from: string | undefined): void => {
    if (read.has(declaration)) return;
    read.add(declaration);
    const here = path.relative(root, declaration.getSourceFile().fileName);
    if (here !== from) entries.set(here, (entries.get(here) ?? 0) + 1);
    const visit = (node: ts.Node): void => {
      if (ts.isCallExpression(node) && passesRun(node)) {
        const callee = declarationOf(checker, node);
        if (callee !== undefined) walk(callee, here);
      }
      ts.forEachChild(node, visit);
    };
    if (declaration.body !== undefined) ts.forEachChild(declaration.body, visit);
  };
  walk(start, undefined);
  return entries;
}

function functionNamed(file: ts.SourceFile | undefined, name: string): ts.FunctionDeclaration {
  let found: ts.FunctionDeclaration | undefined;
  if (file !== undefined)
    ts.forEachChild(file, (node) => {
      if (ts.isFunctionDeclaration(node) && node.name?.text === name) found = node;
    });
  if (found === undefined) throw new Error(`${name}: not found`);
  return found;
}

function passesRun(call: ts.CallExpression): boolean {
  return call.arguments.some((argument) => ts.isIdentifier(argument) && argument.text === "run");
}

// The function with a body a call resolves to, when it is declared in src/.
function declarationOf(checker: ts.TypeChecker, call: ts.CallExpression): ts.FunctionDeclaration | undefined {
  let symbol = checker.getSymbolAtLocation(call.expression);
  if (symbol === undefined) return undefined;
  if ((symbol.flags & ts.SymbolFlags.Alias) !== 0) symbol = checker.getAliasedSymbol(symbol);
  const declaration = symbol.declarations?.find(
    (candidate): candidate is ts.FunctionDeclaration =>
      ts.isFunctionDeclaration(candidate) && candidate.body !== undefined,
  );
  if (declaration === undefined || !declaration.getSourceFile().fileName.includes(`${path.sep}src${path.sep}`))
    return undefined;
  return declaration;
}
