import type { Comparison, MetricDelta, SpanKernelFigures } from '../src/compare/compareRuns.js';
import { shortKernelName } from './kernelName.js';
import type { EngineComparison, EngineFigures } from '../src/compare/engineComparison.js';
import type { RunSummary } from '../src/summary/runSummary.js';
import { keyValueTable, type DataTable } from './table.js';
import type { ChartDatum, ReportChart } from './document/charts.js';
import type { ReportDocument } from './document/document.js';
import { reportToHtml } from './html/reportHtml.js';

export const COMPARE_GENERATOR = 'iterscope 0.1.0 compare';

const pct = (x: number | null) => (x == null ? null : x * 100);

/** `compare`: run facts, gated metrics (regressions first), kernel and NVTX changes, MoE reading. */
export function comparisonTables(c: Comparison): DataTable[] {
  const tables = [
    runsTable(c),
    comparabilityTable(c),
    engineTable(c.engines),
    gatedMetricsTable(c),
    changesTable(`Top kernel changes (total ns per ${c.changesPer})`, c.kernelChanges, c.changesPer),
    changesTable(`Top NVTX range changes (CPU ns per ${c.changesPer})`, c.nvtxChanges, c.changesPer),
  ];
  if (c.span) tables.splice(4, 0, spanKernelsTable(c.span));
  if (c.moeRouting) tables.push(moeRoutingTable(c.moeRouting));
  if (c.findings) tables.push(findingChangesTable(c.findings));
  return tables;
}

function runsTable(c: Comparison): DataTable {
  return {
    title: 'Runs',
    columns: [
      { key: 'field', header: 'Field', kind: 'text' },
      { key: 'base', header: 'Base', kind: 'text' },
      { key: 'head', header: 'Head', kind: 'text' },
    ],
    rows: [
      { field: 'file', base: c.base.file, head: c.head.file },
      { field: 'iterations', base: `${c.base.iterationsFound} (${c.base.firstIter}..${c.base.lastIter})`, head: `${c.head.iterationsFound} (${c.head.firstIter}..${c.head.lastIter})` },
      { field: 'joined to logs', base: String(c.base.iterationsJoined), head: String(c.head.iterationsJoined) },
      { field: 'engine', base: c.engines.base.engine, head: c.engines.head.engine },
      { field: 'perfect router', base: String(c.base.perfectRouter ?? 'unknown'), head: String(c.head.perfectRouter ?? 'unknown') },
      { field: 'basis', base: c.basis, head: c.basis },
    ],
  };
}

/** What differs between the captures that matters for the numbers: printed before any delta. */
function comparabilityTable(c: Comparison): DataTable {
  return {
    title: `Comparability (basis: ${c.basis === 'iterations' ? 'iterations by phase' : 'kernel instances of the serving span'})`,
    columns: [{ key: 'note', header: 'Note', kind: 'text' }],
    rows: c.comparability.length ? c.comparability.map((note) => ({ note })) : [{ note: 'nothing found that makes the numbers incomparable' }],
  };
}

