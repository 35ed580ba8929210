import { layerSpreadTable, phaseLayersTable } from '../layersReport.js';
import { crossRankTables } from '../ranksReport.js';
import { basename } from 'node:path';
import { compactRanges } from '../../src/formatRanges.js';
import { gapsTables } from '../gapsReport.js';
import { phaseSummaryTable } from '../iterationsReport.js';
import { kernelSummaryTable } from '../kernelsReport.js';
import { nvtxSummaryTable } from '../nvtxReport.js';
import { hostSidePhaseTable, hostSideTable } from '../hostSideReport.js';
import type { DataTable } from '../table.js';
import { formatInt, formatNs } from '../units.js';
import { shortKernelName } from '../kernelName.js';
import { gpuMetricsChart, gpuTimeByCategoryChart, idleByCauseChart, idleByIterationChart, type ReportChart } from './charts.js';
import { categoryTable, factsTable, hostTable, nvtxProjectionTable, PHASE_LABELS, phaseMetricsTable, reportIterationsTable } from './tables.js';
import type { ReportData } from '../../src/pipeline/exportAnalysis.js';
import type { ReportAcrossRanks } from '../../src/ranks/ranksFromExports.js';
import { DEFAULT_REPORT_LAYOUT, type ReportLayout } from './layout.js';
import type { FindingsResult } from '../../src/findings/finding.js';
import { recordedText, tracedText } from '../infoReport.js';
import type { StepTimeline } from '../../src/overview/stepTimeline.js';
import { iterationOverview, type IterationOverview } from './overview.js';

/** A piece of a report section. Writers render each kind; Markdown leaves charts out. */
export type ReportBlock =
  | { kind: 'table'; table: DataTable }
  | { kind: 'paragraph'; text: string }
  | { kind: 'list'; items: string[] }
  | { kind: 'chart'; chart: ReportChart }
  /** Ranked findings; each links to the section its evidence is in. */
  | { kind: 'findings'; findings: FindingsResult }
  /** Every iteration at a glance (HTML only: Markdown draws no charts). */
  | { kind: 'overview'; overview: IterationOverview }
  /** A few steps at kernel level, zoomable (HTML only). */
  | { kind: 'timeline'; timeline: StepTimeline };

export interface ReportSection {
  /** Stable anchor (`run`, `kernels`, `categories`, `iterations`, `idle`, `nvtx`, `host`, `metrics`, `coverage`). */
  id: string;
  title: string;
  blocks: ReportBlock[];
}

/** The report as structured content, rendered by `reportToMarkdown` and `reportToHtml`. */
export interface ReportDocument {
  title: string;
  file: string;
  sections: ReportSection[];
}

const table = (t: DataTable): ReportBlock => ({ kind: 'table', table: t });
const pct = (part: number, whole: number) => (whole > 0 ? `${((part * 100) / whole).toFixed(1)}%` : 'n/a');

/** Label of the fragmented-idle rows, as the gaps tables print it. */
export function fragmentedLabel(minGapNs: number): string {
  return `(fragmented < ${formatNs(minGapNs)})`;
}

function limit(t: DataTable, top: number, what: string): DataTable {
  if (top <= 0 || t.rows.length <= top) return t;
  return { ...t, title: `${t.title} (top ${top} of ${t.rows.length} ${what})`, rows: t.rows.slice(0, top) };
}

