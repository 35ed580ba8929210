import type { TopLevelSpec } from 'vega-lite';
import type { ReportChart } from '../document/charts.js';
import { chartSpec } from './chartSpecs.js';
import { causeBarsSvg, stackedIterationBarsSvg } from './barsSvg.js';
import { metricChangesSvg } from './metricChangesSvg.js';

/** Compiles a Vega-Lite spec and renders it to an SVG string, in Node, without a canvas. */
export async function renderSpecToSvg(spec: TopLevelSpec): Promise<string> {
  // Loaded on demand: Markdown reports never pay for the charting library.
  const [vega, vl] = await Promise.all([import('vega'), import('vega-lite')]);
  const view = new vega.View(vega.parse(vl.compile(spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/**
 * The bar charts written directly (barsSvg.ts: milliseconds where Vega's dataflow took seconds on
 * a long run), or null: drawn by Vega (the metric lines, several devices' idle, the engines' charts).
 */
function directSvg(c: ReportChart): string | null {
  switch (c.id) {
    case 'gpu-time-by-category':
      return stackedIterationBarsSvg(c, 'GPU time (ms)');
    case 'idle-by-iteration':
      return stackedIterationBarsSvg(c, 'GPU idle (ms)');
    case 'idle-by-cause':
      return new Set(c.data.map((d) => d.device)).size > 1 ? null : causeBarsSvg(c);
    case 'compare-metric-changes':
      return metricChangesSvg(c);
    default:
      return null;
  }
}

/** Renders every chart to SVG, keyed by chart id, one after the other (memory stays flat). */
export async function renderCharts(charts: readonly ReportChart[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const c of charts) out.set(c.id, directSvg(c) ?? (await renderSpecToSvg(chartSpec(c))));
  return out;
}
