import type { ReportBlock, ReportDocument } from '../document/document.js';
import type { ReportChart } from '../document/charts.js';
import { escapeHtml, tableToHtml } from './htmlTable.js';
import { renderCharts } from './renderCharts.js';
import { findingsToHtml } from './findingsCards.js';
import { REPORT_CSS } from './style.js';
import { overviewChartHtml } from './overviewChart.js';
import { timelineHasLayers, timelineHtml } from './timelineHtml.js';
import { pageScript, scriptHashSource } from './pageScript.js';

/**
 * Nothing may be fetched when the page is viewed: no fonts, images, frames or connections; inline
 * styles and the inline SVGs only. A page with an iterations chart or a timeline runs its one
 * inline script, allowed by its hash (no other script can run, injected or not).
 */
const CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:";
const cspWithScript = (script: string) => `${CSP}; script-src ${scriptHashSource(script)}`;

/** What the blocks need of the whole page: the steps with a timeline, the overview's series. */
interface PageContext {
  svgs: ReadonlyMap<string, string>;
  sections: ReadonlyMap<string, string>;
  /** Iterations with a step timeline; undefined on a page without an iterations chart. */
  timelineIters?: ReadonlySet<number>;
  gpuSeries: readonly string[];
}

/** Every chart of a document, in order. */
export function documentCharts(doc: ReportDocument): ReportChart[] {
  return doc.sections.flatMap((s) => s.blocks.flatMap((b) => (b.kind === 'chart' ? [b.chart] : [])));
}

/** Drops the XML prolog bits an inline SVG does not need. */
function inlineSvg(svg: string): string {
  return svg.replace(/^<\?xml[^>]*>\s*/, '');
}

function blockToHtml(block: ReportBlock, page: PageContext): string {
  const { svgs } = page;
  switch (block.kind) {
    case 'table':
      return tableToHtml(block.table);
    case 'findings':
      return findingsToHtml(block.findings, page.sections, page.timelineIters);
    case 'overview':
      return overviewChartHtml(block.overview, page.timelineIters ?? new Set());
    case 'timeline':
      return timelineHtml(block.timeline, page.gpuSeries);
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

/** Sections the page leads with, in this order: the iterations chart, the findings, the step timeline. */
const LEADING_SECTIONS = ['overview', 'findings', 'timeline'];

/**
 * The page leads with the iterations chart, the findings and the step timeline, then the sections
 * with charts, then the tables (each group in document order).
 */
export function htmlSectionOrder(sections: readonly ReportDocument['sections'][number][]): ReportDocument['sections'] {
  const hasChart = (s: ReportDocument['sections'][number]) => s.blocks.some((b) => b.kind === 'chart');
  const leading = LEADING_SECTIONS.flatMap((id) => sections.filter((s) => s.id === id));
  const others = sections.filter((s) => !LEADING_SECTIONS.includes(s.id));
  return [...leading, ...others.filter(hasChart), ...others.filter((s) => !hasChart(s))];
}

/** The page's context from its blocks: which steps have a timeline, the overview's GPU series. */
function pageContext(doc: ReportDocument, svgs: ReadonlyMap<string, string>): PageContext {
  const blocks = doc.sections.flatMap((s) => s.blocks);
  const overview = blocks.find((b) => b.kind === 'overview');
  const timeline = blocks.find((b) => b.kind === 'timeline');
  return {
    svgs,
    sections: new Map(doc.sections.map((s) => [s.id, s.title])),
    timelineIters: overview ? new Set(timeline?.kind === 'timeline' ? timeline.timeline.steps.map((s) => s.iter) : []) : undefined,
    gpuSeries: overview?.kind === 'overview' ? overview.overview.gpuSeries : [],
  };
}

/**
 * The document as one self-contained HTML page: inline CSS, charts rendered to inline SVG at build
 * time (Vega-Lite → Vega → SVG, no browser needed), nothing fetched when opened (a
 * Content-Security-Policy of `default-src 'none'` enforces it). With an iterations chart or a step
 * timeline, one inline script (`pageScript`, allowed by its hash) makes them interactive.
 */
export function documentToHtml(doc: ReportDocument, svgs: ReadonlyMap<string, string>, opts: { generator?: string } = {}): string {
  doc = { ...doc, sections: htmlSectionOrder(doc.sections) };
  const nav = doc.sections.map((s) => `<a href="#${escapeHtml(s.id)}">${escapeHtml(s.title)}</a>`).join('\n');
  const page = pageContext(doc, svgs);
  const scripted = doc.sections.some((s) => s.blocks.some((b) => b.kind === 'overview' || b.kind === 'timeline'));
  // The layer lanes' code only on a page that has them (`--layers`): any other page's script is unchanged.
  const layers = doc.sections.some((s) => s.blocks.some((b) => b.kind === 'timeline' && timelineHasLayers(b.timeline)));
  const script = pageScript({ layers });
  const sections = doc.sections
    .map((s) => {
      const blocks = s.blocks.map((b) => blockToHtml(b, page)).filter((x) => x);
      return `<section id="${escapeHtml(s.id)}">\n<h2>${escapeHtml(s.title)}</h2>\n${blocks.join('\n')}\n</section>`;
    })
    .join('\n');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${scripted ? cspWithScript(script) : CSP}">
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
<footer>${escapeHtml(opts.generator ?? 'iterscope')} · ${escapeHtml(doc.file)}</footer>${scripted ? `\n<script>${script}</script>` : ''}
</body>
</html>
`;
}

/** Renders the charts, then the page. */
export async function reportToHtml(doc: ReportDocument, opts: { generator?: string } = {}): Promise<string> {
  const svgs = await renderCharts(documentCharts(doc));
  return documentToHtml(doc, svgs, opts);
}