function runSection(d: ReportData): ReportSection {
  const { info } = d;
  const facts: [string, string][] = [['Export', d.file]];
  // What the capture can answer, before any number: why there is no GPU work, what was profiled and traced.
  const h = d.health;
  if (h.noGpuWork) facts.push(['GPU work', `none: ${h.noGpuWork}`]);
  if (h.command) facts.push(['Profiled command', h.command]);
  if (h.tracing.events.length) facts.push(['Traced (nsys)', tracedText(h)]);
  facts.push(['Recorded', recordedText(h)]);
  facts.push(['nsys version', `${info.productVersion ?? 'unknown'}${info.schemaVersion ? ` (export schema ${info.schemaVersion})` : ''}`]);
  facts.push(['GPUs', info.gpus.length ? info.gpus.map((g) => `${g.id}: ${g.name ?? 'unknown'}${g.smCount ? ` (${g.smCount} SMs)` : ''}`).join('; ') : 'not listed']);
  facts.push(['Devices with GPU work', info.activeDevices.length ? info.activeDevices.map((d) => `device ${d}`).join(', ') : 'none']);
  if (info.sessionStartUtc) facts.push(['Session start (UTC)', info.sessionStartUtc]);
  if (info.durationNs != null) facts.push(['Session duration', formatNs(info.durationNs)]);
  if (info.activityStartNs != null && info.activityEndNs != null) {
    facts.push(['Capture window (CUDA/NVTX activity)', `${formatNs(info.activityStartNs)} .. ${formatNs(info.activityEndNs)} (${formatNs(info.activityEndNs - info.activityStartNs)})`]);
  }
  const it = d.iterations;
  if (it && it.iterations.length) {
    const start = it.iterations.reduce((a, r) => Math.min(a, r.startNs), Infinity);
    const end = it.iterations.reduce((a, r) => Math.max(a, r.endNs), -Infinity);
    facts.push(['Iteration windows', `${formatNs(start)} .. ${formatNs(end)} (${formatNs(end - start)})`]);
    const iters = [...new Set(it.iterations.map((r) => r.iter))].sort((a, b) => a - b);
    facts.push(['Iterations found', `${it.iterations.length} (${compactRanges(iters)}); ${it.coverage.numbering.map((n) => `pid ${n.pid}: ${n.detail}`).join('; ')}`]);
    if (d.logs.length) facts.push(['Iterations joined to a log record', `${it.coverage.joined} of ${it.iterations.length}`]);
  } else {
    facts.push(['Iterations found', `none (${d.iterationError ?? 'no iteration ranges'})`]);
  }
  for (const l of d.logs) {
    const formats = Object.entries(l.formats).map(([f, n]) => `${n} ${f}`).join(', ');
    facts.push([`Log ${basename(l.file)}`, `${l.records} records${formats ? ` (${formats})` : ''}${l.skippedLines ? `, ${l.skippedLines} line${l.skippedLines === 1 ? '' : 's'} skipped` : ''}`]);
  }
  facts.push(['CUDA graph trace', `${info.graphTraceMode}${info.graphTraceModeConfigured ? ` (configured: ${info.graphTraceModeConfigured})` : ''}`]);
  facts.push(['GIL traced / GC traced', `${info.gilTraced ? 'yes' : 'no'} / ${info.gcTraced ? 'yes' : 'no'}`]);
  if (info.profilerApiGated) facts.push(['Profiler-gated capture', `yes${info.profileStartStop ? ` (profile range ${info.profileStartStop})` : ''}`]);
  for (const [k, v] of Object.entries(info.environment)) facts.push([`env ${k}`, v]);
  return { id: 'run', title: 'Run', blocks: [table(factsTable(undefined, facts)), { kind: 'list', items: highlights(d) }] };
}

/** A few headline numbers, each copied from a table further down. */
function highlights(d: ReportData): string[] {
  const out: string[] = [];
  const it = d.iterations;
  if (it && it.iterations.length) {
    const wall = it.iterations.reduce((a, r) => a + r.wallNs, 0);
    const busy = it.iterations.reduce((a, r) => a + r.gpuBusyNs, 0);
    const phases = d.phases.map((p) => `${PHASE_LABELS[p.phase] ?? p.phase} ${p.iterations}`).join(', ');
    out.push(`${it.iterations.length} iterations (${phases}); GPU busy ${formatNs(busy)} of ${formatNs(wall)} iteration wall time (${pct(busy, wall)}).`);
    const top = d.categories.rows[0];
    if (top && top.iterationNs > 0) out.push(`Largest kernel category in iterations: ${top.category}, ${formatNs(top.iterationNs)} (${top.iterationPercent.toFixed(1)}% of iteration kernel time).`);
  }
  const idle = d.gaps.devices.reduce((a, x) => a + x.idleNs, 0);
  const span = d.gaps.devices.reduce((a, x) => a + x.spanNs, 0);
  if (span > 0) {
    const causes = Object.entries(d.gaps.idleByCauseNs).sort((a, b) => b[1] - a[1]);
    const main = causes[0];
    const frag = d.gaps.devices.reduce((a, x) => a + x.fragmentedIdleNs, 0);
    out.push(
      `GPU idle ${formatNs(idle)} of ${formatNs(span)} device span (${pct(idle, span)}): gaps >= ${formatNs(d.gaps.minGapNs)} ${formatNs(idle - frag)}, shorter gaps ${formatNs(frag)}` +
        `${main ? `; largest cause: ${main[0]}, ${formatNs(main[1])} (${pct(main[1], idle)} of idle)` : ''}.`,
    );
  }
  const k = d.kernels.rows[0];
  if (k) out.push(`Top kernel: ${shortKernelName(k.name)}, ${formatNs(k.total)} (${k.timePercent.toFixed(1)}% of kernel time) in ${formatInt(k.count)} instances.`);
  return out;
}

function kernelsSection(d: ReportData, layout: ReportLayout): ReportSection {
  const t = kernelSummaryTable(d.kernels);
  return { id: 'kernels', title: 'Top kernels', blocks: [table({ ...limit(t, layout.top, 'kernel names'), notes: [] })] };
}

/** The per-iteration charts, made once: their sections and the iterations chart draw the same data. */
interface IterationCharts {
  gpu: ReportChart;
  idle: ReportChart | null;
}

