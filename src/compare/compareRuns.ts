import type { ColumnTable } from 'arquero';
import { aq, op } from '../math/arqueroOps.js';
import type { Phase } from '../iterations/phase.js';
import type { PhaseFigures, RunSummary } from '../summary/runSummary.js';
import { compareEngines, type EngineComparison } from './engineComparison.js';
import { findingChanges, type FindingChanges } from '../findings/digest.js';
import type { MoeRoutingReading } from '../findings/moeRoutingReading.js';
import type { GateBasis, SpanGate } from '../summary/gateSamples.js';
import { checkComparability, type Comparability } from './comparability.js';
import { layerMetricInputs } from './layerMetrics.js';
import { CONFIDENCE, RESAMPLES, SKETCH_POINTS, relativeInterval, sketchMean, totalRatioInterval, verdictOf, type Sketch, type Verdict } from '../math/sketch.js';
import type { Scope } from './engineComparison.js';

/** A metric's unit: ns per iteration or instance, a 0..1 share, a count, or a rate per second of span or per generated token. */
export type MetricUnit = 'ns' | 'share' | 'count' | 'ns/s' | 'count/s' | 'ns/token' | 'count/token';

/** One compared figure (mean per iteration unless named otherwise). */
export interface MetricDelta {
  metric: string;
  scope: Scope;
  unit: MetricUnit;
  base: number;
  head: number;
  delta: number;
  /** Relative change of the means (head - base) / base; null when base is 0. */
  relative: number | null;
  /** CONFIDENCE interval of `relative` from the samples (src/math/sketch.ts); null without samples. */
  interval: { lo: number; hi: number } | null;
  /** Samples per side (iterations or kernel instances); null for a figure without samples. */
  samples: { base: number; head: number } | null;
  /** regressed / improved / unchanged / inconclusive; null for a figure without samples (information). */
  verdict: Verdict | null;
  /** Why inconclusive, or why off the gate. */
  note: string | null;
  /** Absolute change that the noise floor applies to: ns (for shares: mean idle ns per iteration); for counts and rates the change itself, with no floor. */
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
  /** What the numbers were compared on, and what differs between the captures (before any delta). */
  basis: GateBasis;
  comparability: string[];
  threshold: number;
  minDeltaNs: number;
  /** The interval method and confidence, as the output names it. */
  intervals: string;
  metrics: MetricDelta[];
  regressions: MetricDelta[];
  /** Gated metrics whose samples cannot tell noise from change. */
  inconclusive: MetricDelta[];
  /** Per name per iteration (iterations basis) or per second of span (kernel instances). */
  changesPer: 'iteration' | 'second of span';
  /** Kernel instances basis: both spans' figures and their top kernel names side by side (null on iterations). */
  span: SpanSideBySide | null;
  kernelChanges: NamedChange[];
  nvtxChanges: NamedChange[];
  moeRouting: MoeRoutingReading | null;
  /** Both runs side by side per phase, each engine named (information, never gated). */
  engines: EngineComparison;
  /** Findings that appeared or disappeared (null when a summary has no findings). */
  findings: FindingChanges | null;
}

/** One kernel name's figures in a span (`SpanGate.kernelNames` without the sketch). */
export interface SpanKernelFigures {
  instances: number;
  totalNs: number;
  meanNs: number;
  medianNs: number;
  perSecond: number;
}

/** The serving spans side by side (kernel instances basis). */
export interface SpanSideBySide {
  base: { boundary: string; spanNs: number; busyShare: number; generatedTokens: number | null; tokenSource: string };
  head: { boundary: string; spanNs: number; busyShare: number; generatedTokens: number | null; tokenSource: string };
  /** Names in either span's top list, base's order first; null where a span does not keep the name. */
  kernels: { name: string; category: string; base: SpanKernelFigures | null; head: SpanKernelFigures | null }[];
}

export interface CompareOptions {
  /** Relative threshold (0.05 = 5%). */
  threshold?: number;
  /** Absolute noise floor in ns. */
  minDeltaNs?: number;
  /** Read the pair as normal (base) vs ENABLE_PERFECT_ROUTER=1 (head). Default: detected. */
  perfectRouterHead?: boolean;
  /** Also per phase, per layer index and per module kind, kernel ns per step (`compare --layers`: both runs need layer samples). */
  layers?: boolean;
}

/** The categories TensorRT-LLM's MoE layers spend their time in. */
export const MOE_CATEGORIES = ['moe_gemm', 'moe_routing'];

type Gate = { threshold: number; minDeltaNs: number };

