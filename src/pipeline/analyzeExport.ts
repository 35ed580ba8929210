import type { ExportHandle } from '../export/openExport.js';
import { describeExport } from '../analysis/exportInfo.js';
import { kernelSummaryNotes, summarizeKernels } from '../analysis/kernelSummary.js';
import { projectionCoverageNotes, projectNvtxOntoGpu } from '../analysis/nvtxGpuProjection.js';
import { nvtxSummaryNotes, summarizeNvtxWithDomains, type NvtxRangesByDomain, type NvtxSummaryWithDomains } from '../analysis/nvtxSummary.js';
import type { KernelSummary } from '../analysis/kernelSummary.js';
import type { NvtxGpuProjection } from '../analysis/nvtxGpuProjection.js';
import { buildTimeline } from '../analysis/timeline.js';
import { compileCategoryRules, defaultCategoryClassifier, type CategoryClassifier } from '../categories/rules.js';
import { EmptyCaptureError, IterationError } from '../errors.js';
import { describeCaptureHealth, launchPhases, type CaptureHealth, type LaunchPhases } from '../analysis/captureHealth.js';
import { analyzeGaps, idleByCausePerIteration } from '../gaps/analyze.js';
import { analyzeIterations } from '../iterations/analyze.js';
import { addGpuMetrics, addPhaseMetrics } from '../iterations/gpuMetrics.js';
import { summarizeByPhase } from '../iterations/summary.js';
import { hasPytorchHostSide, pytorchHostSide } from '../kineto/pytorchHostSide.js';
import { rankFiguresFromIterations } from '../iterations/rankIterationFigures.js';
import { categoryTime } from '../categories/categoryTime.js';
import { reportCoverage, type ReportNote } from '../analysis/reportCoverage.js';
import { summarizeHost } from '../gaps/hostSummary.js';
import { findGilHolders } from '../gaps/gilHolders.js';
import { analyzeMemoryTraffic } from '../analysis/memoryTraffic.js';
import { servingSpan } from '../iterations/servingSpan.js';
import { findFindings } from '../findings/findFindings.js';
import { resolveParts, type AnalysisPart, type AnalysisRequest, type NvtxReadMode } from './request.js';
import { findingsInputOf, type ExportAnalysis } from './types.js';
import { captureSettings } from '../load/captureSettings.js';
import { LoadedExport } from '../load/loadedExport.js';
import { builtEntry } from '../builtEntry.js';
import { availableParallelism } from 'node:os';
import { isMainThread } from 'node:worker_threads';

/** Progress of `analyzeExport`, for a bar on a terminal (in-process callers only). */
export type AnalysisProgress = (step: string) => void;

/**
 * The one analysis of an export. Every command, worker task, summary, report and trace calls
 * this and picks the parts it prints; each table is read once and shared:
 *
 * 1. GPU ops and CUDA API calls (typed columns) when iterations or gaps are asked for; meanwhile a
 *    worker thread may read the NVTX columns and make the NVTX and kernel summaries and the NVTX
 *    GPU projection (`nvtxRead`, see `startNvtxReadInBackground`);
 * 2. iterations: windows from the first iteration source with ranges (or the user's
 *    `--iteration-range`), numbered, GPU work attributed by launch call, joined to the logs;
 * 3. gaps with host causes (given the iterations: `idleByCauseNs` on every row), then the
 *    columns are let go, unless the `timeline` part (what `trace` writes) keeps the GPU ops;
 * 4. GPU metrics per iteration, phases, GC/GIL, category time, the kernel and NVTX summaries, the
 *    NVTX GPU projection, and the coverage with every note.
 *
 * Opens nothing itself: `handle` is an open export (`openExport` / `withExport`); the NVTX worker
 * thread, when there is one, opens the same file read-only on a connection of its own.
 */
