import type { ColumnTable } from 'arquero';
import { aq, op } from '../math/arqueroOps.js';
import type { Phase } from '../iterations/analyzeIterations.js';
import type { PhaseFigures, RunSummary } from '../summary/runSummary.js';
import { compareEngines, type EngineComparison } from './engineComparison.js';
import { findingChanges, type FindingChanges } from '../findings/digest.js';
import type { MoeRoutingReading } from '../findings/moeRoutingReading.js';

export type Scope = 'all' | Phase;

/** One compared figure (mean per iteration unless named otherwise). */
export interface MetricDelta {
  metric: string;
  scope: Scope;
  /** `ns` for mean ns per iteration, `share` for a 0..1 fraction. */
  unit: 'ns' | 'share';
  base: number;
  head: number;
  delta: number;
  /** Relative change (head - base) / base; null when base is 0. */
  relative: number | null;
  /** Absolute change in ns that the noise floor applies to (for shares: mean idle ns per iteration). */
  floorDeltaNs: number;
  gated: boolean;
  regressed: boolean;
}

export interface NamedChange {
  name: string;
  baseNsPerIter: number;
  headNsPerIter: number;
  deltaNsPerIter: number;
}

export interface Comparison {
  base: RunSummary['run'];
  head: RunSummary['run'];
  threshold: number;
  minDeltaNs: number;
  metrics: MetricDelta[];
  regressions: MetricDelta[];
  kernelChanges: NamedChange[];
  nvtxChanges: NamedChange[];
  moeRouting: MoeRoutingReading | null;
  /** Both runs side by side per phase, each engine named (information, never gated). */
  engines: EngineComparison;
  /** Findings that appeared or disappeared (null when a summary has no findings). */
  findings: FindingChanges | null;
}

export interface CompareOptions {
  /** Relative threshold (0.05 = 5%). */
  threshold?: number;
  /** Absolute noise floor in ns. */
  minDeltaNs?: number;
  /** Read the pair as normal (base) vs ENABLE_PERFECT_ROUTER=1 (head). Default: detected. */
  perfectRouterHead?: boolean;
}

/** The categories TensorRT-LLM's MoE layers spend their time in. */
export const MOE_CATEGORIES = ['moe_gemm', 'moe_routing'];

function delta(metric: string, scope: Scope, unit: MetricDelta['unit'], base: number, head: number, floorDeltaNs: number, gated: boolean, o: Required<Omit<CompareOptions, 'perfectRouterHead'>>): MetricDelta {
  const d = head - base;
  const relative = base !== 0 ? d / base : null;
  // A regression must pass both the relative threshold and the absolute floor (noise).
  const regressed = gated && floorDeltaNs > o.minDeltaNs && (relative === null ? d > 0 : relative > o.threshold);
  return { metric, scope, unit, base, head, delta: d, relative, floorDeltaNs, gated, regressed };
}

function scopeMetrics(scope: Scope, b: PhaseFigures, h: PhaseFigures, categories: string[], o: Required<Omit<CompareOptions, 'perfectRouterHead'>>): MetricDelta[] {
  const out = [
    delta('GPU busy per iteration', scope, 'ns', b.meanGpuBusyNs, h.meanGpuBusyNs, h.meanGpuBusyNs - b.meanGpuBusyNs, true, o),
    delta('idle share', scope, 'share', b.idleShare, h.idleShare, h.meanGpuIdleNs - b.meanGpuIdleNs, true, o),
    delta('wall per iteration', scope, 'ns', b.meanWallNs, h.meanWallNs, h.meanWallNs - b.meanWallNs, false, o),
    delta('kernel time per iteration', scope, 'ns', b.meanKernelNs, h.meanKernelNs, h.meanKernelNs - b.meanKernelNs, false, o),
  ];
  // Idle time by host cause: reported, not gated (the idle share is).
  const causes = new Set([...Object.keys(b.meanIdleByCauseNs ?? {}), ...Object.keys(h.meanIdleByCauseNs ?? {})]);
  for (const c of causes) {
    const bv = b.meanIdleByCauseNs?.[c] ?? 0;
    const hv = h.meanIdleByCauseNs?.[c] ?? 0;
    out.push(delta(`idle: ${c} per iteration`, scope, 'ns', bv, hv, hv - bv, false, o));
  }
  for (const c of categories) {
    const bv = b.meanCategoryNs[c] ?? 0;
    const hv = h.meanCategoryNs[c] ?? 0;
    if (bv === 0 && hv === 0) continue;
    out.push(delta(`${c} per iteration`, scope, 'ns', bv, hv, hv - bv, true, o));
  }
  return out;
}

/** One row per name with its total (a repeated name keeps its last total, at its first place) and its place (1-based). */
function totalsByName(rows: { name: string; totalNs: number }[], total: string, seen: string): ColumnTable {
  const byName = new Map(rows.map((k) => [k.name, k.totalNs]));
  return aq.table({ name: [...byName.keys()], [total]: [...byName.values()] }).derive({ [seen]: op.row_number() });
}

