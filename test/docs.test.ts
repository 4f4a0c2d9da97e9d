// The docs stay true to the code: every relative link in the Markdown pages resolves (the file, and
// the heading an anchor names), and every TypeScript block type-checks against the sources as they
// are. Each block is checked as its own module, in memory; the names the deeper docs' prose takes as
// given (`invokeModel`, `tools`, `session`…) are declared once for them; the README's blocks get none.
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..");
const pages = [
  "README.md",
  "CONTRIBUTING.md",
  "bench/README.md",
  ...readdirSync(join(root, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
];
const fence = /```[\s\S]*?```/g;

describe("docs", () => {
  it("every relative link resolves to a file, and an anchor to one of its headings", () => {
    const broken: string[] = [];
    for (const page of pages) {
      const text = readFileSync(join(root, page), "utf8").replace(fence, "");
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (target === undefined || /^[a-z]+:/.test(target)) continue;
        const [path = "", anchor] = target.split("#");
        const file = path === "" ? join(root, page) : join(root, dirname(page), path);
        if (!existsSync(file)) broken.push(`${page}: ${target} (no such file)`);
        else if (anchor !== undefined && file.endsWith(".md") && !headingSlugs(file).has(anchor))
          broken.push(`${page}: ${target} (no such heading)`);
      }
    }
    expect(broken).toStrictEqual([]);
  });

  it("every TypeScript block of the deeper docs type-checks against today's sources", () => {
    const snippets = snippetsOf(pages.filter((page) => page !== "README.md"));
    snippets.set(join(root, ".doc-snippets", "given.d.ts"), given);
    expect(snippets.size).toBeGreaterThan(10);
    expect(diagnosticsOf(snippets)).toStrictEqual([]);
  }, 120_000);

  // The README's snippets are copied by new users: each is a whole module, nothing given.
  // (test/package.test.ts also type-checks and runs them in a new project with the packed package.)
  it("every TypeScript block of the README type-checks as written, with nothing declared for it", () => {
    const snippets = snippetsOf(["README.md"]);
    expect(snippets.size).toBeGreaterThan(10);
    const diagnostics = diagnosticsOf(snippets);
    expect(
      diagnostics,
      "a README snippet is a complete program: import and define every name it uses (no prelude declares invokeModel, tools, session…)",
    ).toStrictEqual([]);
  }, 120_000);
});

function snippetsOf(from: readonly string[]): Map<string, string> {
  const snippets = new Map<string, string>();
  for (const page of from) {
    const text = readFileSync(join(root, page), "utf8");
    for (const match of text.matchAll(/```ts\n([\s\S]*?)```/g)) {
      const line = text.slice(0, match.index).split("\n").length;
      snippets.set(
        join(root, ".doc-snippets", `${page.replace(/[/.]/g, "_")}_${line}.ts`),
        `${match[1]}\nexport {};\n`,
      );
    }
  }
  return snippets;
}

function diagnosticsOf(snippets: ReadonlyMap<string, string>): string[] {
  return typeCheck(snippets).map((diagnostic) => {
    const where =
      diagnostic.file === undefined
        ? ""
        : `${diagnostic.file.fileName.slice(root.length + 1)}:${diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start ?? 0).line + 1}: `;
    return where + ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n");
  });
}

// The names the deeper docs' snippets use without defining them, each standing for what the prose says.
const given = `
import type { InvokeModel, Session, Tool, ToolDefinition } from "simple-agent-loop";
import type * as zod from "zod";
declare global {
  var invokeModel: InvokeModel;
  var cheapModel: InvokeModel;
  var tools: ToolDefinition[];
  var session: Session;
  var sessionId: string;
  var token: string;
  var signal: AbortSignal;
  var add: Tool<{ a: number; b: number }>;
  var z: typeof zod.z;
}
export {};
`;

// GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens.
function headingSlugs(file: string): Set<string> {
  const text = readFileSync(file, "utf8").replace(fence, "");
  return new Set(
    [...text.matchAll(/^#{1,6} (.*)$/gm)].map(([, heading = ""]) =>
      heading
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\s_-]/gu, "")
        .replace(/\s/g, "-"),
    ),
  );
}

// The repository's own compiler options; the snippets live only in memory, under the repository
// root, so the package's name resolves to its sources as it does for the tests.
function typeCheck(snippets: ReadonlyMap<string, string>): readonly ts.Diagnostic[] {
  const configFile = join(root, "tsconfig.json");
  const config = ts.getParsedCommandLineOfConfigFile(
    configFile,
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined },
  );
  if (config === undefined) throw new Error(`cannot read ${configFile}`);
  const disk = ts.createCompilerHost(config.options);
  const host: ts.CompilerHost = {
    ...disk,
    fileExists: (name) => snippets.has(name) || disk.fileExists(name),
    readFile: (name) => snippets.get(name) ?? disk.readFile(name),
    getSourceFile: (name, language, onError, create) => {
      const text = snippets.get(name);
      return text === undefined
        ? disk.getSourceFile(name, language, onError, create)
        : ts.createSourceFile(name, text, language);
    },
  };
  const program = ts.createProgram({
    rootNames: [...snippets.keys()],
    options: { ...config.options, noEmit: true },
    host,
  });
  return ts.getPreEmitDiagnostics(program);
}
