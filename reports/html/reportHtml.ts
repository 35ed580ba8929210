import type { ReportBlock, ReportDocument } from '../document/document.js';
import type { ReportChart } from '../document/charts.js';
import { escapeHtml, tableToHtml } from './htmlTable.js';
import { renderCharts } from './renderCharts.js';
import { findingsToHtml } from './findingsCards.js';
import { REPORT_CSS } from './style.js';

/**
 * Nothing may be fetched when the page is viewed: no scripts, fonts, images or frames; inline
 * styles and the inline SVGs only.
 */
const CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:";

/** Every chart of a document, in order. */
export function documentCharts(doc: ReportDocument): ReportChart[] {
  return doc.sections.flatMap((s) => s.blocks.flatMap((b) => (b.kind === 'chart' ? [b.chart] : [])));
}

/** Drops the XML prolog bits an inline SVG does not need. */
function inlineSvg(svg: string): string {
  return svg.replace(/^<\?xml[^>]*>\s*/, '');
}

function blockToHtml(block: ReportBlock, svgs: ReadonlyMap<string, string>, sections: ReadonlyMap<string, string>): string {
  switch (block.kind) {
    case 'table':
      return tableToHtml(block.table);
    case 'findings':
      return findingsToHtml(block.findings, sections);
    case 'paragraph':
      return `<p>${escapeHtml(block.text)}</p>`;
    case 'list':
      return block.items.length ? `<ul>\n${block.items.map((i) => `<li>${escapeHtml(i)}</li>`).join('\n')}\n</ul>` : '';
    case 'chart': {
      const svg = svgs.get(block.chart.id);
      if (!svg) return '';
      return `<figure class="chart" id="chart-${block.chart.id}" role="img" aria-label="${escapeHtml(block.chart.title)}">\n${inlineSvg(svg)}\n<figcaption>${escapeHtml(block.chart.caption)}</figcaption>\n</figure>`;
    }
  }
}

/** The page leads with the findings, then the sections with charts, then the tables (each group in document order). */
export function htmlSectionOrder(sections: readonly ReportDocument['sections'][number][]): ReportDocument['sections'] {
  const hasChart = (s: ReportDocument['sections'][number]) => s.blocks.some((b) => b.kind === 'chart');
  const findings = sections.filter((s) => s.id === 'findings');
  const charts = sections.filter((s) => s.id !== 'findings' && hasChart(s));
  const rest = sections.filter((s) => s.id !== 'findings' && !hasChart(s));
  return [...findings, ...charts, ...rest];
}

/**
 * The document as one self-contained HTML page: inline CSS, charts rendered to inline SVG at build
 * time (Vega-Lite → Vega → SVG, no browser needed), no scripts and nothing fetched when opened
 * (a Content-Security-Policy of `default-src 'none'` enforces it).
 */
export function documentToHtml(doc: ReportDocument, svgs: ReadonlyMap<string, string>, opts: { generator?: string } = {}): string {
  doc = { ...doc, sections: htmlSectionOrder(doc.sections) };
  const nav = doc.sections.map((s) => `<a href="#${escapeHtml(s.id)}">${escapeHtml(s.title)}</a>`).join('\n');
  const titles = new Map(doc.sections.map((s) => [s.id, s.title]));
  const sections = doc.sections
    .map((s) => {
      const blocks = s.blocks.map((b) => blockToHtml(b, svgs, titles)).filter((x) => x);
      return `<section id="${escapeHtml(s.id)}">\n<h2>${escapeHtml(s.title)}</h2>\n${blocks.join('\n')}\n</section>`;
    })
    .join('\n');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${CSP}">
<title>${escapeHtml(doc.title)}</title>
<style>${REPORT_CSS}</style>
</head>
<body>
<header>
<h1>${escapeHtml(doc.title)}</h1>
<nav>
${nav}
</nav>
</header>
<main>
${sections}
</main>
<footer>${escapeHtml(opts.generator ?? 'iterscope')} · ${escapeHtml(doc.file)}</footer>
</body>
</html>
`;
}

/** Renders the charts, then the page. */
export async function reportToHtml(doc: ReportDocument, opts: { generator?: string } = {}): Promise<string> {
  const svgs = await renderCharts(documentCharts(doc));
  return documentToHtml(doc, svgs, opts);
}