/**
 * The `top` names whose time per iteration changed most: base and head totals full-outer-joined on
 * the name (a name missing on one side counts 0 there), per iteration of each run, ordered by the
 * size of the change, ties in order of first appearance (base names, then head-only names).
 */
function namedChanges(base: { name: string; totalNs: number }[], head: { name: string; totalNs: number }[], baseIters: number, headIters: number, top = 10): NamedChange[] {
  const baseTotals = totalsByName(base, 'baseTotalNs', 'baseSeen');
  const headTotals = totalsByName(head, 'headTotalNs', 'headSeen');
  const changes = baseTotals
    .join_full(headTotals, 'name')
    .params({ baseIters: Math.max(1, baseIters), headIters: Math.max(1, headIters), baseNames: baseTotals.numRows() })
    .derive({
      baseNsPerIter: (d: { baseTotalNs?: number }, $: { baseIters: number }) => (d.baseTotalNs ?? 0) / $.baseIters,
      headNsPerIter: (d: { headTotalNs?: number }, $: { headIters: number }) => (d.headTotalNs ?? 0) / $.headIters,
      seen: (d: { baseSeen?: number; headSeen: number }, $: { baseNames: number }) => d.baseSeen ?? $.baseNames + d.headSeen,
    })
    .derive({ deltaNsPerIter: (d: { baseNsPerIter: number; headNsPerIter: number }) => d.headNsPerIter - d.baseNsPerIter })
    .derive({ size: (d: { deltaNsPerIter: number }) => op.abs(d.deltaNsPerIter) })
    .orderby(aq.desc('size'), 'seen')
    .slice(0, top);
  return (changes.objects() as NamedChange[]).map((r) => ({ name: r.name, baseNsPerIter: r.baseNsPerIter, headNsPerIter: r.headNsPerIter, deltaNsPerIter: r.deltaNsPerIter }));
}

/**
 * TensorRT-LLM's documented reading of a normal vs perfect-router pair: if the perfect router
 * makes the run more than 10% faster, routing imbalance is significant; if it is similar, the
 * router is not the bottleneck. Speed is judged by GPU busy time per iteration.
 */
export function readMoeRouting(base: RunSummary, head: RunSummary): MoeRoutingReading {
  const moe = (s: RunSummary) => MOE_CATEGORIES.reduce((a, c) => a + (s.overall.meanCategoryNs[c] ?? 0), 0);
  const baseMoeNs = moe(base);
  const headMoeNs = moe(head);
  const baseBusy = base.overall.meanGpuBusyNs;
  const headBusy = head.overall.meanGpuBusyNs;
  const speedup = baseBusy > 0 ? (baseBusy - headBusy) / baseBusy : 0;
  const significant = speedup > 0.1;
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  const reading = significant
    ? `the perfect router is ${pct(speedup)} faster (GPU busy per iteration): routing imbalance is significant`
    : `with the perfect router GPU busy per iteration changes by ${pct(-speedup)} (within 10%): the router is not the bottleneck`;
  return { baseMoeNs, headMoeNs, moeChange: baseMoeNs > 0 ? (headMoeNs - baseMoeNs) / baseMoeNs : null, baseGpuBusyNs: baseBusy, headGpuBusyNs: headBusy, speedup, significant, reading };
}

/** Base vs head: per scope and category, gated regressions, kernel/NVTX changes, MoE reading. */
export function compareRuns(base: RunSummary, head: RunSummary, opts: CompareOptions = {}): Comparison {
  const o = { threshold: opts.threshold ?? 0.05, minDeltaNs: opts.minDeltaNs ?? 10_000 };
  const categories = [...new Set([...base.categories, ...head.categories])];
  const metrics = scopeMetrics('all', base.overall, head.overall, categories, o);
  for (const p of Object.keys(base.phases) as Phase[]) {
    const b = base.phases[p];
    const h = head.phases[p];
    if (b && h) metrics.push(...scopeMetrics(p, b, h, categories, o));
  }
  const perfect = opts.perfectRouterHead ?? (head.run.perfectRouter === true && base.run.perfectRouter !== true);
  return {
    base: base.run,
    head: head.run,
    threshold: o.threshold,
    minDeltaNs: o.minDeltaNs,
    metrics,
    regressions: metrics.filter((m) => m.regressed),
    kernelChanges: namedChanges(base.kernels, head.kernels, base.run.iterationsFound, head.run.iterationsFound),
    nvtxChanges: namedChanges(
      base.nvtx.map((r) => ({ name: r.range, totalNs: r.totalNs })),
      head.nvtx.map((r) => ({ name: r.range, totalNs: r.totalNs })),
      base.run.iterationsFound,
      head.run.iterationsFound,
    ),
    moeRouting: perfect ? readMoeRouting(base, head) : null,
    engines: compareEngines(base, head),
    findings: base.findings && head.findings ? findingChanges(base.findings, head.findings) : null,
  };
}
