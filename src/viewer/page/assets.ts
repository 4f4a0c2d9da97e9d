import { appScript } from "./app-script.ts";
import { chartScript } from "./chart-script.ts";
import { domScript } from "./dom-script.ts";
import { renderScript } from "./render-script.ts";
import { streamScript } from "./stream-script.ts";
import { styleSheet } from "./style-sheet.ts";
import { timelineScript } from "./timeline-script.ts";

/**
 * The page: an empty shell its script fills. Plain HTML, CSS and ES modules, no build step; served
 * from these strings so the page is found wherever the package is (src/ or dist/).
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

/** The page's assets by URL path, with their content types. */
export const assets: ReadonlyMap<string, { type: string; body: string }> = new Map([
  ["/assets/app.js", { type: javascript, body: appScript }],
  ["/assets/timeline.js", { type: javascript, body: timelineScript }],
  ["/assets/render.js", { type: javascript, body: renderScript }],
  ["/assets/chart.js", { type: javascript, body: chartScript }],
  ["/assets/dom.js", { type: javascript, body: domScript }],
  ["/assets/stream.js", { type: javascript, body: streamScript }],
  ["/assets/style.css", { type: "text/css; charset=utf-8", body: styleSheet }],
]);
