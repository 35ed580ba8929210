import type { FindingsResult } from '../../src/findings/finding.js';
import type { IterationAnalysis, IterationRow } from '../../src/iterations/types.js';
import { formatNs } from '../units.js';
import { gpuTimeByCategoryChart, idleByIterationChart, type ReportChart } from './charts.js';

/** At most this many bars: longer runs are drawn in bins of consecutive iterations (means per iteration). */
export const MAX_OVERVIEW_BARS = 300;

/** One bar: an iteration (or a bin of consecutive ones), its GPU time by series up, its idle by cause down. */
export interface OverviewBar {
  /** First iteration of the bar; `lastIter` = `iter` when not binned. */
  iter: number;
  lastIter: number;
  iterations: number;
  phase: string;
  wallNs: number;
  /** ns per series, in `IterationOverview.gpuSeries` / `idleSeries` order (0 where none). */
  gpuNs: number[];
  idleNs: number[];
  /** What the engine ran in it (`batchText`); for a bin, its iteration range. */
  batch: string;
  /** Among the 5% slowest iterations by wall time. */
  slow: boolean;
  /** Ids of the findings whose evidence names one of its iterations. */
  cited: string[];
}

/** The report's first chart: every iteration in time order, what filled it and where the GPU waited. */
export interface IterationOverview {
  bars: OverviewBar[];
  binSize: number;
  gpuSeries: string[];
  idleSeries: string[];
}

const count = (n: number | null, what: string) => (n == null ? null : `${n} ${what}`);

/** An iteration's batch as the iterations table shows it (ctx/gen requests and tokens), or why it is unknown. */
export function batchText(r: Pick<IterationRow, 'contextRequests' | 'contextTokens' | 'generationRequests' | 'generationTokens'>): string {
  const ctx = [count(r.contextRequests, 'req'), count(r.contextTokens, 'tok')].filter((x) => x).join(' / ');
  const gen = [count(r.generationRequests, 'req'), count(r.generationTokens, 'tok')].filter((x) => x).join(' / ');
  if (!ctx && !gen) return 'batch not known (no log record or label counts)';
  return [ctx && `ctx ${ctx}`, gen && `gen ${gen}`].filter((x) => x).join(' · ');
}

/** Iteration number -> ids of the findings citing it, in finding order. */
export function citedIterations(findings: FindingsResult): Map<number, string[]> {
  const out = new Map<number, string[]>();
  for (const f of findings.findings) {
    for (const e of f.evidence) {
      if (e.iter === undefined) continue;
      const ids = out.get(e.iter) ?? [];
      if (!ids.includes(f.id)) ids.push(f.id);
      out.set(e.iter, ids);
    }
  }
  return out;
}

/** Wall time from which an iteration counts as slow: that of the 5% slowest (at least one). */
function slowThreshold(rows: readonly IterationRow[]): number {
  const walls = rows.map((r) => r.wallNs).sort((a, b) => b - a);
  return walls[Math.max(0, Math.ceil(walls.length * 0.05) - 1)] ?? Infinity;
}

/** Series -> ns of one row, from the per-iteration charts' data (the tables' numbers). */
function nsBy(data: readonly Record<string, string | number>[]): Map<number, Map<string, number>> {
  const out = new Map<number, Map<string, number>>();
  for (const d of data) {
    const m = out.get(Number(d.iter)) ?? new Map<string, number>();
    m.set(String(d.series), (m.get(String(d.series)) ?? 0) + Number(d.ns));
    out.set(Number(d.iter), m);
  }
  return out;
}

/**
 * The overview's bars: one per iteration number (processes sharing a number stack, as in the
 * per-iteration charts), or bins of `k` consecutive numbers past `maxBars` (means per iteration).
 */
export function iterationOverview(
  analysis: IterationAnalysis,
  findings: FindingsResult,
  charts: { gpu: ReportChart; idle: ReportChart | null } = { gpu: gpuTimeByCategoryChart(analysis), idle: idleByIterationChart(analysis) },
  maxBars = MAX_OVERVIEW_BARS,
): IterationOverview {
  const { gpu, idle } = charts;
  const gpuBy = nsBy(gpu.data);
  const idleBy = nsBy(idle?.data ?? []);
  const iters = gpu.iterations ?? [];
  const k = iters.length > maxBars ? Math.ceil((iters[iters.length - 1] - iters[0] + 1) / maxBars) : 1;
  const slowFrom = slowThreshold(analysis.iterations);
  const cited = citedIterations(findings);
  const rowsOf = new Map<number, IterationRow[]>();
  for (const r of analysis.iterations) {
    const list = rowsOf.get(r.iter);
    if (list) list.push(r);
    else rowsOf.set(r.iter, [r]);
  }
  const bins = new Map<number, number[]>();
  for (const it of iters) {
    const b = iters[0] + Math.floor((it - iters[0]) / k) * k;
    const list = bins.get(b);
    if (list) list.push(it);
    else bins.set(b, [it]);
  }
  const idleSeries = idle?.series ?? [];
  const bars = [...bins.values()].map((members): OverviewBar => {
    const rows = members.flatMap((it) => rowsOf.get(it) ?? []);
    const sum = (by: Map<number, Map<string, number>>, s: string) => members.reduce((a, it) => a + (by.get(it)?.get(s) ?? 0), 0) / members.length;
    const phases = [...new Set(rows.map((r) => r.phase))];
    const first = members[0];
    const last = members[members.length - 1];
    return {
      iter: first,
      lastIter: last,
      iterations: members.length,
      phase: phases.join('+'),
      wallNs: rows.reduce((a, r) => a + r.wallNs, 0) / members.length,
      gpuNs: gpu.series.map((s) => sum(gpuBy, s)),
      idleNs: idleSeries.map((s) => sum(idleBy, s)),
      batch: members.length === 1 ? rows.map(batchText).join('; ') : `iterations ${first}..${last}, means per iteration`,
      slow: rows.some((r) => r.wallNs >= slowFrom),
      cited: [...new Set(members.flatMap((it) => cited.get(it) ?? []))],
    };
  });
  return { bars, binSize: k, gpuSeries: gpu.series, idleSeries };
}

/** The hover text of a bar: which iterations, phase, batch, wall time, GPU and idle time. */
export function overviewTip(b: OverviewBar): string {
  const which = b.iterations === 1 ? `iteration ${b.iter}` : `iterations ${b.iter}..${b.lastIter}`;
  const gpu = b.gpuNs.reduce((a, x) => a + x, 0);
  const idle = b.idleNs.reduce((a, x) => a + x, 0);
  return [`${which} (${b.phase})`, b.batch, `wall ${formatNs(b.wallNs)}, GPU ${formatNs(gpu)}, idle ${formatNs(idle)}`, ...(b.slow ? ['slow'] : []), ...(b.cited.length ? [`cited by ${b.cited.join(', ')}`] : [])].join('\n');
}