export function analyzeExport(handle: ExportHandle, request: AnalysisRequest, onProgress?: AnalysisProgress): ExportAnalysis {
  const parts = resolveParts(request.parts);
  const timingsMs: Record<string, number> = {};
  const timed = <T>(name: string, fn: () => T): T => {
    const t0 = performance.now();
    try {
      return fn();
    } finally {
      timingsMs[name] = Math.round(performance.now() - t0);
      onProgress?.(name);
    }
  };
  const classifier = request.categoryRules ? compileCategoryRules(request.categoryRules) : defaultCategoryClassifier();
  // NVTX_EVENTS read once, into columns every NVTX consumer below shares; let go at the end. When
  // the GPU ops and API calls are read too, the NVTX read may run on another core meanwhile.
  const readsNvtx = NVTX_PARTS.some((p) => parts.has(p));
  const bgPlan = readsNvtx && loadsLaunches(parts) ? backgroundPlan(handle, request.nvtxRead ?? 'auto', parts, request.kernels) : null;
  const slices = parts.has('timeline') ? { kernelName: request.kernelNames === 'demangled' ? ('demangledName' as const) : ('shortName' as const) } : undefined;
  const precompute = request.deviceId === undefined ? (['apiCallIndex', 'busyUnion', 'deviceTimelines'] as const) : (['apiCallIndex', 'busyUnion'] as const);
  const loaded = new LoadedExport(handle, { launchIds: parts.has('nvtxGpu'), slices, precompute }, timed);
  const background = !!bgPlan && loaded.startNvtxWorker(bgPlan);
  const out: ExportAnalysis = {
    file: handle.path,
    parts: [...parts],
    metadata: handle.metadata,
    capture: captureSettings(loaded),
    info: null,
    kernels: null,
    nvtx: null,
    projection: null,
    iterations: null,
    iterationError: null,
    phases: [],
    metrics: null,
    gaps: null,
    host: null,
    categories: null,
    coverage: null,
    health: null,
    rankFigures: null,
    servingSpan: null,
    pytorchHost: null,
    gilHolders: null,
    memory: null,
    findings: null,
    timeline: null,
    logs: (request.logs ?? []).map((l) => ({ file: l.file, records: l.records.length, skippedLines: l.skippedLines, formats: l.formats })),
    timingsMs,
  };
  const extraNotes: ReportNote[] = [];
  if (readsNvtx && !background) loaded.nvtx();
  try {
    analyzeParts(loaded, request, parts, out, extraNotes, timed, classifier, background);
  } finally {
    loaded.close();
  }
  return out;
}

/**
 * The parts that read every NVTX row (the summary, the GPU projection): with either, the whole
 * table is read once into columns that the other NVTX readers (host causes of gaps, GC/GIL, GIL
 * holders, info) share. Without them those readers' own filtered queries are cheaper than loading
 * every row (`gaps` alone reads a few thousand of dense-long's 850k NVTX rows).
 */
const NVTX_PARTS: readonly AnalysisPart[] = ['nvtx', 'nvtxGpu'];

/** NVTX rows up to which the shared columns stay for the whole analysis (see `analyzeParts`). */
export const SHARED_NVTX_ROWS = 2_000_000;

/**
 * NVTX rows from which `nvtxRead: 'auto'` reads them in a worker thread: below it the scan is
 * shorter than starting the worker (~40 ms on the bench machine; pytorch-dense's 123k rows take ~35 ms).
 */
export const BACKGROUND_NVTX_ROWS = 200_000;

/** Whether the analysis reads the GPU ops and API calls (the iterations, the gaps, the timeline). */
function loadsLaunches(parts: ReadonlySet<AnalysisPart>): boolean {
  return parts.has('iterations') || parts.has('gaps') || parts.has('timeline');
}

/**
 * The NVTX side in a worker thread (src/load/nvtxInBackground.ts), with the NVTX summary and,
 * once given the GPU ops and API calls, the NVTX GPU projection and the kernel summary, when asked
 * for, and when `mode` and the export allow it:
 * - never past SHARED_NVTX_ROWS (there the NVTX work runs before the GPU ops are read, so the two
 *   large working sets are not held at once);
 * - with 'auto', only on the main thread (the multi-export pool already runs a thread per core),
 *   with a second core, and from BACKGROUND_NVTX_ROWS rows (counted by max(rowid): no scan).
 */
