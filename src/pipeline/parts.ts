import type { CaptureSettings } from '../load/captureSettings.js';
import type { LoadedData, LoadedExport } from '../load/loadedExport.js';
import type { HostCauseRows } from '../load/hostRangeReads.js';
import { describeExport, type ExportInfo } from '../analysis/exportInfo.js';
import { kernelSummaryNotes, summarizeKernels, type KernelSummary } from '../analysis/kernelSummary.js';
import { projectionCoverageNotes, projectNvtxOntoGpu, type NvtxGpuProjection } from '../analysis/nvtxGpuProjection.js';
import { nvtxSummaryNotes, summarizeNvtxWithDomains, type NvtxSummaryWithDomains } from '../analysis/nvtxSummary.js';
import { buildTimeline, type Timeline } from '../analysis/timeline.js';
import { stepTimeline, type StepTimeline } from '../overview/stepTimeline.js';
import { describeCaptureHealth, launchPhases, type CaptureHealth, type LaunchPhases } from '../analysis/captureHealth.js';
import { analyzeMemoryTraffic, type MemoryTraffic } from '../analysis/memoryTraffic.js';
import { reportCoverage, type ReportCoverage } from '../overview/reportCoverage.js';
import { categoryTime, type CategoryTime } from '../analysis/categoryTime.js';
import type { CategoryClassifier } from '../categories/rules.js';
import { EmptyCaptureError, IterationError } from '../errors.js';
import { findFindings } from '../findings/findFindings.js';
import type { FindingsResult } from '../findings/finding.js';
import { explainScannedGaps, idleByCausePerIteration, placeShortGaps, scanGaps, type GapAnalysis, type GapScan, type ShortGapPlacement } from '../gaps/analyzeGaps.js';
import { findGilHolders, type GilHolderAnalysis } from '../gaps/gilHolders.js';
import { summarizeHost, type HostSummary } from '../gaps/hostSummary.js';
import { hostCauseRows, hostNvtxRanges, type HostNvtxRanges } from '../gaps/hostNvtxRanges.js';
import { analyzeIterationsWithWindows, findWindows, type FoundWindows } from '../iterations/analyzeIterations.js';
import type { IterationAnalysis } from '../iterations/types.js';
import type { IterationWindow } from '../iterations/attribute.js';
import { analyzeLayers, type LayersAnalysis } from '../layers/index.js';
import { foundRangesOf, type FoundRangesData } from '../iterations/sources/index.js';
import { rankFiguresFromIterations, type RankFigures } from '../iterations/rankIterationFigures.js';
import { servingSpan, type ServingSpan } from '../analysis/servingSpan.js';
import { spanSamples } from '../analysis/spanSamples.js';
import { summarizeByPhase, type PhaseSummary } from '../iterations/summary.js';
import { hasPytorchHostSide, pytorchHostSide, type PytorchHostSide } from '../kineto/pytorchHostSide.js';
import type { ReportLogFile } from '../logs/logRecords.js';
import { iterationMetrics, phaseMetrics, type IterationMetricsResult } from '../metrics/iterationMetrics.js';
import type { AnalysisPart, AnalysisRequest } from './request.js';

/** What every part computes with besides its dependencies' values. */
export interface PartContext {
  loaded: LoadedExport;
  request: AnalysisRequest;
  /** The parts asked for, with what they are built from (`resolveParts`). */
  asked: ReadonlySet<AnalysisPart>;
  classifier: CategoryClassifier;
  capture: CaptureSettings;
  logs: ReportLogFile[];
}

/**
 * The iteration windows found (from the NVTX table), or what finding them threw: `iterationRun`
 * throws or records it as it would have thrown it itself, once it knows there is GPU work.
 */
export type IterationWindows = { found: FoundWindows; error?: undefined } | { found?: undefined; error: unknown };

/** The iteration analysis, or why there is none (`ExportAnalysis.iterationError`). */
export interface IterationRun {
  analysis: IterationAnalysis | null;
  error: string | null;
  /** The rows' launch windows, index for index (what the layer split places kernels by); absent without rows. */
  windows?: IterationWindow[];
}

