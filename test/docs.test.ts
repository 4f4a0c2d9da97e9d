// The docs stay true to the code: every relative link in the Markdown pages resolves (the file, and
// the heading an anchor names), and every TypeScript block of every page type-checks against the
// sources as they are, and runs. Each block is its own module. A block that is not a whole program
// says what it assumes in a hidden prelude, an HTML comment right before it:
//
//   <!-- prelude
//   import { scriptedModel } from "simple-agent-loop/testing";
//   const invokeModel = scriptedModel([[{ role: "assistant", content: "Done." }]]);
//   ---
//   await viewer.close(); // after the block (optional, below a line of three dashes)
//   -->
//
// The blocks of the README and docs/guide.md get none: a new user copies them whole. Each block runs with `node` (types
// stripped) in an empty directory of its own, with test keys for every provider and their APIs
// answered in memory (test/docs/stand-in-providers.ts). A block that needs a server this test
// cannot start says so and names the test that runs the same code: `<!-- not run: … test/….test.ts -->`.
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import ts from "typescript";
import { afterAll, describe, expect, it } from "vitest";

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
/** The pages whose blocks are whole programs (no prelude): the README and the guide it leads to. */
const wholePrograms = ["README.md", "docs/guide.md"];

/** One ```ts block: where it is, its code, and what the hidden comment before it adds or says. */
type Snippet = { page: string; line: number; code: string; before: string; after: string; notRun?: string };

// Under the repository, so that the package's name resolves to its sources; removed at the end.
const folder = join(root, ".doc-snippets");
afterAll(() => rmSync(folder, { recursive: true, force: true }));

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

  it("every TypeScript block type-checks against today's sources, with only the prelude it declares", () => {
    const snippets = snippetsOf(pages);
    expect(snippets.length).toBeGreaterThan(20);
    const withPrelude = snippets.filter(
      (snippet) => wholePrograms.includes(snippet.page) && snippet.before + snippet.after !== "",
    );
    expect(
      withPrelude.map((snippet) => `${snippet.page}:${snippet.line}`),
      "a snippet of the README or the guide is a whole program a new user copies: no prelude",
    ).toStrictEqual([]);
    expect(diagnosticsOf(snippets)).toStrictEqual([]);
  }, 120_000);

  it("every TypeScript block runs, offline, to its end", async () => {
    const snippets = snippetsOf(pages);
    const failures: string[] = [];
    for (const snippet of snippets.filter((snippet) => snippet.notRun !== undefined)) {
      const named = /\btest\/[\w./-]+\.test\.ts\b/.exec(snippet.notRun!)?.[0];
      if (named === undefined || !existsSync(join(root, named)))
        failures.push(`${snippet.page}:${snippet.line}: "not run" must name the test that runs this code`);
    }
    mkdirSync(folder, { recursive: true });
    const queue = snippets.filter((snippet) => snippet.notRun === undefined);
    const worker = async (): Promise<void> => {
      for (let snippet = queue.shift(); snippet !== undefined; snippet = queue.shift()) {
        const problem = await runSnippet(snippet);
        if (problem !== undefined) failures.push(`${snippet.page}:${snippet.line}: ${problem}`);
      }
    };
    await Promise.all([worker(), worker(), worker()]);
    expect(failures).toStrictEqual([]);
  }, 600_000);
});

function snippetsOf(from: readonly string[]): Snippet[] {
  const snippets: Snippet[] = [];
  for (const page of from) {
    const text = readFileSync(join(root, page), "utf8");
    for (const match of text.matchAll(/```ts\n([\s\S]*?)```/g)) {
      const line = text.slice(0, match.index).split("\n").length;
      const snippet: Snippet = { page, line, code: match[1]!, before: "", after: "" };
      // The HTML comments right before the block, nearest last.
      let above = text.slice(0, match.index);
      for (let comment = /<!--((?:(?!<!--)[\s\S])*?)-->\s*$/.exec(above); comment !== null;) {
        const said = comment[1]!.trim();
        if (said.startsWith("prelude")) {
          const [before = "", after = ""] = said.slice("prelude".length).split(/^---$/m);
          snippet.before = `${before.trim()}\n`;
          snippet.after = `\n${after.trim()}\n`;
        } else if (said.startsWith("not run:")) snippet.notRun = said;
        above = above.slice(0, comment.index);
        comment = /<!--((?:(?!<!--)[\s\S])*?)-->\s*$/.exec(above);
      }
      snippets.push(snippet);
    }
  }
  return snippets;
}

