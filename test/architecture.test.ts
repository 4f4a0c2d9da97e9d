/**
 * The architecture's rules, checked on every run (static analysis of src/ with the TypeScript parser;
 * no network, no build). Each rule is one `it`; its failure message names every file and line that
 * breaks it. The self-tests at the end prove each checker catches a violation, so no rule passes
 * because its checker sees nothing.
 *
 * 1. No import cycles among src/ files: static `import` and `export ... from`, `import type` included
 *    (a lazy `import("x")` is how a load-time dependency is deferred, so it is not an edge here); and
 *    none among src/ folders either (the root files count as one folder, the public index apart):
 *    what two folders share lives in a folder below both.
 * 2. Layers. The core is the src/ root files, src/shared/ (the abort race, the tool schema type),
 *    src/model/ (the provider contract), src/tools/, src/guardrails/, src/loop/ and src/agents/
 *    (handoffs, which run the loop); the subsystems are src/providers/,
 *    store, viewer, cli, otel, mcp, restate, testing, http.
 *    - src/providers/** imports only src/model/**, session.ts, errors.ts, numeric-options.ts, the
 *      shared files of src/providers/, its own provider's folder (never another provider), and
 *      src/shared/tool-schema.ts with `import type` (tool schemas).
 *    - src/model/** imports only src/model/**, the root files (not the public index) and src/shared/**.
 *    - src/guardrails/** imports only itself, the root files, src/shared/, src/model/ and src/tools/
 *      (never the loop or the agents, which run it).
 *    - The core never imports a subsystem: subsystems import the core, never the reverse.
 *    - src/store/** imports only src/store/**, session.ts and errors.ts.
 *    - No src/ file imports from test/ or bench/.
 *    - At most 6 `.ts` files at the src/ root.
 *    (Layer rules count lazy `import("x")` too: a deferred dependency is still a dependency.)
 * 3. No function in src/ (declaration, method, accessor, arrow, function expression; .ts and the
 *    viewer page's .js) is longer than 100 lines, first line to last.
 * 4. No comment in src/ cites a document outside the repository (a seed and its sections, "the
 *    Python package", an issue number): a comment states its rule instead.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { commentCitations } from "./architecture/comment-citations.ts";
import { findCycles } from "./architecture/cycles.ts";
import { folderGraph, folderOf } from "./architecture/folders.ts";
import type { ImportGraph } from "./architecture/cycles.ts";
import { importsOf } from "./architecture/imports.ts";
import type { ImportEdge } from "./architecture/imports.ts";
import {
  coreImportViolations,
  corePeerImportViolations,
  guardrailImportViolations,
  isRootFile,
  maxRootFiles,
  modelImportViolations,
  providerImportViolations,
  storeImportViolations,
  testImportViolations,
} from "./architecture/layer-rules.ts";
import { longFunctions } from "./architecture/long-functions.ts";
import { parseSource, readSourceFiles } from "./architecture/source-files.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
const sources = readSourceFiles(root, "src");
const edges = sources.flatMap(importsOf);
const maxFunctionLines = 100;
const packageJson = JSON.parse(readFileSync(`${root}/package.json`, "utf8")) as {
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
};
const optionalPeers = Object.entries(packageJson.peerDependenciesMeta ?? {})
  .filter(([, meta]) => meta.optional === true)
  .map(([name]) => name);

describe("the architecture of src/", () => {
  it("has no import cycles", () => {
    const cycles = findCycles(staticGraph(edges, new Set(sources.map((file) => file.path))));
    expect(
      cycles.map((cycle) => cycle.join(" -> ")),
      "import cycles (break each: move the shared piece to the lower file, or import a type from where it is declared)",
    ).toStrictEqual([]);
  });

  it("has no import cycles between folders", () => {
    const cycles = findCycles(folderGraph(edges, new Set(sources.map((file) => file.path))));
    expect(
      cycles.map((cycle) => cycle.join(" -> ")),
      "folders importing each other (type-only imports included: move what both use to a folder below both)",
    ).toStrictEqual([]);
  });

  it("keeps providers on the model contract, the session, errors, numeric options and tool schema types", () => {
    expect(
      providerImportViolations(edges).map(describeEdge),
      "imports from src/providers/ outside what a provider may depend on",
    ).toStrictEqual([]);
  });

  it("keeps the model contract on itself, the root files and src/shared/", () => {
    expect(
      modelImportViolations(edges).map(describeEdge),
      "imports from src/model/ outside the model contract, the root files and src/shared/",
    ).toStrictEqual([]);
  });

  it("keeps the guardrails below the loop: on the root files, shared, model and tools", () => {
    expect(
      guardrailImportViolations(edges).map(describeEdge),
      "imports from src/guardrails/ of the loop, the agents or a subsystem",
    ).toStrictEqual([]);
  });

  it("never has the core (root files, shared, model, tools, guardrails, loop, agents) import a subsystem", () => {
    expect(
      coreImportViolations(edges).map(describeEdge),
      "core files importing a subsystem (the subsystem should import the core instead)",
    ).toStrictEqual([]);
  });

  it("has the core load an optional peer only lazily, with import()", () => {
    expect(optionalPeers).toContain("quickjs-emscripten-core");
    expect(
      corePeerImportViolations(edges, optionalPeers).map(describeEdge),
      "core files importing an optional peer statically (load it with import() where a run needs it)",
    ).toStrictEqual([]);
  });

  it("keeps the store on the session and errors", () => {
    expect(
      storeImportViolations(edges).map(describeEdge),
      "imports from src/store/ outside the store, the session and errors",
    ).toStrictEqual([]);
  });

  it("never has src/ import from test/ or bench/", () => {
    expect(testImportViolations(edges).map(describeEdge), "src/ files importing tests or benchmarks").toStrictEqual([]);
  });

  it(`keeps at most ${maxRootFiles} .ts files at the src/ root`, () => {
    const rootSources = sources.map((file) => file.path).filter(isRootFile);
    expect(
      rootSources.length,
      `files at the src/ root: ${rootSources.join(", ")} (move a concept into its folder)`,
    ).toBeLessThanOrEqual(maxRootFiles);
  });

  it(`has no function longer than ${maxFunctionLines} lines`, () => {
    const found = sources.flatMap((file) => longFunctions(file, maxFunctionLines));
    expect(
      found.map(({ where, name, lines }) => `${where} ${name} ${lines} lines`),
      "functions to split into named phases",
    ).toStrictEqual([]);
  });

  it("has no comment citing a document outside the repository", () => {
    expect(sources.flatMap(commentCitations), "comments to rewrite as the rule they refer to").toStrictEqual([]);
  });
});

describe("the architecture checks themselves", () => {
  it("find a cycle, print it closed, and find none in a graph without one", () => {
    const graph: ImportGraph = new Map([
      ["src/a.ts", ["src/b.ts"]],
      ["src/b.ts", ["src/c.ts", "src/d.ts"]],
      ["src/c.ts", ["src/a.ts"]],
      ["src/d.ts", ["src/d.ts"]],
      ["src/e.ts", ["src/a.ts"]],
    ]);
    expect(findCycles(graph)).toStrictEqual([
      ["src/a.ts", "src/b.ts", "src/c.ts", "src/a.ts"],
      ["src/d.ts", "src/d.ts"],
    ]);
    expect(
      findCycles(
        new Map([
          ["src/a.ts", ["src/b.ts"]],
          ["src/b.ts", []],
        ]),
      ),
    ).toStrictEqual([]);
  });

  it("find a cycle between folders made of type-only imports, and none within one folder", () => {
    const file = (path: string, text: string) => importsOf(parseSource(path, text));
    const edges = [
      ...file("src/model/m.ts", 'import type { T } from "../tools/t.ts";\nimport { n } from "./n.ts";'),
      ...file("src/tools/t.ts", 'import type { E } from "../loop/e.ts";'),
      ...file("src/loop/e.ts", 'import { m } from "../model/m.ts";\nconst l = () => import("../cli/c.ts");'),
      ...file("src/cli/c.ts", 'import { l } from "../loop/e.ts";'),
      ...file("src/index.ts", 'export { m } from "./model/m.ts";'),
    ];
    const files = new Set([
      "src/model/m.ts",
      "src/model/n.ts",
      "src/tools/t.ts",
      "src/loop/e.ts",
      "src/cli/c.ts",
      "src/index.ts",
    ]);
    expect(findCycles(folderGraph(edges, files))).toStrictEqual([["src/loop", "src/model", "src/tools", "src/loop"]]);
    expect(findCycles(folderGraph(edges.slice(1), files))).toStrictEqual([]);
    expect(["src/session.ts", "src/index.ts", "src/providers/openai/chat.ts"].map(folderOf)).toStrictEqual([
      "src",
      "src/index.ts",
      "src/providers",
    ]);
  });

  it("read every kind of import, type-only and lazy ones marked, and resolve relative specifiers", () => {
    const file = parseSource(
      "src/loop/x.ts",
      [
        'import { a } from "./a.ts";',
        'import type { B } from "../b.ts";',
        'import { type C } from "./c.ts";',
        'export { d } from "./d.ts";',
        'export type { E } from "./e.ts";',
        'import { readFileSync } from "node:fs";',
        'const f = () => import("../cli/f.ts");',
        'let g: import("./g.ts").G;',
      ].join("\n"),
    );
    expect(
      importsOf(file).map(({ target, specifier, typeOnly, dynamic, line }) => [
        line,
        target ?? specifier,
        typeOnly,
        dynamic,
      ]),
    ).toStrictEqual([
      [1, "src/loop/a.ts", false, false],
      [2, "src/b.ts", true, false],
      [3, "src/loop/c.ts", false, false],
      [4, "src/loop/d.ts", false, false],
      [5, "src/loop/e.ts", true, false],
      [6, "node:fs", false, false],
      [7, "src/cli/f.ts", false, true],
      [8, "src/loop/g.ts", true, false],
    ]);
    const page = parseSource("src/viewer/page/a.js", '/** @typedef {import("./b.js").B} B */\nexport const a = 1;\n');
    expect(importsOf(page).map(({ target, typeOnly }) => [target, typeOnly])).toStrictEqual([
      ["src/viewer/page/b.js", true],
    ]);
  });

  it("catch each layer violation and let allowed imports through", () => {
    const synthetic = (path: string, text: string): ImportEdge[] => importsOf(parseSource(path, text));
    const provider = synthetic(
      "src/providers/acme/acme.ts",
      [
        'import type { ToolSchema } from "../../shared/tool-schema.ts";',
        'import { tool } from "../../tools/tool.ts";',
        'import { runLoop } from "../../loop/loop.ts";',
        'import { sse } from "../sse.ts";',
        'import { convert } from "./convert.ts";',
        'import { toGemini } from "../google/convert.ts";',
      ].join("\n"),
    );
    expect(providerImportViolations(provider).map((edge) => edge.line)).toStrictEqual([2, 3, 6]);
    expect(
      providerImportViolations(synthetic("src/providers/http.ts", 'import { a } from "./acme/acme.ts";')).map(
        (edge) => edge.line,
      ),
    ).toStrictEqual([1]);
    const model = synthetic(
      "src/model/m.ts",
      [
        'import type { Tool } from "../tools/tool.ts";',
        'import { x } from "../loop/events.ts";',
        'import { y } from "../index.ts";',
        'import type { AbortRace } from "../shared/abort.ts";',
      ].join("\n"),
    );
    expect(modelImportViolations(model).map((edge) => edge.line)).toStrictEqual([1, 2, 3]);
    const core = synthetic(
      "src/loop/l.ts",
      [
        'import type { Store } from "../store/index.ts";',
        'const v = () => import("../viewer/index.ts");',
        'import { t } from "../tools/tool.ts";',
      ].join("\n"),
    );
    expect(coreImportViolations(core).map((edge) => edge.line)).toStrictEqual([1, 2]);
    const peers = synthetic(
      "src/tools/code-mode/p.ts",
      [
        'import { newVariant } from "quickjs-emscripten-core";',
        'import type { QuickJSContext } from "quickjs-emscripten-core";',
        'const lazy = () => import("quickjs-emscripten-core");',
        'import { transform } from "sucrase/dist/index.js";',
        'import { Validator } from "@cfworker/json-schema";',
      ].join("\n"),
    );
    expect(
      corePeerImportViolations(peers, ["quickjs-emscripten-core", "sucrase"]).map((edge) => edge.line),
    ).toStrictEqual([1, 4]);
    const guardrails = synthetic(
      "src/guardrails/g.ts",
      [
        'import type { ToolHooks } from "../tools/tool-hooks.ts";',
        'import type { AgentEvent } from "../loop/events.ts";',
        'import { notifySessionChange } from "../session.ts";',
        'import { runAgent } from "../agents/run-agent.ts";',
      ].join("\n"),
    );
    expect(guardrailImportViolations(guardrails).map((edge) => edge.line)).toStrictEqual([2, 4]);
    const store = synthetic(
      "src/store/s.ts",
      [
        'import type { Session } from "../session.ts";',
        'import { f } from "./file-store.ts";',
        'import type { AgentEvent } from "../loop/events.ts";',
      ].join("\n"),
    );
    expect(storeImportViolations(store).map((edge) => edge.line)).toStrictEqual([3]);
    expect(
      testImportViolations(synthetic("src/store/s.ts", 'import { h } from "../../test/helpers.ts";')).map(
        (edge) => edge.line,
      ),
    ).toStrictEqual([1]);
  });

  it("measure a function first line to last, and only flag one over the limit", () => {
    const body = (lines: number): string =>
      Array.from({ length: lines - 2 }, (_, index) => `  step(${index});`).join("\n");
    const file = parseSource(
      "src/x.ts",
      `export function fits() {\n${body(100)}\n}\nclass K {\n  long() {\n${body(101)}\n  }\n}\nconst arrow = () => {\n${body(101)}\n};\n`,
    );
    expect(longFunctions(file, maxFunctionLines)).toStrictEqual([
      { where: "src/x.ts:102", name: "K.long", lines: 101 },
      { where: "src/x.ts:204", name: "arrow", lines: 101 },
    ]);
  });

  it("find citations in every kind of comment, never in strings", () => {
    const file = parseSource(
      "src/x.ts",
      [
        "// see seed 003",
        "/** As the Python package does. */",
        'const s = "§ 2 and issue 15 in a string";',
        "function f() {",
        "  return s; /* issue #12 */",
        "  // trailing §4",
        "}",
      ].join("\n"),
    );
    expect(commentCitations(file)).toStrictEqual([
      "src/x.ts:1: // see seed 003",
      "src/x.ts:2: /** As the Python package does. */",
      "src/x.ts:5: /* issue #12 */",
      "src/x.ts:6: // trailing §4",
    ]);
  });
});

/** The edges the cycle rule counts: static imports (type-only included) between files of src/. */
function staticGraph(all: readonly ImportEdge[], files: ReadonlySet<string>): ImportGraph {
  const graph = new Map<string, string[]>([...files].map((file) => [file, []]));
  for (const edge of all) {
    if (edge.dynamic || edge.target === undefined || !files.has(edge.target)) continue;
    const targets = graph.get(edge.from)!;
    if (!targets.includes(edge.target)) targets.push(edge.target);
  }
  return graph;
}

function describeEdge(edge: ImportEdge): string {
  return `${edge.from}:${edge.line} imports ${edge.typeOnly ? "type " : ""}${edge.dynamic ? "lazily " : ""}"${edge.specifier}"`;
}