const VERDICT_ORDER = ['regressed', 'inconclusive', 'improved', 'unchanged'];
const signedPct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}%`;
const fourDigits = (x: number) => Number(x.toPrecision(4));

/**
 * A metric's value as its unit reads in the ns columns: durations (per iteration, instance, second
 * or token) as ns, shares as percentages, counts as text to 4 digits (never printed as a duration).
 */
function valueCell(m: MetricDelta, x: number): string | number {
  if (m.unit === 'share') return `${(x * 100).toFixed(1)}%`;
  if (m.unit.startsWith('count')) return String(fourDigits(x));
  return m.unit === 'ns' ? Math.round(x) : fourDigits(x);
}

function statusOf(m: MetricDelta): string {
  if (m.regressed) return 'REGRESSED';
  if (!m.verdict) return '';
  if (!m.gated) return `(${m.verdict})`;
  return m.verdict === 'inconclusive' ? 'INCONCLUSIVE' : m.verdict;
}

/** `<kernel> per instance` with the kernel name readable; other metrics as they are. */
const metricCell = (m: MetricDelta) => (m.scope === 'span' && m.metric.endsWith(' per instance') ? `${shortKernelName(m.metric.slice(0, -' per instance'.length))} per instance` : m.metric);

/** Every metric with its verdict and interval, regressions first, then inconclusive ones, with the gate in the title. */
function gatedMetricsTable(c: Comparison): DataTable {
  const rank = (m: MetricDelta) => (m.regressed ? 0 : m.gated && m.verdict ? VERDICT_ORDER.indexOf(m.verdict) : 4);
  const ordered = [...c.metrics].sort((a, b) => rank(a) - rank(b));
  const notes = [
    c.regressions.length ? `${c.regressions.length} gated metrics regressed: ${c.regressions.map((r) => `${r.metric} [${r.scope}]`).join('; ')}` : 'no gated metric regressed',
    ...(c.inconclusive.length ? [`${c.inconclusive.length} gated metrics inconclusive (the samples cannot tell noise from change): ${c.inconclusive.map((m) => `${m.metric} [${m.scope}] ${m.samples?.base ?? 0} vs ${m.samples?.head ?? 0} samples`).join('; ')}`] : []),
    `interval: ${c.intervals}; regressed/improved = the whole interval beyond the threshold (and the change past the floor), unchanged = within it, inconclusive = too few samples or an interval across it; (verdict) = not gated`,
  ];
  return {
    title: `${c.basis === 'iterations' ? 'Per-iteration means by phase' : 'Serving span: per generated token (or second of span) by category, per instance by kernel'} (gate: ${(c.threshold * 100).toFixed(1)}% and ${c.minDeltaNs} ns)`,
    columns: [
      { key: 'status', header: 'Verdict', kind: 'text' },
      { key: 'scope', header: 'Scope', kind: 'text' },
      { key: 'metric', header: 'Metric', kind: 'text' },
      { key: 'unit', header: 'Unit', kind: 'text' },
      { key: 'base', header: 'Base', kind: 'ns' },
      { key: 'head', header: 'Head', kind: 'ns' },
      { key: 'relative', header: 'Change (%)', kind: 'percent' },
      { key: 'interval', header: 'Interval', kind: 'text' },
      { key: 'samples', header: 'Samples (base/head)', kind: 'text' },
    ],
    rows: ordered.map((m) => ({
      status: statusOf(m),
      scope: m.scope,
      metric: metricCell(m),
      unit: m.unit,
      base: valueCell(m, m.base),
      head: valueCell(m, m.head),
      relative: pct(m.relative),
      interval: m.interval ? `${signedPct(m.interval.lo)}..${signedPct(m.interval.hi)}` : '',
      samples: m.samples ? `${m.samples.base}/${m.samples.head}` : '',
    })),
    notes,
  };
}

/** The serving spans' top kernel names side by side: instances, total, mean and median per instance, instances per second of span. */
function spanKernelsTable(span: NonNullable<Comparison['span']>): DataTable {
  const tokens = (s: typeof span.base) => (s.generatedTokens == null ? 'unknown' : `${s.generatedTokens} (${s.tokenSource})`);
  const cell = (f: SpanKernelFigures | null, k: keyof SpanKernelFigures) => (f == null ? null : k === 'perSecond' ? fourDigits(f[k]) : Math.round(f[k]));
  return {
    title: 'Serving span kernels, base vs head (top names by total time)',
    columns: [
      { key: 'name', header: 'Kernel', kind: 'text', display: 'kernel-name' },
      { key: 'category', header: 'Category', kind: 'text' },
      { key: 'baseInstances', header: 'Base instances', kind: 'int' },
      { key: 'headInstances', header: 'Head instances', kind: 'int' },
      { key: 'baseTotal', header: 'Base total', kind: 'ns' },
      { key: 'headTotal', header: 'Head total', kind: 'ns' },
      { key: 'baseMean', header: 'Base mean', kind: 'ns' },
      { key: 'headMean', header: 'Head mean', kind: 'ns' },
      { key: 'baseMedian', header: 'Base median', kind: 'ns' },
      { key: 'headMedian', header: 'Head median', kind: 'ns' },
      { key: 'basePerSecond', header: 'Base / s of span', kind: 'float' },
      { key: 'headPerSecond', header: 'Head / s of span', kind: 'float' },
    ],
    rows: span.kernels.map((k) => ({
      name: k.name,
      category: k.category,
      baseInstances: k.base?.instances ?? null,
      headInstances: k.head?.instances ?? null,
      baseTotal: cell(k.base, 'totalNs'),
      headTotal: cell(k.head, 'totalNs'),
      baseMean: cell(k.base, 'meanNs'),
      headMean: cell(k.head, 'meanNs'),
      baseMedian: cell(k.base, 'medianNs'),
      headMedian: cell(k.head, 'medianNs'),
      basePerSecond: cell(k.base, 'perSecond'),
      headPerSecond: cell(k.head, 'perSecond'),
    })),
    notes: [
      `spans: base ${(span.base.spanNs / 1e9).toFixed(3)} s (${span.base.boundary}), GPU busy ${(span.base.busyShare * 100).toFixed(1)}%, generated tokens ${tokens(span.base)}; head ${(span.head.spanNs / 1e9).toFixed(3)} s (${span.head.boundary}), GPU busy ${(span.head.busyShare * 100).toFixed(1)}%, generated tokens ${tokens(span.head)}`,
    ],
  };
}

/** Kernel or NVTX range changes, per iteration or per second of span. */
function changesTable(title: string, list: Comparison['kernelChanges'], per: Comparison['changesPer']): DataTable {
  const unit = per === 'iteration' ? 'iter' : 's';
  return {
    title,
    columns: [
      { key: 'name', header: 'Name', kind: 'text' },
      { key: 'baseNsPerIter', header: `Base / ${unit}`, kind: 'ns' },
      { key: 'headNsPerIter', header: `Head / ${unit}`, kind: 'ns' },
      { key: 'deltaNsPerIter', header: `Delta / ${unit}`, kind: 'ns' },
    ],
    rows: list.map((k) => ({ name: k.name, baseNsPerIter: Math.round(k.baseNsPerIter), headNsPerIter: Math.round(k.headNsPerIter), deltaNsPerIter: Math.round(k.deltaNsPerIter) })),
  };
}

function moeRoutingTable(m: NonNullable<Comparison['moeRouting']>): DataTable {
  return keyValueTable('MoE routing check (base: learned router, head: ENABLE_PERFECT_ROUTER=1)', [
    ['MoE time per iteration (moe_gemm + moe_routing)', `${Math.round(m.baseMoeNs)} ns -> ${Math.round(m.headMoeNs)} ns (${m.moeChange == null ? 'n/a' : `${(m.moeChange * 100).toFixed(1)}%`})`],
    ['GPU busy per iteration', `${Math.round(m.baseGpuBusyNs)} ns -> ${Math.round(m.headGpuBusyNs)} ns`],
    ['speedup with perfect router', `${(m.speedup * 100).toFixed(1)}%`],
    ['reading', m.reading],
  ]);
}

function findingChangesTable(f: NonNullable<Comparison['findings']>): DataTable {
  return {
    title: 'Findings that appeared or disappeared (see `iterscope findings`)',
    columns: [
      { key: 'change', header: 'Change', kind: 'text' },
      { key: 'id', header: 'Id', kind: 'text' },
      { key: 'baseNs', header: 'Base recoverable', kind: 'ns' },
      { key: 'headNs', header: 'Head recoverable', kind: 'ns' },
      { key: 'title', header: 'Finding', kind: 'text' },
    ],
    rows: [
      ...f.appeared.map((x) => ({ change: 'appeared', id: x.id, baseNs: null, headNs: x.recoverableNs, title: x.title })),
      ...f.disappeared.map((x) => ({ change: 'disappeared', id: x.id, baseNs: x.recoverableNs, headNs: null, title: x.title })),
      ...f.persisted.map((x) => ({ change: 'in both', id: x.id, baseNs: x.baseNs, headNs: x.headNs, title: x.title })),
      ...f.untraced.map((x) => ({ change: `not traced in ${x.missingIn}`, id: x.id, baseNs: x.missingIn === 'head' ? x.recoverableNs : null, headNs: x.missingIn === 'base' ? x.recoverableNs : null, title: x.title })),
    ],
  };
}

/** `summarize` as a table, for people who print it instead of writing JSON. */
export function summaryTables(s: RunSummary): DataTable[] {
  const phases = Object.entries(s.phases);
  return [
    {
      title: `Run summary (${s.run.file}; basis: ${s.basis})`,
      columns: [
        { key: 'scope', header: 'Scope', kind: 'text' },
        { key: 'iterations', header: 'Iterations', kind: 'int' },
        { key: 'meanWallNs', header: 'Wall / iter', kind: 'ns' },
        { key: 'meanGpuBusyNs', header: 'GPU busy / iter', kind: 'ns' },
        { key: 'idlePct', header: 'Idle (%)', kind: 'percent' },
        { key: 'meanKernelNs', header: 'Kernel / iter', kind: 'ns' },
      ],
      rows: [['all', s.overall] as const, ...phases].map(([scope, f]) => ({
        scope,
        iterations: f!.iterations,
        meanWallNs: Math.round(f!.meanWallNs),
        meanGpuBusyNs: Math.round(f!.meanGpuBusyNs),
        idlePct: f!.idleShare * 100,
        meanKernelNs: Math.round(f!.meanKernelNs),
      })),
    },
  ];
}

const round1 = (x: number | null) => (x == null ? null : Math.round(x * 10) / 10);

/** One figure of the engine table: how to read it from each side, its unit, its rounding. */
const ENGINE_FIGURES: { figure: string; unit: string; value: (f: EngineFigures) => number | null }[] = [
  { figure: 'iterations', unit: 'count', value: (f) => f.iterations },
  { figure: 'GPU ns per iteration', unit: 'ns', value: (f) => Math.round(f.gpuNsPerIteration) },
  { figure: 'GPU ns per context token', unit: 'ns', value: (f) => round1(f.gpuNsPerContextToken) },
  { figure: 'GPU ns per generated token', unit: 'ns', value: (f) => round1(f.gpuNsPerGeneratedToken) },
  { figure: 'kernels per iteration', unit: 'count', value: (f) => round1(f.kernelsPerIteration) },
  { figure: 'idle share', unit: '%', value: (f) => round1(f.idleShare * 100) },
];

/** `compare`'s engine table: per phase, both runs side by side with their engines named. */
export function engineTable(e: EngineComparison): DataTable {
  const rows: DataTable['rows'] = [];
  for (const s of e.scopes) {
    const figures = [
      ...ENGINE_FIGURES,
      ...e.categories.map((c) => ({ figure: `${c} share of kernel time`, unit: '%', value: (f: EngineFigures) => round1((f.categoryShare[c] ?? 0) * 100) })),
    ];
    for (const fig of figures) {
      const base = s.base ? fig.value(s.base) : null;
      const head = s.head ? fig.value(s.head) : null;
      rows.push({ scope: s.scope, figure: fig.figure, unit: fig.unit, base, head, ratio: base && head != null ? Math.round((head / base) * 1000) / 1000 : null });
    }
  }
  return {
    title: `Engines side by side: base ${e.base.engine} vs head ${e.head.engine} (information, not gated)`,
    columns: [
      { key: 'scope', header: 'Phase', kind: 'text' },
      { key: 'figure', header: 'Figure', kind: 'text' },
      { key: 'unit', header: 'Unit', kind: 'text' },
      { key: 'base', header: `Base (${e.base.engine})`, kind: 'float' },
      { key: 'head', header: `Head (${e.head.engine})`, kind: 'float' },
      { key: 'ratio', header: 'Head / base', kind: 'float' },
    ],
    rows,
    notes: [
      'GPU ns = GPU busy time (union of the run\'s GPU work in its iteration windows); per-token figures divide all of a phase\'s GPU time by that token kind (in the mixed phase both are upper bounds, not a split)',
      'generated tokens = the log\'s (or NVTX label\'s) generation tokens, else generation requests (one token each without speculative decoding)',
    ],
  };
}

/** Rows the compare chart draws at most (its first screen); the table lists every metric. */
export const MAX_CHART_METRICS = 28;

/** Chart order: regressed, inconclusive, improved, unchanged, then the figures without samples; the larger change first. */
function chartRank(m: MetricDelta): number {
  if (m.regressed) return 0;
  if (!m.verdict) return 5;
  return VERDICT_ORDER.indexOf(m.verdict) + (m.gated ? 0 : 0.5);
}

/** One metric's hover text: its values, change, interval, samples, verdict and why. */
function metricTip(m: MetricDelta): string {
  const lines = [
    `${metricCell(m)} [${m.scope}]`,
    `base ${valueCell(m, m.base)} -> head ${valueCell(m, m.head)} ${m.unit}${m.relative == null ? '' : ` (${signedPct(m.relative)})`}`,
    ...(m.interval ? [`interval ${signedPct(m.interval.lo)}..${signedPct(m.interval.hi)}`] : []),
    ...(m.samples ? [`samples ${m.samples.base} / ${m.samples.head}`] : []),
    `verdict: ${statusOf(m) || 'information (no samples)'}`,
    ...(m.note ? [m.note] : []),
  ];
  return lines.join('\n');
}

/**
 * `compare`'s first chart: each metric's change head vs base with its interval, coloured by
 * verdict. Generic over `c.metrics` (every scope and metric row the comparison has); the ones
 * with a gate verdict first, at most MAX_CHART_METRICS rows, the rest named in the caption.
 */
export function compareChangesChart(c: Comparison): ReportChart {
  const drawable = c.metrics.filter((m) => m.relative != null);
  const ordered = [...drawable].sort((a, b) => chartRank(a) - chartRank(b) || Math.abs(b.relative!) - Math.abs(a.relative!));
  const shown = ordered.slice(0, MAX_CHART_METRICS);
  const data: ChartDatum[] = shown.map((m) => ({
    label: `${metricCell(m)} [${m.scope}]`,
    verdict: m.regressed ? 'regressed' : m.verdict ?? 'information',
    gated: m.gated ? 1 : 0,
    relative: m.relative!,
    ...(m.interval ? { lo: m.interval.lo, hi: m.interval.hi } : {}),
    tip: metricTip(m),
  }));
  const left = [
    ...(ordered.length > shown.length ? [`${ordered.length - shown.length} more metrics (smaller changes) in the table below`] : []),
    ...(c.metrics.length > drawable.length ? [`${c.metrics.length - drawable.length} with a base of 0 (no relative change) in the table only`] : []),
  ];
  return {
    id: 'compare-metric-changes',
    title: `Head vs base: ${c.regressions.length} regressed, ${c.inconclusive.length} inconclusive of the gated metrics`,
    caption: `Each metric's change of its mean (dot) with its ${c.intervals} (bar), coloured by verdict; bold labels are gated (threshold ${(c.threshold * 100).toFixed(1)}%, floor ${c.minDeltaNs} ns). The gated-metrics table lists them all.${left.length ? ` Not drawn: ${left.join('; ')}.` : ''}`,
    data,
    series: ['regressed', 'inconclusive', 'improved', 'unchanged', 'information'],
    threshold: c.threshold,
  };
}

/** `compare` as a document: the changes chart first, then the tables (`comparisonTables`). */
export function comparisonDocument(c: Comparison): ReportDocument {
  const gated = gatedMetricsTable(c);
  const rest = comparisonTables(c).filter((t) => t.title !== gated.title);
  return {
    title: `Compare: ${c.regressions.length ? `${c.regressions.length} regressed` : 'no gated metric regressed'} (base ${c.base.file} vs head ${c.head.file})`,
    file: `${c.base.file} vs ${c.head.file}`,
    sections: [
      { id: 'changes', title: 'Changes, head vs base', blocks: [{ kind: 'chart', chart: compareChangesChart(c) }, { kind: 'table', table: gated }] },
      { id: 'details', title: 'Runs, comparability, engines, kernels, NVTX, findings', blocks: rest.map((table) => ({ kind: 'table' as const, table })) },
    ],
  };
}

/** One self-contained HTML page (`compare --format html`): the chart as inline SVG, then the tables. */
export function comparisonHtml(c: Comparison): Promise<string> {
  return reportToHtml(comparisonDocument(c), { generator: COMPARE_GENERATOR });
}