/** The gaps, and per iteration number their idle time by cause (with the iterations). */
export interface GapsPart {
  analysis: GapAnalysis;
  idleByIteration: Map<number, Record<string, number>> | null;
}

/**
 * Every part's value. Besides the parts a caller asks for (`AnalysisPart`): `launches` (the GPU
 * ops and API calls read), `emptyCapture` (the health of a capture without GPU work),
 * `iterationWindows` (the iteration windows found), `iterationRun` (the iteration analysis as
 * made), `healthLaunches` (graph capture against the GPU work after it), `gapScan` (the gaps
 * before the iterations and the NVTX side are known), `shortGaps` (the short gaps placed in the
 * iterations, the busy union's last reader) and `hostRanges` (the GC and GIL ranges taken
 * from the NVTX columns). `iterations` is the iteration analysis with each row's idle causes and
 * GPU metrics, the rows `ExportAnalysis` shows.
 */
export interface PartValues {
  nvtx: NvtxSummaryWithDomains;
  launches: { gpuOps: number };
  nvtxGpu: NvtxGpuProjection;
  emptyCapture: CaptureHealth | null;
  iterationWindows: IterationWindows | null;
  iterationRun: IterationRun;
  gapScan: GapScan;
  shortGaps: ShortGapPlacement;
  gaps: GapsPart;
  pytorchHost: PytorchHostSide | null;
  healthLaunches: LaunchPhases | null;
  servingSpan: ServingSpan | null;
  info: ExportInfo;
  kernels: KernelSummary;
  timeline: Timeline;
  metrics: IterationMetricsResult | null;
  phases: PhaseSummary[];
  rankFigures: RankFigures[] | null;
  iterations: IterationAnalysis | null;
  hostRanges: HostNvtxRanges | null;
  hostCauseRows: HostCauseRows | null;
  host: HostSummary;
  gilHolders: GilHolderAnalysis[];
  memory: MemoryTraffic;
  categories: CategoryTime;
  health: CaptureHealth;
  coverage: ReportCoverage;
  findings: FindingsResult;
  layers: LayersAnalysis | null;
  stepTimeline: StepTimeline | null;
}

export type PartName = keyof PartValues;

/** The values a part reads: undefined for a part of `uses` that is not computed in this analysis. */
export type PartDeps<N extends PartName, U extends PartName> = { readonly [K in N]: PartValues[K] } & { readonly [K in U]: PartValues[K] | undefined };

/** One part of the analysis: what it is computed from, and how. */
export interface PartEntry<P extends PartName = PartName, N extends PartName = PartName, U extends PartName = PartName> {
  name: P;
  /** Parts it is computed from: computed before it, and whenever it is. */
  needs: readonly N[];
  /** Parts it reads when they are computed anyway (computed before it, never for it). */
  uses?: readonly U[];
  /** Loader columns it reads: each is let go after the last part of the analysis that reads it. */
  loads?: readonly LoadedData[];
  /**
   * Loader columns it reads only when another part of the analysis loads them (else it queries the
   * few rows it needs): run and let go like `loads`, never read for this part alone.
   */
  reads?: readonly LoadedData[];
  /**
   * The NVTX worker thread may compute it (`usesLaunches`: from the GPU ops and API calls too;
   * `byQuery`: also when the worker reads no NVTX columns, the analysis loading none).
   */
  background?: { usesLaunches: boolean; byQuery?: boolean };
  /** Its step in `timingsMs` and the progress (default: its name); null: not timed (bookkeeping, cheap). */
  timing?: string | null;
  /**
   * Its value is read by later parts only, never by the analysis (`assembleAnalysis`): let go after
   * the last part of the run that reads it (`PlannedPart.dropValues`), as loader columns are.
   */
  intermediate?: true;
  /** Whether there is anything to compute it from (default yes); when not, its value is null, untimed. */
  when?(ctx: PartContext, deps: PartDeps<N, U>): boolean;
  /** Its value, a new one: never writes into its dependencies' values. */
  compute(ctx: PartContext, deps: PartDeps<N, U>): PartValues[P];
}

