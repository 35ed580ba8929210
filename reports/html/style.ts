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
footer { color: var(--muted); font-size: 12px; padding: 24px; border-top: 1px solid var(--line); margin-top: 32px; }
`;