/** A figure's samples and how its floor applies: `floorBase` is the base mean in the floor's unit. */
interface Samples {
  b: Sketch;
  h: Sketch;
  floor: number;
  floorBase: number;
  /** The interval is given (category totals, `spanMetrics`), or exact (a count: no sampling noise); else the samples' bootstrap. */
  given?: { lo: number; hi: number } | null;
  exact?: boolean;
}

function intervalOf(s: Samples, relative: number | null, key: string): { lo: number; hi: number } | null {
  if (s.given !== undefined) return s.given;
  if (s.exact) return relative === null ? null : { lo: relative, hi: relative };
  return relativeInterval(s.b, s.h, key);
}

export const INTERVAL_METHOD = `percentile bootstrap of the ratio of means (${RESAMPLES} resamples, ${CONFIDENCE * 100}%, fixed seed per metric)`;

function delta(metric: string, scope: Scope, unit: MetricUnit, base: number, head: number, floorDeltaNs: number, gated: boolean, o: Gate, s: Samples | null = null, offGate: string | null = null): MetricDelta {
  const d = head - base;
  const relative = base !== 0 ? d / base : null;
  const interval = s ? intervalOf(s, relative, `${scope}|${metric}`) : null;
  const v = s ? verdictOf({ base: s.b, head: s.h, interval, threshold: o.threshold, floor: s.floor, floorDelta: floorDeltaNs, floorBase: s.floorBase }) : null;
  const isGated = gated && !offGate;
  return {
    metric,
    scope,
    unit,
    base,
    head,
    delta: d,
    relative,
    interval,
    samples: s ? { base: s.b.n, head: s.h.n } : null,
    verdict: v?.verdict ?? null,
    note: (gated && offGate) || v?.reason || null,
    floorDeltaNs,
    gated: isGated,
    regressed: isGated && v?.verdict === 'regressed',
  };
}

/** The per-iteration metrics of a scope; with samples (a phase), each has its interval and verdict. */
function scopeMetrics(scope: Scope, b: PhaseFigures, h: PhaseFigures, categories: string[], o: Gate, sb: Record<string, Sketch> | null, sh: Record<string, Sketch> | null, cmp: Comparability): MetricDelta[] {
  // All phases together mix phases (their mix differs between runs): information, never gated.
  const gatedHere = scope !== 'all';
  const off = cmp.gateNothing ? 'off the gate: the captures are not comparable (see comparability)' : null;
  const ns = (m: string) => (sb?.[m] && sh?.[m] ? { b: sb[m], h: sh[m], floor: o.minDeltaNs, floorBase: sketchMean(sb[m]) } : null);
  const idleShare = sb?.['idle share'] && sh?.['idle share'] ? { b: sb['idle share'], h: sh['idle share'], floor: o.minDeltaNs, floorBase: b.meanGpuIdleNs } : null;
  const counts = sb?.['kernels per iteration'] && sh?.['kernels per iteration'] ? { b: sb['kernels per iteration'], h: sh['kernels per iteration'], floor: 0, floorBase: 0 } : null;
  const out = [
    delta('GPU busy per iteration', scope, 'ns', b.meanGpuBusyNs, h.meanGpuBusyNs, h.meanGpuBusyNs - b.meanGpuBusyNs, gatedHere, o, ns('GPU busy per iteration'), off),
    delta('idle share', scope, 'share', b.idleShare, h.idleShare, h.meanGpuIdleNs - b.meanGpuIdleNs, gatedHere, o, idleShare, off),
    delta('wall per iteration', scope, 'ns', b.meanWallNs, h.meanWallNs, h.meanWallNs - b.meanWallNs, false, o, ns('wall per iteration')),
    delta('kernel time per iteration', scope, 'ns', b.meanKernelNs, h.meanKernelNs, h.meanKernelNs - b.meanKernelNs, false, o, ns('kernel time per iteration')),
  ];
  if (b.meanKernelCount !== undefined && h.meanKernelCount !== undefined) {
    const kernelsOff = off ?? (cmp.gateKernelCounts ? null : 'off the gate: kernel counts of graph- and node-level traces differ by design');
    out.push(delta('kernels per iteration', scope, 'count', b.meanKernelCount, h.meanKernelCount, h.meanKernelCount - b.meanKernelCount, gatedHere, o, counts, kernelsOff));
  }
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
    const m = `${c} per iteration`;
    const s = sb && sh ? { b: sb[m] ?? zerosLike(sb), h: sh[m] ?? zerosLike(sh), floor: o.minDeltaNs, floorBase: bv } : null;
    out.push(delta(m, scope, 'ns', bv, hv, hv - bv, gatedHere, o, s, off));
  }
  return out;
}

