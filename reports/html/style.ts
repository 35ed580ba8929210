/** The report's whole stylesheet, inlined in the page (no fonts or files to fetch). */
export const REPORT_CSS = `
:root { color-scheme: light; --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --head: #f6f8fa; --accent: #0969da; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: #fff; }
header, main, footer { max-width: 1200px; margin: 0 auto; padding: 0 24px; }
header { padding-top: 24px; border-bottom: 1px solid var(--line); }
h1 { font-size: 24px; margin: 0 0 8px; }
h2 { font-size: 19px; margin: 32px 0 12px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
nav { margin: 0 0 16px; color: var(--muted); }
nav a { color: var(--accent); text-decoration: none; margin-right: 14px; white-space: nowrap; }
nav a:hover { text-decoration: underline; }
.table-wrap { overflow-x: auto; margin: 12px 0; }
table { border-collapse: collapse; font-size: 12.5px; }
caption { text-align: left; font-weight: 600; padding: 4px 0; white-space: nowrap; }
th, td { border: 1px solid var(--line); padding: 3px 8px; vertical-align: top; }
th { background: var(--head); text-align: left; font-weight: 600; }
td { max-width: 560px; overflow-wrap: anywhere; }
.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
tbody tr:nth-child(even) td { background: #fbfcfd; }
figure { margin: 16px 0; }
figure svg { max-width: 100%; height: auto; display: block; }
figcaption { color: var(--muted); font-size: 12.5px; margin-top: 4px; }
ul { padding-left: 20px; }
li { margin: 2px 0; }
p.note { color: var(--muted); font-size: 12.5px; margin: 4px 0; }
.findings { display: grid; gap: 12px; }
.finding { border: 1px solid var(--line); border-left: 6px solid var(--muted); border-radius: 6px; padding: 8px 14px; }
.finding.sev-high { border-left-color: #cf222e; }
.finding.sev-medium { border-left-color: #d4a72c; }
.finding.sev-low { border-left-color: #0969da; }
.finding h3 { font-size: 15px; margin: 4px 0; }
.finding-meta { color: var(--muted); margin: 2px 0 6px; }
.finding-link { margin-left: 8px; color: var(--accent); }
.finding ul { margin: 4px 0; font-size: 13px; }
figure.overview { position: relative; margin: 8px 0 0; }
figure.overview svg { width: 100%; max-width: 1100px; height: auto; }
figure.overview .it .hit { fill: transparent; }
figure.overview .it[data-open-step] { cursor: pointer; }
figure.overview .it:hover .hit { fill: rgba(9, 105, 218, 0.08); }
figure.overview .grid { stroke: #e6e6e6; }
figure.overview .zero { stroke: #59636e; }
figure.overview .tick { font-size: 11px; fill: #59636e; }
figure.overview .axis-title { font-size: 12px; fill: #1f2328; }
.mark-slow { fill: #cf222e; }
.mark-cited { fill: #1f2328; }
.mark-slow-key { color: #cf222e; }
.overview-tip, .timeline-tip { position: absolute; z-index: 2; white-space: pre-line; max-width: 420px; background: #1f2328; color: #fff; font-size: 12px; padding: 6px 8px; border-radius: 4px; pointer-events: none; overflow-wrap: anywhere; }
[hidden] { display: none !important; }
.legend { font-size: 12px; color: var(--muted); margin: 2px 0; }
.legend .key { margin-right: 10px; white-space: nowrap; }
.legend .key i { display: inline-block; width: 10px; height: 10px; margin-right: 4px; vertical-align: -1px; }
.finding-iters { margin: 2px 0; font-size: 13px; }
.finding-iters a { color: var(--accent); }
.timeline { outline: none; }
.timeline:focus-visible { box-shadow: 0 0 0 2px var(--accent); }
.timeline-steps { display: flex; flex-wrap: wrap; gap: 6px; }
.timeline-steps .step { font: inherit; font-size: 12.5px; padding: 3px 8px; border: 1px solid var(--line); border-radius: 4px; background: #fff; cursor: pointer; }
.timeline-steps .step[aria-pressed="true"] { border-color: var(--accent); background: #ddf4ff; }
.timeline-canvas-wrap { position: relative; border: 1px solid var(--line); margin-top: 6px; }
.timeline-canvas { display: block; width: 100%; cursor: grab; }
kbd { font-size: 11px; border: 1px solid var(--line); border-radius: 3px; padding: 0 3px; }
footer { color: var(--muted); font-size: 12px; padding: 24px; border-top: 1px solid var(--line); margin-top: 32px; }
`;
