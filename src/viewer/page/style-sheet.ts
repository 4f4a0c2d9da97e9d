/** `/assets/style.css`: dense, readable, light and dark. Chart colours are shared with the totals. */
export const styleSheet = String.raw`
:root {
  color-scheme: light dark;
  --bg: #f4f5f7; --panel: #ffffff; --text: #1f2328; --muted: #636c76; --faint: #656d76; --border: #d8dee4; --soft: #eef1f4;
  --input: #2f6fdf; --output: #e8833a; --time: #8a63d2;
  --ok: #187733; --ok-bg: #dafbe1; --error: #cf222e; --error-bg: #ffebe9; --pending: #9a6700; --pending-bg: #fff8c5;
  --user: #0969da; --user-bg: #ddf4ff; --assistant: #1f2328; --thinking: #6e7781; --compaction: #8250df; --compaction-bg: #fbefff;
  --mono: ui-monospace, SFMono-Regular, "SF Mono", Menlo, Consolas, "Liberation Mono", monospace;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #0d1117; --panel: #161b22; --text: #e6edf3; --muted: #9198a1; --faint: #8b949e; --border: #30363d; --soft: #21262d;
    --input: #4c8dff; --output: #f0883e; --time: #a371f7;
    --ok: #3fb950; --ok-bg: #12261e; --error: #f85149; --error-bg: #2d1214; --pending: #d29922; --pending-bg: #2e2410;
    --user: #58a6ff; --user-bg: #10243e; --assistant: #e6edf3; --thinking: #9198a1; --compaction: #bc8cff; --compaction-bg: #231a33;
  }
}
* { box-sizing: border-box; }
html { scroll-padding-top: 56px; }
body { margin: 0; background: var(--bg); color: var(--text); font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
a { color: var(--user); text-decoration: none; }
a:hover { text-decoration: underline; }
pre, code { font-family: var(--mono); font-size: 12.5px; }
[hidden] { display: none !important; }

.bar { position: sticky; top: 0; z-index: 10; display: flex; align-items: center; gap: 14px; padding: 8px 20px; background: var(--panel); border-bottom: 1px solid var(--border); }
.bar h1 { margin: 0; font-size: 15px; font-weight: 600; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.back { color: var(--muted); white-space: nowrap; }
.status { font-size: 12px; color: var(--muted); }
.status.live::before { content: ""; display: inline-block; width: 8px; height: 8px; margin-right: 6px; border-radius: 50%; background: var(--ok); }
.status.reconnecting { color: var(--pending); }
.toggle { margin-left: auto; font: inherit; font-size: 12px; padding: 3px 10px; border: 1px solid var(--border); border-radius: 6px; background: var(--soft); color: var(--text); cursor: pointer; }

.overview, .timeline, .list, .problems { max-width: 1180px; margin: 0 auto; padding: 0 20px; }
.overview { padding-top: 16px; }
.totals { display: flex; flex-wrap: wrap; gap: 8px; margin-bottom: 10px; }
.total { display: flex; align-items: baseline; gap: 6px; padding: 6px 12px; background: var(--panel); border: 1px solid var(--border); border-radius: 8px; }
.total-value { font-size: 16px; font-weight: 600; font-variant-numeric: tabular-nums; }
.total-label { color: var(--muted); font-size: 12px; }
.total.input { border-left: 4px solid var(--input); }
.total.output { border-left: 4px solid var(--output); }
.total.time { border-left: 4px solid var(--time); }
.total.pending { border-left: 4px solid var(--pending); background: var(--pending-bg); }
.chart { background: var(--panel); border: 1px solid var(--border); border-radius: 8px; padding: 10px 12px 6px; }
.chart svg { display: block; overflow: visible; }
.chart .row-label { font-size: 12px; font-weight: 600; fill: var(--text); }
.chart .row-value, .chart .axis { font-size: 11px; fill: var(--muted); }
.chart .baseline { stroke: var(--border); }
.chart .inputTokens { fill: var(--input); }
.chart .outputTokens { fill: var(--output); }
.chart .durationMs { fill: var(--time); }
.chart .hit { fill: transparent; }
.chart .turn-bars { cursor: pointer; }
.chart .turn-bars:hover .hit { fill: var(--soft); }

.problems { margin-top: 12px; }
.problems > * { margin: 0; }
.problems:not([hidden]) { display: block; }
div.problems { background: var(--error-bg); border: 1px solid var(--error); border-radius: 8px; padding: 10px 14px; color: var(--text); max-width: 1140px; }
.problems ul { margin: 6px 0 0; padding-left: 18px; font-family: var(--mono); font-size: 12.5px; }
.problems .line { color: var(--error); font-weight: 600; }
.problem-title, .problem { font-weight: 600; color: var(--error); }

.timeline { padding-bottom: 30vh; }
.turn, .turn-zero { margin-top: 14px; background: var(--panel); border: 1px solid var(--border); border-radius: 8px; content-visibility: auto; contain-intrinsic-size: auto 400px; }
.turn-zero { padding: 6px 12px; }
.turn-head { display: flex; flex-wrap: wrap; align-items: baseline; gap: 10px; padding: 7px 12px; border-bottom: 1px solid var(--border); background: var(--soft); border-radius: 8px 8px 0 0; }
.turn-number { font-weight: 700; color: var(--text); }
.turn-time, .line, .tool-id, .chars { color: var(--faint); font-size: 12px; font-variant-numeric: tabular-nums; }
.turn-meta { color: var(--muted); font-size: 12.5px; }
.flags { display: inline-flex; gap: 6px; margin-left: auto; }
.flag, .badge { display: inline-block; padding: 0 7px; border-radius: 10px; font-size: 11.5px; font-weight: 600; line-height: 18px; white-space: nowrap; border: 1px solid var(--border); color: var(--muted); background: var(--panel); }
.flag.error, .badge.approval.denied { color: var(--error); background: var(--error-bg); border-color: var(--error); }
.flag.pending { color: var(--pending); background: var(--pending-bg); border-color: var(--pending); }
.flag.aborted, .badge.aborted, .flag.stop { color: var(--error); border-color: var(--error); }
.badge.approval.approved { color: var(--ok); background: var(--ok-bg); border-color: var(--ok); }
.badge.compacted, .badge.removed, .flag.removed { color: var(--compaction); border-color: var(--compaction); }
.turn-body { padding: 6px 12px 10px; }
.line { margin-left: auto; }

.msg { margin: 6px 0; }
.msg-label { font-size: 11.5px; font-weight: 700; text-transform: uppercase; letter-spacing: 0.04em; color: var(--muted); display: flex; gap: 8px; align-items: center; }
.text { white-space: pre-wrap; overflow-wrap: anywhere; max-height: 28em; overflow: auto; }
.text.clipped { cursor: zoom-in; box-shadow: inset 0 -10px 8px -8px rgba(0, 0, 0, 0.18); }
.text.empty { color: var(--muted); font-style: italic; }
.msg.user { padding: 6px 10px; background: var(--user-bg); border-left: 3px solid var(--user); border-radius: 4px; }
.msg.user .msg-label { color: var(--user); }
.msg.assistant { padding: 2px 0; }
.msg.assistant.aborted .text { color: var(--error); }
.structured { margin-top: 6px; border: 1px solid var(--border); border-radius: 6px; }
.structured .io-label { color: var(--ok); }
details > summary { cursor: pointer; list-style: none; display: flex; gap: 8px; align-items: baseline; }
details > summary::-webkit-details-marker { display: none; }
details > summary::before { content: "▸"; color: var(--faint); font-size: 11px; }
details[open] > summary::before { content: "▾"; }
.preview { color: var(--muted); overflow: hidden; text-overflow: ellipsis; white-space: nowrap; min-width: 0; flex: 1; }
details.msg.system { color: var(--muted); }
details.msg.system > .text { margin: 4px 0 0 16px; font-size: 13px; }

.step { margin: 8px 0; padding-left: 10px; border-left: 2px solid var(--border); }
/* Compacted-away history stays readable (no fading): a dashed rule in the compaction colour marks it. */
.step.removed, .msg.removed:not(.user) { border-left: 2px dashed var(--compaction); }
.msg.user.removed { border-left-style: dashed; }
.step-head { display: flex; flex-wrap: wrap; gap: 10px; align-items: baseline; font-size: 12px; color: var(--muted); }
.step-label { font-weight: 700; text-transform: uppercase; font-size: 11px; letter-spacing: 0.04em; }
.usage { font-variant-numeric: tabular-nums; }
.stop { font-family: var(--mono); font-size: 11.5px; color: var(--faint); }
.stop.unusual { color: var(--error); font-weight: 600; }
details.thinking { margin: 4px 0; color: var(--thinking); }
details.thinking > .text { margin: 4px 0 4px 16px; font-style: italic; font-size: 13px; }
details.thinking .msg-label { color: var(--thinking); }

.tool { margin: 6px 0; border: 1px solid var(--border); border-left: 3px solid var(--ok); border-radius: 6px; overflow: hidden; }
.tool.error { border-left-color: var(--error); }
.tool.pending { border-left-color: var(--pending); border-color: var(--pending); }
.tool.open { border-left-color: var(--faint); }
.tool-head { display: flex; flex-wrap: wrap; gap: 8px; align-items: baseline; padding: 4px 10px; background: var(--soft); }
.tool-status { font-size: 12px; font-weight: 700; color: var(--ok); }
.tool.error .tool-status { color: var(--error); }
.tool.pending .tool-status { color: var(--pending); }
.tool.pending .tool-status::before { content: ""; display: inline-block; width: 8px; height: 8px; margin-right: 6px; border-radius: 50%; background: var(--pending); }
.tool.open .tool-status { color: var(--muted); }
.tool.pending .tool-head { background: var(--pending-bg); }
.tool.error .tool-head { background: var(--error-bg); }
.tool-name { font-family: var(--mono); font-weight: 600; }
.tool-duration { font-size: 12px; color: var(--muted); font-variant-numeric: tabular-nums; }
.nested { border-top: 1px dashed var(--pending); padding: 0 0 6px; }
.nested-call { margin: 4px 10px; border: 1px solid var(--pending); border-radius: 6px; }
.nested-call .tool-head { background: var(--pending-bg); }
.nested-call .tool-status { color: var(--pending); }
.nested-session { margin: 4px 10px 0; font-size: 12.5px; }
.tool-io { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); }
.io { min-width: 0; }
.io + .io { border-left: 1px solid var(--border); }
.io-label { font-size: 10.5px; font-weight: 700; text-transform: uppercase; letter-spacing: 0.05em; color: var(--faint); padding: 4px 10px 0; }
.output .io-label { color: var(--ok); }
.tool.error .output .io-label { color: var(--error); }
.io-body { margin: 0; padding: 2px 10px 8px; white-space: pre-wrap; overflow-wrap: anywhere; max-height: 15em; overflow: auto; }
.io-body.clipped { cursor: zoom-in; box-shadow: inset 0 -10px 8px -8px rgba(0, 0, 0, 0.18); }
.io-body.expanded, .text.expanded { max-height: none; cursor: zoom-out; }
.tool.error .output .io-body { color: var(--error); }
.io.none .io-body { color: var(--muted); font-style: italic; }
details.original { padding: 2px 10px 6px; font-size: 12px; color: var(--muted); border-top: 1px dashed var(--border); }
.msg details.original, details.thinking details.original { border-top: none; padding-left: 16px; }
@media (max-width: 760px) { .tool-io { grid-template-columns: minmax(0, 1fr); } .io + .io { border-left: none; border-top: 1px solid var(--border); } }

.compaction { margin: 8px 0; padding: 6px 10px; border: 1px dashed var(--compaction); border-radius: 6px; background: var(--compaction-bg); }
.compaction-head { display: flex; flex-wrap: wrap; gap: 10px; align-items: baseline; font-size: 12.5px; }
.compaction-label { font-weight: 700; color: var(--compaction); }
.compaction-tokens { font-variant-numeric: tabular-nums; font-weight: 600; }
.text.summary { margin-top: 4px; font-size: 13px; max-height: 12em; }
.note { margin: 6px 0; font-size: 12px; color: var(--muted); display: flex; flex-wrap: wrap; gap: 8px; align-items: baseline; }
.note-label { font-weight: 600; }
.note pre.clip { flex-basis: 100%; margin: 0; max-height: 8em; overflow: auto; white-space: pre-wrap; }

.list { padding-top: 16px; }
table.sessions { width: 100%; border-collapse: collapse; background: var(--panel); border: 1px solid var(--border); border-radius: 8px; overflow: hidden; }
.sessions th, .sessions td { text-align: left; padding: 7px 12px; border-bottom: 1px solid var(--border); vertical-align: baseline; }
.sessions th { font-size: 12px; color: var(--muted); font-weight: 600; background: var(--soft); }
.sessions tbody tr { cursor: pointer; }
.sessions tbody tr:hover { background: var(--soft); }
.sessions .num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.sessions .title { color: var(--muted); max-width: 520px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.sessions .session-link { font-family: var(--mono); font-weight: 600; margin-right: 8px; }
.sessions .empty { color: var(--muted); font-style: italic; }
`;