/** A category absent from every iteration of a phase: as many zero samples as the phase has iterations. */
function zerosLike(sketches: Record<string, Sketch>): Sketch {
  const n = sketches['GPU busy per iteration']?.n ?? 0;
  return { n, sum: 0, points: new Array<number>(Math.min(n, SKETCH_POINTS)).fill(0) };
}

/** Per generated token when both spans know their tokens, else per second of span: the factor a total is multiplied by. */
/** Instance counts as the verdict reads them (the sample counts of a total). */
const counted = (n: number): Sketch => ({ n, sum: n > 0 ? 1 : 0, points: [] });

function spanScale(b: SpanGate, h: SpanGate): { per: 'generated token' | 'second'; fb: number; fh: number } {
  if (b.generatedTokens && h.generatedTokens) return { per: 'generated token', fb: 1 / b.generatedTokens, fh: 1 / h.generatedTokens };
  return { per: 'second', fb: 1e9 / b.spanNs, fh: 1e9 / h.spanNs };
}

/**
 * Without iterations on both sides: each category's kernel time and the kernel count per generated
 * token (both token counts known) or per second of span, and each kernel name both spans keep, per
 * instance (bootstrap). A category's time is a sum over its kernel names of instances times mean
 * duration: its interval takes each name's instance count as measured (the same workload runs the
 * same kernels; a different count is a change, not noise) and the durations' spread within each
 * name as the noise (`totalRatioInterval`); a count alone is exact.
 */