/** Keeps an entry's dependency names and its `compute`'s view of them in step. */
function part<P extends PartName, N extends PartName = never, U extends PartName = never>(entry: PartEntry<P, N, U>): PartEntry {
  return entry as unknown as PartEntry;
}

/**
 * Part `name`'s value from the NVTX worker, or undefined (compute it here). The worker answers
 * parts only once its NVTX columns are taken, so they are taken first (waiting for them).
 */
function fromWorker<T>(loaded: LoadedExport, name: string): T | undefined {
  if (!loaded.inBackground(name)) return undefined;
  loaded.sharedNvtx();
  return loaded.takeBackground<T>(name);
}

const GPU_OPS_AND_CALLS: readonly LoadedData[] = ['gpuOps', 'apiCalls'];

/** `no iterations: ...` when the iterations were asked for and none were found. */
function noIterationsNote(run: IterationRun | undefined): { source: 'report'; text: string }[] {
  return run?.error ? [{ source: 'report', text: `no iterations: ${run.error}; the report has no per-iteration sections` }] : [];
}

const nvtx = part({
  name: 'nvtx',
  needs: [],
  loads: ['nvtx'],
  background: { usesLaunches: false },
  compute: ({ loaded }) => fromWorker<NvtxSummaryWithDomains>(loaded, 'nvtx') ?? summarizeNvtxWithDomains(loaded),
});

// Timed by the loader, column by column (`gpuOps`, `apiCalls`).
const launches = part({
  name: 'launches',
  intermediate: true,
  timing: null,
  needs: [],
  loads: GPU_OPS_AND_CALLS,
  compute: ({ loaded }) => {
    const gpuOps = loaded.gpuOps();
    loaded.apiCalls();
    return { gpuOps: gpuOps.count };
  },
});

const nvtxGpu = part({
  name: 'nvtxGpu',
  needs: [],
  // From the GPU ops and API calls when they are read (launch ids checked), else from queries.
  uses: ['launches'],
  loads: ['nvtx', ...GPU_OPS_AND_CALLS],
  background: { usesLaunches: true },
  compute: ({ loaded }) => fromWorker<NvtxGpuProjection>(loaded, 'nvtxGpu') ?? projectNvtxOntoGpu(loaded),
});

const emptyCapture = part({
  name: 'emptyCapture',
  intermediate: true,
  timing: null,
  needs: [],
  uses: ['launches'],
  compute: ({ loaded }, d) => (d.launches?.gpuOps === 0 ? describeCaptureHealth(loaded) : null),
});

// Everything the iteration analysis reads of the NVTX table (the ranges, the fallbacks' ProfilerStep#N,
// SGLang's scheduler ranges): from the shared columns while they are held, by query when none are read
// (from the host-cause query's rows when the same thread ran it first: `uses` the host-cause rows).
// A capture known to have no GPU work seeks none (`iterationRun` says so); past SHARED_NVTX_ROWS the
// windows are sought before the GPU ops are read.
const iterationWindows = part({
  name: 'iterationWindows',
  intermediate: true,
  needs: [],
  uses: ['emptyCapture', 'hostCauseRows'],
  reads: ['nvtx'],
  // The NVTX worker finds the ranges, from its columns or (no NVTX columns read) by query.
  background: { usesLaunches: false, byQuery: true },
  compute: ({ loaded, request }): IterationWindows => {
    try {
      const data = fromWorker<FoundRangesData | null>(loaded, 'iterationWindows');
      const ranges = data ? (foundRangesOf(data, request.selection?.rangeSpec) ?? undefined) : undefined;
      return { found: findWindows(loaded, request.logs ?? [], request.selection, ranges) };
    } catch (err) {
      return { error: err };
    }
  },
});