// A snippet's module: its prelude, the block, what comes after it.
function moduleOf(snippet: Snippet): string {
  return `${snippet.before}${snippet.code}${snippet.after}\nexport {};\n`;
}

function fileOf(snippet: Snippet): string {
  return join(folder, `${snippet.page.replace(/[/.]/g, "_")}_${snippet.line}.ts`);
}

// Runs one snippet with node in an empty directory: the reason it failed, if it did.
async function runSnippet(snippet: Snippet): Promise<string | undefined> {
  const stubs = join(root, "test", "docs", "stand-in-providers.ts");
  const file = fileOf(snippet).replace(
    /\.ts$/,
    /from "(vitest|simple-agent-loop\/store\/testing)"/.test(snippet.code) ? ".test.ts" : ".ts",
  );
  writeFileSync(file, moduleOf(snippet));
  const cwd = mkdtempSync(join(tmpdir(), "doc-snippet-"));
  // What the README's snippets read: a screenshot (a 1x1 PNG).
  writeFileSync(
    join(cwd, "screenshot.png"),
    Buffer.from(
      "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg==",
      "base64",
    ),
  );
  // A snippet of a test suite (the stores' conformance suite) runs under vitest, as its page says.
  const suite = /from "(vitest|simple-agent-loop\/store\/testing)"/.test(snippet.code);
  const command = suite
    ? [join(root, "node_modules", "vitest", "vitest.mjs"), "run", "--config", snippetConfig(), file]
    : ["--conditions=simple-agent-loop-source", "--import", stubs, file];
  // A snippet runs as a reader runs it on their machine: no keys of ours, and no CI variable
  // (with CI set, a cassette refuses to record, which the guide's cassette snippet shows locally).
  const environment = Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) => !/^(ANTHROPIC_|OPENAI_|GEMINI_|GOOGLE_|AWS_|DATABASE_URL$|SIMPLE_AGENT_LOOP_|CI$)/.test(name),
    ),
  );
  try {
    await new Promise<void>((resolve, reject) => {
      execFile(
        process.execPath,
        command,
        {
          cwd,
          timeout: 90_000,
          env: {
            ...environment,
            ANTHROPIC_API_KEY: "test-key",
            OPENAI_API_KEY: "test-key",
            GEMINI_API_KEY: "test-key",
          },
        },
        (error, stdout) => (error === null ? resolve() : reject(new Error(`${error.message}\n${suite ? stdout : ""}`))),
      );
    });
    return undefined;
  } catch (error) {
    return (error as Error).message.slice(0, 2_000);
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
}

// The repository's vitest settings (how the package's name resolves), for the snippets' folder.
function snippetConfig(): string {
  const config = join(folder, "vitest.config.ts");
  writeFileSync(
    config,
    [
      'import base from "../vitest.config.ts";',
      `export default { ...base, root: ${JSON.stringify(root)}, test: { ...base.test, include: [".doc-snippets/*.test.ts"], globalSetup: [] } };`,
      "",
    ].join("\n"),
  );
  return config;
}

function diagnosticsOf(snippets: readonly Snippet[]): string[] {
  const modules = new Map(snippets.map((snippet) => [fileOf(snippet), moduleOf(snippet)]));
  return typeCheck(modules).map((diagnostic) => {
    const where =
      diagnostic.file === undefined
        ? ""
        : `${diagnostic.file.fileName.slice(root.length + 1)}:${diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start ?? 0).line + 1}: `;
    return where + ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n");
  });
}

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
