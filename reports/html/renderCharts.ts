import type { TopLevelSpec } from 'vega-lite';
import type { ReportChart } from '../document/charts.js';
import { chartSpec } from './chartSpecs.js';

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

/** Renders every chart to SVG, keyed by chart id, one after the other (memory stays flat). */
export async function renderCharts(charts: readonly ReportChart[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const c of charts) out.set(c.id, await renderSpecToSvg(chartSpec(c)));
  return out;
}