function iterationCharts(d: ReportData, layout: ReportLayout): IterationCharts | null {
  return layout.charts && d.iterations && d.iterations.iterations.length ? { gpu: gpuTimeByCategoryChart(d.iterations), idle: idleByIterationChart(d.iterations) } : null;
}

function categoriesSection(d: ReportData, layout: ReportLayout, charts: IterationCharts | null): ReportSection {
  const blocks: ReportBlock[] = [];
  if (d.iterations || d.categories.captureKernelNs > 0) blocks.push(table(categoryTable(d.categories)));
  if (layout.charts && d.iterations && d.iterations.iterations.length) {
    blocks.push({ kind: 'chart', chart: charts!.gpu });
    const m = gpuMetricsChart(d.iterations);
    if (m) blocks.push({ kind: 'chart', chart: m });
  }
  return { id: 'categories', title: 'GPU time by kernel category', blocks };
}

function iterationsSection(d: ReportData, layout: ReportLayout): ReportSection | null {
  const it = d.iterations;
  if (!it || it.iterations.length === 0) return null;
  return {
    id: 'iterations',
    title: 'Iterations',
    blocks: [table(phaseSummaryTable(d.phases, it.categories)), table(reportIterationsTable(it, layout.iterationRows, layout.slowest))],
  };
}

/** "Layers inside the step" (`report --layers`): per phase and layer, and the spread across layers. */
function layersSection(d: ReportData): ReportSection | null {
  const a = d.layers;
  if (!a) return null;
  const blocks: ReportBlock[] = [];
  if (a.notes.length) blocks.push({ kind: 'list', items: a.notes });
  blocks.push(table(layerSpreadTable(a)), table(phaseLayersTable(a)));
  return { id: 'layers', title: 'Layers inside the step', blocks };
}

function idleSection(d: ReportData, layout: ReportLayout, charts: IterationCharts | null): ReportSection {
  const [top, devices, causes, phases] = gapsTables(d.gaps, layout.top);
  const blocks: ReportBlock[] = [table(devices), table(causes), ...(layout.charts ? [{ kind: 'chart' as const, chart: idleByCauseChart(d.gaps, fragmentedLabel(d.gaps.minGapNs)) }] : []), table(top)];
  if (phases) blocks.push(table(phases));
  if (layout.charts && d.iterations) {
    const c = charts?.idle ?? null;
    if (c) blocks.push({ kind: 'chart', chart: c });
  }
  return { id: 'idle', title: 'GPU idle time and its causes', blocks };
}

function nvtxSection(d: ReportData, layout: ReportLayout): ReportSection {
  const blocks: ReportBlock[] = [];
  if (d.nvtx.rows.length) blocks.push(table({ ...limit(nvtxSummaryTable(d.nvtx), layout.top, 'ranges'), notes: [] }));
  else blocks.push({ kind: 'paragraph', text: 'The export has no NVTX ranges.' });
  if (d.projection && d.projection.rows.length) blocks.push(table(nvtxProjectionTable(d.projection, layout.top)));
  return { id: 'nvtx', title: 'NVTX ranges (CPU time and GPU projection)', blocks };
}

function hostSection(d: ReportData): ReportSection {
  return { id: 'host', title: 'Python GC and GIL', blocks: [table(hostTable(d.host))] };
}

/** "Host side (PyTorch profiler)": top aten ops per phase, then per iteration when they fit. */
function pytorchHostSection(d: ReportData, layout: ReportLayout): ReportSection | null {
  const h = d.pytorchHost;
  if (!h) return null;
  const blocks: ReportBlock[] = [];
  if (h.notes.length) blocks.push({ kind: 'list', items: h.notes });
  blocks.push(table(hostSidePhaseTable(h.byPhase.map((g) => ({ ...g, group: PHASE_LABELS[g.group] ?? g.group })))));
  if (h.iterations.length <= layout.iterationRows) blocks.push(table(hostSideTable(h.iterations, 'Per iteration')));
  return { id: 'pytorch-host', title: 'Host side (PyTorch profiler)', blocks };
}

function metricsSection(d: ReportData): ReportSection | null {
  const names = d.iterations?.metricNames ?? [];
  if (!d.metrics?.available || names.length === 0 || d.phases.length === 0) return null;
  return { id: 'metrics', title: 'GPU metrics', blocks: [table(phaseMetricsTable(d.phases, names))] };
}