/** An analysis of steps that ran no GPU work: says so (its GPU columns are all zero, and tables leave them out). */
function withoutGpuWork(analysis: IterationAnalysis, reason: string): IterationAnalysis {
  const note = `the capture has no GPU activity (${reason}): the steps are shown with their host side only`;
  return { ...analysis, noGpuWork: reason, coverage: { ...analysis.coverage, notes: [note, ...analysis.coverage.notes] } };
}

const iterationRun = part({
  name: 'iterationRun',
  timing: 'iterations',
  needs: ['launches', 'emptyCapture', 'iterationWindows'],
  loads: GPU_OPS_AND_CALLS,
  reads: ['gpuTimelines'],
  compute: ({ loaded, request, classifier }, d): IterationRun => {
    const noGpuWork = d.emptyCapture?.noGpuWork ?? null;
    const windows = d.iterationWindows;
    // Without GPU work, steps still have a host side (a CPU-only PyTorch-profiler trace's ProfilerStep#N).
    if (noGpuWork && !windows?.found) {
      if (request.requireIterations) throw new EmptyCaptureError(loaded.path, noGpuWork);
      return { analysis: null, error: 'the capture recorded no GPU work' };
    }
    try {
      if (!windows!.found) throw windows!.error;
      const run = analyzeIterationsWithWindows(loaded, { logs: request.logs, selection: request.selection, classifier }, windows!.found);
      const analysis = run.analysis;
      return { analysis: noGpuWork ? withoutGpuWork(analysis, noGpuWork) : analysis, error: null, windows: run.windows };
    } catch (err) {
      if (!(err instanceof IterationError) || request.requireIterations) throw err;
      return { analysis: null, error: err.message.replace(`${loaded.path}: `, '') };
    }
  },
});

// The gaps from the GPU ops and the API calls alone, before the iteration windows are taken: while
// the NVTX worker still reads (their NVTX side), this thread would otherwise wait.
const gapScan = part({
  name: 'gapScan',
  intermediate: true,
  needs: ['launches'],
  loads: GPU_OPS_AND_CALLS,
  reads: ['gpuTimelines'],
  compute: ({ loaded, request }) => scanGaps(loaded, { minGapNs: request.minGapNs, deviceId: request.deviceId }),
});

// The short gaps placed in the iterations: the last reader of the busy union, which goes before
// the long gaps are explained (their rows and the host side are the gaps' own peak).
const shortGaps = part({
  name: 'shortGaps',
  intermediate: true,
  needs: ['gapScan'],
  uses: ['iterationRun'],
  loads: ['gpuOps'],
  reads: ['gpuTimelines'],
  timing: null,
  compute: ({ loaded }, d) => placeShortGaps(loaded, d.gapScan, d.iterationRun?.analysis?.iterations),
});

// The API calls are read by the gap scan only (each long gap's launch call is found there).
const gaps = part({
  name: 'gaps',
  needs: ['launches', 'gapScan', 'hostCauseRows', 'shortGaps'],
  uses: ['iterationRun'],
  loads: ['gpuOps'],
  compute: ({ loaded, asked }, d): GapsPart => {
    const rows = d.iterationRun?.analysis?.iterations ?? null;
    const analysis = explainScannedGaps(loaded, d.gapScan, {
      iterations: rows,
      iterationsUnavailable: asked.has('coverage') ? undefined : (d.iterationRun?.error ?? undefined),
      causeRows: d.hostCauseRows ?? undefined,
      shortGaps: d.shortGaps,
    });
    return { analysis, idleByIteration: rows ? idleByCausePerIteration(analysis, rows, { includeFragmented: true }) : null };
  },
});

const pytorchHost = part({
  name: 'pytorchHost',
  needs: ['iterationRun'],
  loads: GPU_OPS_AND_CALLS,
  when: ({ loaded, request }, d) => !!d.iterationRun.analysis && hasPytorchHostSide(loaded, request.torchTrace),
  compute: ({ loaded, request }, d) => pytorchHostSide(loaded, d.iterationRun.analysis!, request.torchTrace),
});