function backgroundPlan(handle: ExportHandle, mode: NvtxReadMode, parts: ReadonlySet<AnalysisPart>, kernels: AnalysisRequest['kernels']) {
  if (mode === 'inline' || !handle.hasTable('NVTX_EVENTS')) return null;
  const rows = new LoadedExport(handle).rowBound('NVTX_EVENTS');
  if (rows > SHARED_NVTX_ROWS) return null;
  if (mode === 'auto' && (!isMainThread || availableParallelism() < 2 || rows < BACKGROUND_NVTX_ROWS)) return null;
  let entry: string;
  try {
    entry = builtEntry('iterscope-nvtx.mjs', 'src/pipeline/backgroundWorker.js');
  } catch {
    return null;
  }
  const bgParts = [
    ...(parts.has('nvtx') ? [{ name: 'nvtx', usesLaunches: false }] : []),
    ...(parts.has('nvtxGpu') ? [{ name: 'nvtxGpu', usesLaunches: true }] : []),
    ...(parts.has('kernels') ? [{ name: 'kernels', usesLaunches: true }] : []),
  ];
  return { entry, parts: bgParts, options: { kernels: kernels ?? {} } };
}

function analyzeParts(
  loaded: LoadedExport,
  request: AnalysisRequest,
  parts: ReadonlySet<AnalysisPart>,
  out: ExportAnalysis,
  extraNotes: ReportNote[],
  timed: <T>(name: string, fn: () => T) => T,
  classifier: CategoryClassifier,
  nvtxInBackground: boolean,
): void {
  let nvtxRangesByDomain: NvtxRangesByDomain | undefined;
  const summarizeNvtx = () => {
    if (!parts.has('nvtx')) return;
    timed('nvtx', () => {
      const r = loaded.takeBackground<NvtxSummaryWithDomains>('nvtx') ?? summarizeNvtxWithDomains(loaded);
      out.nvtx = r.summary;
      nvtxRangesByDomain = r.rangesByDomain;
    });
  };
  if (!nvtxInBackground) summarizeNvtx();
  let projectionInBackground = false;
  const largeNvtx = !nvtxInBackground && (loaded.sharedNvtx()?.count ?? 0) > SHARED_NVTX_ROWS;
  if (parts.has('nvtxGpu') && (largeNvtx || !loadsLaunches(parts))) out.projection = timed('nvtxGpu', () => projectNvtxOntoGpu(loaded));
  if (largeNvtx) loaded.release('nvtx');

  let launchFacts: LaunchPhases | null = null;
  let emptyCaptureHealth: CaptureHealth | null = null;
  if (loadsLaunches(parts)) {
    const gpuOps = loaded.gpuOps();
    loaded.apiCalls();
    const inBackground = nvtxInBackground && (loaded.inBackground('nvtxGpu') || loaded.inBackground('kernels'));
    projectionInBackground = nvtxInBackground && loaded.inBackground('nvtxGpu');
    if (parts.has('nvtxGpu') && !out.projection && !projectionInBackground) out.projection = timed('nvtxGpu', () => projectNvtxOntoGpu(loaded));
    if (nvtxInBackground) loaded.nvtx();
    if (gpuOps.count === 0) emptyCaptureHealth = describeCaptureHealth(loaded);
    const noGpuWork = emptyCaptureHealth?.noGpuWork ?? null;
    if (parts.has('iterations') && noGpuWork) {
      if (request.requireIterations) throw new EmptyCaptureError(loaded.path, noGpuWork);
      out.iterationError = 'the capture recorded no GPU work';
      extraNotes.push({ source: 'report', text: `no iterations: ${out.iterationError}; the report has no per-iteration sections` });
    } else if (parts.has('iterations')) {
      try {
        out.iterations = timed('iterations', () => analyzeIterations(loaded, { logs: request.logs, selection: request.selection, classifier }));
      } catch (err) {
        if (!(err instanceof IterationError) || request.requireIterations) throw err;
        out.iterationError = err.message.replace(`${loaded.path}: `, '');
        extraNotes.push({ source: 'report', text: `no iterations: ${out.iterationError}; the report has no per-iteration sections` });
      }
    }
    if (parts.has('gaps')) {
      const rows = out.iterations?.iterations ?? null;
      out.gaps = timed('gaps', () =>
        analyzeGaps(loaded, {
          iterations: rows,
          iterationsUnavailable: parts.has('coverage') ? undefined : (out.iterationError ?? undefined),
          minGapNs: request.minGapNs,
          deviceId: request.deviceId,
        }),
      );
      if (rows) {
        const byIter = idleByCausePerIteration(out.gaps, rows, { includeFragmented: true });
        for (const row of rows) row.idleByCauseNs = byIter.get(row.iter) ?? {};
      }
    }
    const it0 = out.iterations;
    if (parts.has('pytorchHost') && it0 && hasPytorchHostSide(loaded, request.torchTrace)) {
      out.pytorchHost = timed('pytorchHost', () => pytorchHostSide(loaded, it0, request.torchTrace));
    }
    // Graph capture against the GPU work after it, and whole-graph rows: from the columns while they are here.
    if (parts.has('health')) launchFacts = timed('healthLaunches', () => launchPhases(loaded));
    // The serving span from the steps, else from the same columns (and the graph capture above).
    if (parts.has('servingSpan') && gpuOps.count > 0) {
      const input = { iterations: out.iterations, launches: launchFacts, capture: out.capture, classifier };
      out.servingSpan = timed('servingSpan', () => servingSpan(loaded, input));
    }
    // The worker's NVTX summary, made meanwhile: `info` counts ranges per domain from it.
    if (nvtxInBackground) summarizeNvtx();
    if (parts.has('info')) out.info = timed('info', () => describeExport(loaded, { nvtxRangesByDomain }));
    loaded.release('apiCalls');
    if (parts.has('kernels')) out.kernels = timed('kernels', () => (inBackground ? loaded.takeBackground<KernelSummary>('kernels') : undefined) ?? summarizeKernels(loaded, request.kernels));
    if (parts.has('timeline')) out.timeline = timed('timeline', () => buildTimeline(loaded, request.kernelNames));
    loaded.release('gpuOps');
  }

  const it = out.iterations;
  if (it) {
    if (parts.has('metrics')) out.metrics = timed('metrics', () => addGpuMetrics(loaded, it));
    if (parts.has('phases')) {
      out.phases = summarizeByPhase(it.iterations, it.categories);
      if (out.metrics) addPhaseMetrics(it, out.phases, out.metrics);
    }
    if (parts.has('rankFigures')) out.rankFigures = timed('rankFigures', () => rankFiguresFromIterations(loaded, it, classifier, request.communicationCategory));
  }
  if (parts.has('info') && !out.info) out.info = timed('info', () => describeExport(loaded, { nvtxRangesByDomain }));
  if (parts.has('kernels') && !out.kernels) out.kernels = timed('kernels', () => summarizeKernels(loaded, request.kernels));
  if (parts.has('host') && out.gaps) {
    const gaps = out.gaps;
    out.host = timed('host', () => summarizeHost(loaded, gaps, it?.iterations, out.info?.nvtxDomains));
  }
  if (parts.has('gilHolders') && out.gaps && out.info) {
    const gaps = out.gaps;
    const domains = out.info.nvtxDomains;
    out.gilHolders = timed('gilHolders', () => findGilHolders(loaded, gaps, domains));
  }
  if (parts.has('memory') && out.gaps) {
    const d = out.gaps.devices;
    const gpuSpan = d.length ? { startNs: Math.min(...d.map((x) => x.spanStartNs)), endNs: Math.max(...d.map((x) => x.spanEndNs)) } : null;
    out.memory = timed('memory', () => analyzeMemoryTraffic(loaded, it?.iterations ?? [], gpuSpan));
  }
  if (projectionInBackground) out.projection = timed('nvtxGpu', () => loaded.takeBackground<NvtxGpuProjection>('nvtxGpu') ?? projectNvtxOntoGpu(loaded));
  if (parts.has('categories') && out.kernels) out.categories = categoryTime(it, out.kernels, classifier);
  if (parts.has('health')) out.health = timed('health', () => ({ ...(emptyCaptureHealth ?? describeCaptureHealth(loaded)), launches: launchFacts }));
  if (parts.has('coverage') && out.gaps && out.kernels && out.nvtx && out.categories) {
    out.coverage = reportCoverage({
      iterations: it,
      gaps: out.gaps,
      kernels: out.kernels,
      kernelNotes: kernelSummaryNotes(out.kernels),
      nvtxNotes: nvtxSummaryNotes(out.nvtx),
      projection: out.projection,
      projectionNotes: projectionCoverageNotes(out.projection),
      metrics: out.metrics,
      categories: out.categories,
      extraNotes,
    });
  }
  if (parts.has('findings')) {
    const input = findingsInputOf(out);
    if (input) out.findings = timed('findings', () => findFindings(input, { thresholds: request.findingThresholds }));
  }
}