function coverageSection(d: ReportData): ReportSection {
  const c = d.coverage;
  const facts: [string, string][] = [];
  if (d.iterations) {
    facts.push(['GPU op time placed in iterations', `${c.placedPercent.toFixed(1)}% (${formatNs(c.placedNs)} of ${formatNs(c.gpuOpNs)}; ${formatInt(c.placedOps)} of ${formatInt(c.gpuOps)} ops)`]);
    if (c.outsideNs) facts.push(['Launched outside any iteration window', formatNs(c.outsideNs)]);
    if (c.noRuntimeNs) facts.push(['Without a CUDA API row (not placed)', formatNs(c.noRuntimeNs)]);
    if (c.otherProcessNs) facts.push(['In processes without iterations', formatNs(c.otherProcessNs)]);
    facts.push(['Iteration kernel time in a named category (not other)', `${c.categorizedPercent.toFixed(1)}% (${formatNs(c.categorizedNs)})`]);
  }
  facts.push(['Capture kernel time in a named category (not other)', `${c.captureCategorizedPercent.toFixed(1)}%`]);
  if (d.logs.length) {
    facts.push(['Iterations joined to a log record', `${c.iterationsJoined} of ${c.iterationsFound}`]);
    facts.push(['Iterations without a log record', c.windowsWithoutRecord.length ? compactRanges(c.windowsWithoutRecord) : 'none']);
    facts.push(['Log records not matched (outside the capture)', c.recordsOutsideCapture.length ? `${c.recordsOutsideCapture.length} (${compactRanges(c.recordsOutsideCapture)})` : 'none']);
    facts.push(['Log lines skipped (not iteration records)', String(c.logSkippedLines)]);
    if (c.labelMismatches.length) facts.push(['NVTX label differs from the log', compactRanges(c.labelMismatches)]);
  }
  if (c.projectionOps != null && c.projectionOpsInRanges != null) facts.push(['GPU ops launched inside an NVTX range', `${pct(c.projectionOpsInRanges, c.projectionOps)} (${formatInt(c.projectionOpsInRanges)} of ${formatInt(c.projectionOps)})`]);
  return {
    id: 'coverage',
    title: 'Coverage and notes',
    blocks: [
      table(factsTable(undefined, facts)),
      { kind: 'list', items: [...d.health.diagnostics.map((n) => `nsys ${n.severity}: ${n.text}${n.count > 1 ? ` (${n.count} times)` : ''}`), ...c.notes.map((n) => `${n.source}: ${n.text}`)] },
    ],
  };
}

/** Assembles the report's sections from its data (`analyzeExport` with `REPORT_PARTS`). Pure: no I/O. */
/** With one export per rank: busy spread, straggler, communication and collective wait per iteration. */
function crossRankSection(d: ReportAcrossRanks): ReportSection | null {
  if (!d.crossRank) return null;
  const v = d.crossRank;
  return {
    id: 'ranks',
    title: 'Across ranks',
    blocks: [
      { kind: 'paragraph', text: `The other sections describe ${basename(d.file)}; this one compares all ${v.ranks.length} ranks, iteration by iteration.` },
      ...crossRankTables(v).map(table),
      ...(v.notes.length ? [{ kind: 'list', items: v.notes } as ReportBlock] : []),
    ],
  };
}

/** What to fix first, ranked by recoverable time: the report opens with it. */
function findingsSection(d: ReportData): ReportSection {
  const findings = d.findings;
  return { id: 'findings', title: 'Findings', blocks: [{ kind: 'findings', findings }] };
}

/** The iterations at a glance: the HTML report's first screen (charts only). */
function overviewSection(d: ReportData, charts: IterationCharts | null): ReportSection | null {
  if (!charts || !d.iterations) return null;
  return { id: 'overview', title: 'Iterations at a glance', blocks: [{ kind: 'overview', overview: iterationOverview(d.iterations, d.findings, charts) }] };
}

/** The steps that matter at kernel level, when the analysis made them (`stepTimeline`; charts only). */
function timelineSection(d: ReportData, layout: ReportLayout): ReportSection | null {
  if (!layout.charts || !d.stepTimeline?.steps.length) return null;
  return { id: 'timeline', title: 'Step timeline', blocks: [{ kind: 'timeline', timeline: d.stepTimeline }] };
}

export function reportDocument(d: ReportAcrossRanks, layout: Partial<ReportLayout> = {}): ReportDocument {
  const l: ReportLayout = { ...DEFAULT_REPORT_LAYOUT, ...layout };
  const charts = iterationCharts(d, l);
  const sections = [
    overviewSection(d, charts),
    findingsSection(d),
    timelineSection(d, l),
    runSection(d),
    kernelsSection(d, l),
    categoriesSection(d, l, charts),
    iterationsSection(d, l),
    layersSection(d),
    crossRankSection(d),
    idleSection(d, l, charts),
    nvtxSection(d, l),
    hostSection(d),
    pytorchHostSection(d, l),
    metricsSection(d),
    coverageSection(d),
  ].filter((s): s is ReportSection => s !== null);
  return { title: `iterscope report: ${basename(d.file)}`, file: d.file, sections };
}