// Graph capture against the GPU work after it, and whole-graph rows: from the columns while they are here.
const healthLaunches = part({
  name: 'healthLaunches',
  intermediate: true,
  needs: [],
  uses: ['launches'],
  loads: GPU_OPS_AND_CALLS,
  background: { usesLaunches: true },
  when: (_, d) => !!d.launches,
  compute: ({ loaded }) => fromWorker<LaunchPhases>(loaded, 'healthLaunches') ?? launchPhases(loaded),
});

// The serving span from the steps, else from the same columns (and the graph capture above).
const servingSpanPart = part({
  name: 'servingSpan',
  needs: ['launches', 'iterationRun', 'healthLaunches'],
  loads: GPU_OPS_AND_CALLS,
  when: (_, d) => d.launches.gpuOps > 0,
  compute: ({ loaded, capture, classifier, request }, d) => {
    const span = servingSpan(loaded, { iterations: d.iterationRun.analysis, launches: d.healthLaunches, capture, classifier });
    return span && request.spanSamples ? { ...span, samples: spanSamples(loaded, span, classifier) } : span;
  },
});

// `info` counts ranges per domain from the NVTX summary when there is one.
const info = part({
  name: 'info',
  needs: [],
  uses: ['nvtx'],
  loads: GPU_OPS_AND_CALLS,
  background: { usesLaunches: true },
  compute: ({ loaded }, d) => fromWorker<ExportInfo>(loaded, 'info') ?? describeExport(loaded, { nvtxRangesByDomain: d.nvtx?.rangesByDomain }),
});

const kernels = part({
  name: 'kernels',
  needs: [],
  loads: ['gpuOps'],
  background: { usesLaunches: true },
  compute: ({ loaded, request }) => fromWorker<KernelSummary>(loaded, 'kernels') ?? summarizeKernels(loaded, request.kernels),
});

const timeline = part({
  name: 'timeline',
  needs: ['launches'],
  loads: ['gpuOps'],
  compute: ({ loaded, request }) => buildTimeline(loaded, request.kernelNames),
});

const metrics = part({
  name: 'metrics',
  needs: ['iterationRun'],
  when: (_, d) => !!d.iterationRun.analysis,
  compute: ({ loaded }, d) => iterationMetrics(loaded, d.iterationRun.analysis!.iterations),
});

// `iterations --summary`, with the GPU metrics per phase aggregated exactly from the per-iteration sums.
const phases = part({
  name: 'phases',
  timing: null,
  needs: ['iterationRun'],
  uses: ['metrics'],
  compute: (_, d) => {
    const it = d.iterationRun.analysis;
    if (!it) return [];
    const rows = summarizeByPhase(it.iterations, it.categories);
    const m = d.metrics;
    if (!m?.available) return rows;
    const byPhase = phaseMetrics(it.iterations, m);
    return rows.map((p) => ({ ...p, metrics: byPhase.get(p.phase) ?? {} }));
  },
});

// Each step split by decoder layer and module kind (src/layers): from the iteration rows' launch
// windows and the same GPU ops and API calls; the layerwise NVTX markers by query, or from the
// NVTX columns when another part reads them.
const layers = part({
  name: 'layers',
  needs: ['iterationRun'],
  // The host-cause rows (the gaps') hold the launching threads' ranges: the markers among them, no query.
  uses: ['hostCauseRows'],
  loads: GPU_OPS_AND_CALLS,
  reads: ['nvtx'],
  when: (_, d) => !!d.iterationRun.analysis && !!d.iterationRun.windows && !d.iterationRun.analysis.noGpuWork,
  compute: ({ loaded, request, classifier }, d) => analyzeLayers(loaded, d.iterationRun.analysis!, d.iterationRun.windows!, classifier, request.layers, d.hostCauseRows?.rows),
});

const rankFigures = part({
  name: 'rankFigures',
  needs: ['iterationRun'],
  when: (_, d) => !!d.iterationRun.analysis,
  compute: ({ loaded, classifier, request }, d) => rankFiguresFromIterations(loaded, d.iterationRun.analysis!, classifier, request.communicationCategory),
});