function spanMetrics(b: SpanGate, h: SpanGate, o: Gate, cmp: Comparability): MetricDelta[] {
  const { per, fb, fh } = spanScale(b, h);
  const off = cmp.gateNothing ? 'off the gate: the captures are not comparable (see comparability)' : null;
  const countsOff = off ?? (cmp.gateKernelCounts ? null : 'off the gate: kernel counts of graph- and node-level traces differ by design');
  const rate = (unit: 'ns' | 'count'): MetricUnit => `${unit}/${per === 'second' ? 's' : 'token'}`;
  const count = (g: SpanGate) => Object.values(g.categories).reduce((a, c) => a + c.instances, 0);
  const [kb, kh] = [count(b) * fb, count(h) * fh];
  const out = [delta(`kernels per ${per}`, 'span', rate('count'), kb, kh, kh - kb, true, o, { b: counted(count(b)), h: counted(count(h)), floor: 0, floorBase: 0, exact: true }, countsOff)];
  out.push(delta(`kernel time per ${per}`, 'span', rate('ns'), b.kernelNs * fb, h.kernelNs * fh, (h.kernelNs * fh) - (b.kernelNs * fb), false, o));
  for (const c of [...new Set([...Object.keys(b.categories), ...Object.keys(h.categories)])]) {
    const cb = b.categories[c];
    const ch = h.categories[c];
    const [vb, vh] = [(cb?.totalNs ?? 0) * fb, (ch?.totalNs ?? 0) * fh];
    const given = cb && ch ? totalRatioInterval(cb.totalNs, ch.totalNs, cb.withinNameSqNs, ch.withinNameSqNs, fh / fb) : null;
    out.push(delta(`${c} time per ${per}`, 'span', rate('ns'), vb, vh, vh - vb, true, o, { b: counted(cb?.instances ?? 0), h: counted(ch?.instances ?? 0), floor: 0, floorBase: 0, given }, off));
  }
  const headKernels = new Map(h.kernelNames.map((k) => [k.name, k]));
  for (const nb of b.kernelNames) {
    const nh = headKernels.get(nb.name);
    // Per instance: a kernel's own speed. No absolute floor (it is per iteration); the interval decides.
    if (nh) out.push(delta(`${nb.name} per instance`, 'span', 'ns', nb.meanNs, nh.meanNs, nh.meanNs - nb.meanNs, true, o, { b: nb.durations, h: nh.durations, floor: 0, floorBase: 0 }, countsOff));
  }
  out.push(delta('GPU busy share', 'span', 'share', b.busyShare, h.busyShare, 0, false, o), delta('GPU idle share', 'span', 'share', 1 - b.busyShare, 1 - h.busyShare, 0, false, o));
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

/** The metrics on the basis both runs have: phases' iterations, else the serving span's kernel instances. */
function gatedMetrics(base: RunSummary, head: RunSummary, o: Gate, cmp: Comparability): MetricDelta[] {
  if (cmp.basis === 'kernel instances') return base.gate.span && head.gate.span ? spanMetrics(base.gate.span, head.gate.span, o, cmp) : [];
  const categories = [...new Set([...base.categories, ...head.categories])];
  const metrics = scopeMetrics('all', base.overall, head.overall, categories, o, null, null, cmp);
  for (const p of Object.keys(base.phases) as Phase[]) {
    const b = base.phases[p];
    const h = head.phases[p];
    if (b && h) metrics.push(...scopeMetrics(p, b, h, categories, o, base.gate.iterations?.[p] ?? null, head.gate.iterations?.[p] ?? null, cmp));
  }
  return metrics;
}

/** `--layers`: per phase, per layer and module kind, kernel ns per step, gated like the categories; what could not be compared joins the comparability notes. */
function layerMetrics(base: RunSummary, head: RunSummary, o: Gate, cmp: Comparability): MetricDelta[] {
  const { inputs, notes } = layerMetricInputs(base, head, cmp);
  cmp.notes.push(...notes);
  return inputs.map((m) => {
    const [bv, hv] = [sketchMean(m.base), sketchMean(m.head)];
    return delta(m.metric, m.scope, 'ns', bv, hv, hv - bv, true, o, { b: m.base, h: m.head, floor: o.minDeltaNs, floorBase: bv }, m.offGate);
  });
}

/** Both spans' figures and top kernel names, on the kernel instances basis. */
function spanSideBySide(base: RunSummary, head: RunSummary, basis: GateBasis): SpanSideBySide | null {
  const [b, h] = [base.gate.span, head.gate.span];
  if (basis !== 'kernel instances' || !b || !h) return null;
  const side = (g: SpanGate) => ({ boundary: g.boundary, spanNs: g.spanNs, busyShare: g.busyShare, generatedTokens: g.generatedTokens, tokenSource: g.tokenSource });
  const figures = (k: SpanGate['kernelNames'][number] | undefined): SpanKernelFigures | null => (k ? { instances: k.instances, totalNs: k.totalNs, meanNs: k.meanNs, medianNs: k.medianNs, perSecond: k.perSecond } : null);
  const names = [...new Set([...b.kernelNames.map((k) => k.name), ...h.kernelNames.map((k) => k.name)])];
  const find = (g: SpanGate, n: string) => g.kernelNames.find((k) => k.name === n);
  return {
    base: side(b),
    head: side(h),
    kernels: names.map((name) => ({ name, category: (find(b, name) ?? find(h, name))!.category, base: figures(find(b, name)), head: figures(find(h, name)) })),
  };
}

/** Kernel and NVTX changes per iteration (iterations basis) or per second of span. */
function namedChangesOf(base: RunSummary, head: RunSummary, basis: GateBasis): Pick<Comparison, 'changesPer' | 'kernelChanges' | 'nvtxChanges'> {
  const iterations = basis === 'iterations';
  const per = (s: RunSummary) => (iterations ? s.run.iterationsFound : (s.gate.span?.spanNs ?? 1e9) / 1e9);
  const nvtx = (s: RunSummary) => s.nvtx.map((r) => ({ name: r.range, totalNs: r.totalNs }));
  return {
    changesPer: iterations ? 'iteration' : 'second of span',
    kernelChanges: namedChanges(base.kernels, head.kernels, per(base), per(head)),
    nvtxChanges: namedChanges(nvtx(base), nvtx(head), per(base), per(head)),
  };
}

/**
 * Base vs head: what differs between the captures first (comparability), then every metric on
 * the basis both have, each gated one with its interval and verdict; kernel/NVTX changes, MoE reading.
 */
export function compareRuns(base: RunSummary, head: RunSummary, opts: CompareOptions = {}): Comparison {
  const o = { threshold: opts.threshold ?? 0.05, minDeltaNs: opts.minDeltaNs ?? 10_000 };
  const cmp = checkComparability(base, head);
  const metrics = gatedMetrics(base, head, o, cmp);
  if (opts.layers) metrics.push(...layerMetrics(base, head, o, cmp));
  const perfect = opts.perfectRouterHead ?? (head.run.perfectRouter === true && base.run.perfectRouter !== true);
  return {
    base: base.run,
    head: head.run,
    basis: cmp.basis,
    comparability: cmp.notes,
    threshold: o.threshold,
    minDeltaNs: o.minDeltaNs,
    intervals: INTERVAL_METHOD,
    metrics,
    regressions: metrics.filter((m) => m.regressed),
    inconclusive: metrics.filter((m) => m.gated && m.verdict === 'inconclusive'),
    ...namedChangesOf(base, head, cmp.basis),
    span: spanSideBySide(base, head, cmp.basis),
    moeRouting: perfect && cmp.basis === 'iterations' ? readMoeRouting(base, head) : null,
    engines: compareEngines(base, head),
    findings: base.findings && head.findings ? findingChanges(base.findings, head.findings) : null,
  };
}
