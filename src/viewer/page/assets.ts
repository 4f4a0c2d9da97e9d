import { existsSync, readFileSync } from "node:fs";

/**
 * The page: an empty shell its script fills. Plain HTML, CSS and ES modules (checked JavaScript,
 * `tsconfig.json` beside them), served as they are, without a build step.
 */
export const pageHtml = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Session viewer</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/assets/style.css">
<script type="module" src="/assets/app.js"></script>
</head>
<body>
<div id="app"><p class="status">Loading…</p></div>
</body>
</html>
`;

const javascript = "text/javascript; charset=utf-8";

/**
 * The page's files, by the URL path they are served at, with their content types. Only what is
 * listed here is served: a new page file must be added (test/viewer/page-scripts.test.ts fails
 * until it is).
 */
const pageFiles: ReadonlyArray<readonly [file: string, type: string]> = [
  ["app.js", javascript],
  ["get-json.js", javascript],
  ["token.js", javascript],
  ["list-view.js", javascript],
  ["session-view.js", javascript],
  ["clipped-blocks.js", javascript],
  ["session-heading.js", javascript],
  ["session-totals.js", javascript],
  ["session-problems.js", javascript],
  ["turn-nodes.js", javascript],
  ["timeline.js", javascript],
  ["entry-check.js", javascript],
  ["turn-stats.js", javascript],
  ["context-usage.js", javascript],
  ["model-cost.js", javascript],
  ["render.js", javascript],
  ["approval-view.js", javascript],
  ["task-view.js", javascript],
  ["program-calls-view.js", javascript],
  ["content-view.js", javascript],
  ["edit-diff.js", javascript],
  ["chart.js", javascript],
  ["dom.js", javascript],
  ["stream.js", javascript],
  ["style.css", "text/css; charset=utf-8"],
];

/** The page's assets by URL path, with their content types; read once, when the viewer is loaded. */
export const assets: ReadonlyMap<string, { type: string; body: string }> = readAssets(pageDirectory());

function readAssets(directory: URL): ReadonlyMap<string, { type: string; body: string }> {
  return new Map(
    pageFiles.map(([file, type]) => [
      `/assets/${file}`,
      { type, body: readFileSync(new URL(file, directory), "utf8") },
    ]),
  );
}

// The page's files sit beside this module in src/; the compiled module in dist/viewer/page/ reads
// them from the package's src/, which is published with it (package.json "files").
function pageDirectory(): URL {
  const beside = new URL("./", import.meta.url);
  if (existsSync(new URL("app.js", beside))) return beside;
  return new URL("../../../src/viewer/page/", import.meta.url);
}