/** The iteration analysis with each row's idle causes (`gaps`) and GPU metrics, and the metrics' notes. */
const iterations = part({
  name: 'iterations',
  timing: null,
  needs: ['iterationRun'],
  uses: ['gaps', 'metrics'],
  compute: (_, d) => {
    const it = d.iterationRun.analysis;
    if (!it) return null;
    const idle = d.gaps?.idleByIteration ?? null;
    const m = d.metrics ?? null;
    const sampled = m?.available ? m : null;
    return {
      ...it,
      iterations: it.iterations.map((row, i) => ({
        ...row,
        ...(idle ? { idleByCauseNs: idle.get(row.iter) ?? {} } : {}),
        ...(sampled ? { metrics: sampled.perIteration[i] ?? {} } : {}),
      })),
      coverage: m ? { ...it.coverage, notes: [...it.coverage.notes, ...m.notes] } : it.coverage,
      ...(sampled ? { metricNames: sampled.metricNames } : {}),
    };
  },
});

// The GC and GIL ranges `host` and `gilHolders` read, taken while the NVTX columns are here (on a
// large export they go before the gaps are computed). Null when the analysis loads no NVTX
// columns: those parts then query the few rows they need. With the NVTX worker, extracted there
// (before the launches reach it).
const hostRanges = part({
  name: 'hostRanges',
  intermediate: true,
  timing: 'hostRanges',
  needs: [],
  reads: ['nvtx'],
  background: { usesLaunches: false },
  compute: ({ loaded }) => fromWorker<HostNvtxRanges>(loaded, 'hostRanges') ?? (loaded.isLoaded('nvtx') ? hostNvtxRanges(loaded) : null),
});

// The rows the gaps' host causes read, taken while the NVTX columns are here (as `hostRanges`).
// Without NVTX columns, the NVTX worker reads them by query while this thread reads the GPU ops;
// with neither (null), the gaps query the rows of the threads that launch.
const hostCauseRowsPart = part({
  name: 'hostCauseRows',
  intermediate: true,
  needs: [],
  reads: ['nvtx'],
  background: { usesLaunches: false, byQuery: true },
  compute: ({ loaded }) => fromWorker<HostCauseRows>(loaded, 'hostCauseRows') ?? (loaded.isLoaded('nvtx') ? hostCauseRows(loaded) : null),
});

const host = part({
  name: 'host',
  needs: ['gaps', 'hostRanges'],
  uses: ['iterationRun', 'info'],
  compute: ({ loaded }, d) => summarizeHost(loaded, d.gaps.analysis, d.iterationRun?.analysis?.iterations, d.info?.nvtxDomains, d.hostRanges ?? undefined),
});

const gilHolders = part({
  name: 'gilHolders',
  needs: ['gaps', 'info', 'hostRanges'],
  compute: ({ loaded }, d) => findGilHolders(loaded, d.gaps.analysis, d.info.nvtxDomains, d.hostRanges ?? undefined),
});

const memory = part({
  name: 'memory',
  needs: ['gaps'],
  uses: ['iterationRun'],
  reads: ['memcpyTraffic'],
  compute: ({ loaded }, d) => {
    const dev = d.gaps.analysis.devices;
    const gpuSpan = dev.length ? { startNs: Math.min(...dev.map((x) => x.spanStartNs)), endNs: Math.max(...dev.map((x) => x.spanEndNs)) } : null;
    return analyzeMemoryTraffic(loaded, d.iterationRun?.analysis?.iterations ?? [], gpuSpan);
  },
});

const categories = part({
  name: 'categories',
  timing: null,
  needs: ['kernels'],
  uses: ['iterationRun'],
  compute: ({ classifier }, d) => categoryTime(d.iterationRun?.analysis ?? null, d.kernels, classifier),
});

// A capture without GPU work was described already (`emptyCapture`): that health is reused.
const health = part({
  name: 'health',
  needs: ['healthLaunches', 'emptyCapture'],
  compute: ({ loaded }, d) => ({ ...(d.emptyCapture ?? describeCaptureHealth(loaded)), launches: d.healthLaunches }),
});

