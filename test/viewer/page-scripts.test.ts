import { execFile } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { serveViewer } from "simple-agent-loop/viewer";
import { address, messageLine, tempDir } from "./helpers.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
const pageDirectory = join(root, "src/viewer/page");
const pageFiles = readdirSync(pageDirectory).filter((name) => name.endsWith(".js") || name.endsWith(".css"));

describe("the viewer page's scripts", () => {
  it("type-check with the DOM's types (src/viewer/page/tsconfig.json, strict)", () => {
    const configPath = join(pageDirectory, "tsconfig.json");
    const config = ts.getParsedCommandLineOfConfigFile(
      configPath,
      {},
      {
        ...ts.sys,
        onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
          throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"));
        },
      },
    );
    expect(config).toBeDefined();
    expect(config!.options.checkJs).toBe(true);
    expect(config!.options.strict).toBe(true);
    expect(config!.fileNames.map((file) => file.slice(pageDirectory.length + 1)).sort()).toStrictEqual(
      pageFiles.filter((name) => name.endsWith(".js")).sort(),
    );
    const program = ts.createProgram(config!.fileNames, config!.options);
    const diagnostics = ts.getPreEmitDiagnostics(program).map((diagnostic) => {
      const where =
        diagnostic.file && diagnostic.start !== undefined
          ? diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start)
          : undefined;
      return `${diagnostic.file?.fileName ?? ""}:${where ? where.line + 1 : ""} ${ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n")}`;
    });
    expect(diagnostics).toStrictEqual([]);
  }, 120_000);

  it("are served as they are on disk, every one of them, and import only each other", async () => {
    const path = join(tempDir(), "one.jsonl");
    writeFileSync(path, messageLine({ role: "user", content: "hello" }));
    const viewer = await serveViewer(path);
    try {
      for (const name of pageFiles) {
        const response = await fetch(address(viewer, `assets/${name}`));
        expect(response.status, name).toBe(200);
        expect(response.headers.get("content-type"), name).toBe(
          name.endsWith(".js") ? "text/javascript; charset=utf-8" : "text/css; charset=utf-8",
        );
        const body = await response.text();
        expect(body, name).toBe(readFileSync(join(pageDirectory, name), "utf8"));
        for (const [, imported] of body.matchAll(/^import [^;]* from "\.\/([^"]+)";$/gm))
          expect(pageFiles, `${name} imports ${imported}`).toContain(imported);
      }
    } finally {
      await viewer.close();
    }
  });

  it("ship in the package, and the compiled viewer (dist/viewer/page/) reads them from the package's src/", async () => {
    const { stdout } = await promisify(execFile)("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], {
      cwd: root,
    });
    const packed = (JSON.parse(stdout) as { files: { path: string }[] }[])[0]!.files.map((file) => file.path);
    for (const name of [...pageFiles, "tsconfig.json"]) expect(packed).toContain(`src/viewer/page/${name}`);

    // The published layout: the compiled module in dist/, the page's files only in src/.
    const installed = tempDir();
    const compiled = ts.transpileModule(readFileSync(join(pageDirectory, "assets.ts"), "utf8"), {
      compilerOptions: {
        module: ts.ModuleKind.ESNext,
        target: ts.ScriptTarget.ES2023,
        rewriteRelativeImportExtensions: true,
      },
    }).outputText;
    mkdirSync(join(installed, "dist/viewer/page"), { recursive: true });
    writeFileSync(join(installed, "dist/viewer/page/assets.js"), compiled);
    writeFileSync(join(installed, "package.json"), JSON.stringify({ type: "module" }));
    cpSync(pageDirectory, join(installed, "src/viewer/page"), { recursive: true });
    const script = `const { assets } = await import(${JSON.stringify(join(installed, "dist/viewer/page/assets.js"))});
        console.log(JSON.stringify(Object.fromEntries([...assets].map(([path, asset]) => [path, asset.body.length]))));`;
    const { stdout: served } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script], {
      cwd: installed,
    });
    expect(JSON.parse(served)).toStrictEqual(
      Object.fromEntries(
        pageFiles.map((name) => [`/assets/${name}`, readFileSync(join(pageDirectory, name), "utf8").length]),
      ),
    );
  }, 120_000);
});