const coverage = part({
  name: 'coverage',
  timing: null,
  needs: ['gaps', 'kernels', 'nvtx', 'categories'],
  uses: ['iterations', 'iterationRun', 'nvtxGpu', 'metrics'],
  compute: (_, d) =>
    reportCoverage({
      iterations: d.iterations ?? null,
      gaps: d.gaps.analysis,
      kernels: d.kernels,
      kernelNotes: kernelSummaryNotes(d.kernels),
      nvtxNotes: nvtxSummaryNotes(d.nvtx.summary),
      projection: d.nvtxGpu ?? null,
      projectionNotes: projectionCoverageNotes(d.nvtxGpu ?? null),
      metrics: d.metrics ?? null,
      categories: d.categories,
      extraNotes: noIterationsNote(d.iterationRun),
    }),
});

const findings = part({
  name: 'findings',
  needs: ['info', 'kernels', 'iterations', 'iterationRun', 'phases', 'metrics', 'gaps', 'host', 'gilHolders', 'memory', 'health'],
  uses: ['layers'],
  compute: ({ loaded, request, capture, logs }, d) =>
    findFindings(
      {
        file: loaded.path,
        info: d.info,
        kernels: d.kernels,
        iterations: d.iterations,
        iterationError: d.iterationRun.error,
        phases: d.phases,
        metrics: d.metrics,
        gaps: d.gaps.analysis,
        host: d.host,
        gilHolders: d.gilHolders,
        memory: d.memory,
        logs,
        health: d.health,
        capture,
        ...(d.layers ? { layers: d.layers } : {}),
      },
      { thresholds: request.findingThresholds },
    ),
});

// After the findings (it draws the steps they cite): the GPU ops and API calls are held until here
// when it is asked for (the HTML report), not otherwise.
const stepTimelinePart = part({
  name: 'stepTimeline',
  needs: ['launches', 'iterations', 'gaps', 'hostCauseRows', 'findings'],
  // With the layers (`report --format html --layers`), each drawn step's layer spans: a lane per device.
  uses: ['hostRanges', 'layers'],
  loads: GPU_OPS_AND_CALLS,
  when: (_, d) => !!d.iterations?.iterations.length,
  compute: ({ loaded, classifier }, d) =>
    stepTimeline(loaded, {
      rows: d.iterations!.iterations,
      findings: d.findings,
      gaps: d.gaps.analysis,
      nvtx: d.hostCauseRows?.rows ?? null,
      gil: d.hostRanges?.gilCandidates ?? [],
      classifier,
      layers: d.layers,
    }),
});

/**
 * Every part, in an order where each comes after what it reads. Where it matters for memory and
 * time: the NVTX summary before the GPU ops and API calls are read; the NVTX GPU projection right
 * after, from them; the iteration windows right before the iteration analysis (with the NVTX
 * worker, its NVTX columns are waited for there, no earlier: what needs only the launches, the
 * health's launch phases, comes before); every reader of the API calls before
 * `kernels` (the API calls, ~123 MB on a large export, are let go before the kernel summary's
 * buffers are made); the readers of the GPU ops before the GPU metrics; the findings before the
 * coverage, the one reader of the NVTX GPU projection (the worker's last and longest part), so
 * this thread computes them while the worker still projects.
 */
export const PARTS: readonly PartEntry[] = [
  nvtx,
  launches,
  nvtxGpu,
  emptyCapture,
  healthLaunches,
  gapScan,
  hostCauseRowsPart,
  iterationWindows,
  iterationRun,
  hostRanges,
  // The last readers of the API calls before the short gaps and the long gaps' explanation (which
  // read none): on the 10x bench export the calls (90 MB) go before the gaps' rows are made.
  pytorchHost,
  servingSpanPart,
  info,
  shortGaps,
  gaps,
  kernels,
  timeline,
  metrics,
  phases,
  layers,
  rankFigures,
  iterations,
  host,
  gilHolders,
  memory,
  categories,
  health,
  findings,
  stepTimelinePart,
  coverage,
];
