import type { ExportHandle } from '../../queries/handle.js';
import { describeExport, readCaptureSettings } from '../analysis/exportInfo.js';
import { kernelSummaryNotes, summarizeKernels } from '../analysis/kernelSummary.js';
import { projectionCoverageNotes, projectNvtxOntoGpu } from '../analysis/nvtxGpuProjection.js';
import { nvtxSummaryNotes, summarizeNvtxWithDomains, type NvtxRangesByDomain } from '../analysis/nvtxSummary.js';
import { loadGpuOpColumns, unionOfAllOps, type GpuOpColumns } from '../analysis/gpuOpColumns.js';
import { apiCallIndex } from '../analysis/apiCallIndex.js';
import { buildTimeline, type GpuOpColumnsWithSlices } from '../analysis/timeline.js';
import { loadApiCallColumns, type ApiCallColumns } from '../analysis/apiCallColumns.js';
import { compileCategoryRules, defaultCategoryClassifier, type CategoryClassifier } from '../categories/rules.js';
import { EmptyCaptureError, IterationError } from '../errors.js';
import { describeCaptureHealth, launchPhases, type CaptureHealth, type LaunchPhases } from '../analysis/captureHealth.js';
import { analyzeGaps, idleByCausePerIteration } from '../gaps/analyze.js';
import { deviceTimelines } from '../gaps/findGaps.js';
import { analyzeIterations } from '../iterations/analyze.js';
import { addGpuMetrics, addPhaseMetrics } from '../iterations/gpuMetrics.js';
import { summarizeByPhase } from '../iterations/summary.js';
import { hasPytorchHostSide, pytorchHostSide } from '../kineto/pytorchHostSide.js';
import { rankFiguresFromIterations } from '../ranks/rankFigures.js';
import { categoryTime } from './categoryTime.js';
import { reportCoverage, type ReportNote } from './coverage.js';
import { summarizeHost } from './hostSummary.js';
import { findGilHolders } from '../gaps/gilHolders.js';
import { analyzeMemoryTraffic } from '../analysis/memoryTraffic.js';
import { servingSpan } from '../iterations/servingSpan.js';
import { findFindings, findingsInputOf } from '../findings/findFindings.js';
import { resolveParts, type AnalysisPart, type AnalysisRequest, type NvtxReadMode } from './request.js';
import { cachedNvtxColumns, nvtxColumnsOf, releaseNvtxColumns } from '../analysis/nvtxColumns.js';
import type { ExportAnalysis } from './types.js';
import { giveLaunchesToBackground, readNvtxColumnsInBackground, takeBackgroundKernelSummary, takeBackgroundNvtxSummary, takeBackgroundProjection } from '../analysis/nvtxColumnsInBackground.js';
import { rowIdBound } from '../../queries/capture.js';
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
  const out: ExportAnalysis = {
    file: handle.path,
    parts: [...parts],
    metadata: handle.metadata,
    capture: readCaptureSettings(handle),
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
  // NVTX_EVENTS read once, into columns every NVTX consumer below shares; let go at the end. When
  // the GPU ops and API calls are read too, the NVTX read may run on another core meanwhile.
  const readsNvtx = NVTX_PARTS.some((p) => parts.has(p));
  const background = readsNvtx && loadsLaunches(parts) && startNvtxReadInBackground(handle, request.nvtxRead ?? 'auto', parts, request.kernels);
  if (readsNvtx && !background) timed('nvtxColumns', () => nvtxColumnsOf(handle));
  try {
    analyzeParts(handle, request, parts, out, extraNotes, timed, classifier, background);
  } finally {
    if (readsNvtx) releaseNvtxColumns(handle);
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
 * Starts the NVTX read in a worker thread (nvtxColumnsInBackground.ts), with the NVTX summary and,
 * once given the GPU ops and API calls, the NVTX GPU projection and the kernel summary, when asked
 * for, and when `mode` and the export allow it:
 * - never past SHARED_NVTX_ROWS (there the NVTX work runs before the GPU ops are read, so the two
 *   large working sets are not held at once);
 * - with 'auto', only on the main thread (the multi-export pool already runs a thread per core),
 *   with a second core, and from BACKGROUND_NVTX_ROWS rows (counted by max(rowid): no scan).
 */
function startNvtxReadInBackground(handle: ExportHandle, mode: NvtxReadMode, parts: ReadonlySet<AnalysisPart>, kernels: AnalysisRequest['kernels']): boolean {
  if (mode === 'inline' || !handle.hasTable('NVTX_EVENTS')) return false;
  const rows = rowIdBound(handle, 'NVTX_EVENTS');
  if (rows > SHARED_NVTX_ROWS) return false;
  if (mode === 'auto' && (!isMainThread || availableParallelism() < 2 || rows < BACKGROUND_NVTX_ROWS)) return false;
  return readNvtxColumnsInBackground(handle, { summarize: parts.has('nvtx'), project: parts.has('nvtxGpu'), kernels: parts.has('kernels') ? (kernels ?? {}) : undefined });
}

function analyzeParts(
  handle: ExportHandle,
  request: AnalysisRequest,
  parts: ReadonlySet<AnalysisPart>,
  out: ExportAnalysis,
  extraNotes: ReportNote[],
  timed: <T>(name: string, fn: () => T) => T,
  classifier: CategoryClassifier,
  nvtxInBackground: boolean,
): void {
  // The NVTX summary first (its scan also counts the ranges per domain that `info` lists); when
  // the NVTX columns are read in the background, once the GPU ops and API calls are read.
  let nvtxRangesByDomain: NvtxRangesByDomain | undefined;
  const summarizeNvtx = () => {
    if (!parts.has('nvtx')) return;
    timed('nvtx', () => {
      const r = takeBackgroundNvtxSummary(handle) ?? summarizeNvtxWithDomains(handle);
      out.nvtx = r.summary;
      nvtxRangesByDomain = r.rangesByDomain;
    });
  };
  if (!nvtxInBackground) summarizeNvtx();
  let projectionInBackground = false;

  // Past SHARED_NVTX_ROWS the NVTX GPU projection runs before the GPU-op columns are read (the two
  // largest transient working sets are not held at once) and the NVTX columns are let go after it
  // (10x dense-long holds 8.5M NVTX rows, ~320 MB): the later NVTX readers (host causes, GC/GIL, GIL
  // holders, info) then run their own filtered queries, as when no part reads all NVTX. Below it,
  // the projection waits for the GPU ops and API calls and reads them from there.
  // (A background read holds at most SHARED_NVTX_ROWS rows: not asked, so not waited for, here.)
  const largeNvtx = !nvtxInBackground && (cachedNvtxColumns(handle)?.count ?? 0) > SHARED_NVTX_ROWS;
  if (parts.has('nvtxGpu') && (largeNvtx || !loadsLaunches(parts))) out.projection = timed('nvtxGpu', () => projectNvtxOntoGpu(handle));
  if (largeNvtx) releaseNvtxColumns(handle);

  // 1-3: the GPU ops and API calls, read once for the iterations and the gaps, let go after.
  let launchFacts: LaunchPhases | null = null;
  // Read early only when there is no GPU op (why: the iterations say so instead of failing), then reused.
  let emptyCaptureHealth: CaptureHealth | null = null;
  if (loadsLaunches(parts)) {
    // The timeline keeps these columns (with its slice columns) where the others let them go.
    const slices = parts.has('timeline') ? { kernelName: request.kernelNames === 'demangled' ? ('demangledName' as const) : ('shortName' as const) } : undefined;
    // Over shared memory when the NVTX worker reads them too (`giveLaunchesToBackground`).
    const shared = nvtxInBackground;
    let gpuOps: GpuOpColumns | undefined = timed('gpuOps', () => loadGpuOpColumns(handle, { launchIds: parts.has('nvtxGpu'), slices, shared }));
    let apiCalls: ApiCallColumns | undefined = timed('apiCalls', () => loadApiCallColumns(handle, { shared }));
    const launches = { gpuOps, apiCalls };
    // The NVTX worker's projection and kernel summary are taken where they are needed.
    const inBackground = nvtxInBackground && giveLaunchesToBackground(handle, launches);
    projectionInBackground = inBackground && parts.has('nvtxGpu');
    if (parts.has('nvtxGpu') && !out.projection && !projectionInBackground) out.projection = timed('nvtxGpu', () => projectNvtxOntoGpu(handle, { launches }));
    if (nvtxInBackground) {
      // While the worker finishes the NVTX columns: what the iterations and the gaps build from
      // the GPU ops and API calls alone (each cached on its columns object), then the wait.
      timed('launchIndexes', () => {
        apiCallIndex(apiCalls!);
        unionOfAllOps(gpuOps!);
        if (request.deviceId === undefined) deviceTimelines(gpuOps!);
      });
      timed('nvtxColumns', () => nvtxColumnsOf(handle));
    }
    // A capture without GPU work (a client profiled instead of the server, a program that died
    // first) has no iteration to find: say why instead of what marker is missing.
    if (gpuOps.count === 0) emptyCaptureHealth = describeCaptureHealth(handle, out.capture);
    const noGpuWork = emptyCaptureHealth?.noGpuWork ?? null;
    if (parts.has('iterations') && noGpuWork) {
      if (request.requireIterations) throw new EmptyCaptureError(handle.path, noGpuWork);
      out.iterationError = 'the capture recorded no GPU work';
      extraNotes.push({ source: 'report', text: `no iterations: ${out.iterationError}; the report has no per-iteration sections` });
    } else if (parts.has('iterations')) {
      try {
        out.iterations = timed('iterations', () =>
          analyzeIterations(handle, { logs: request.logs, selection: request.selection, classifier, gpuOps, apiCalls }),
        );
      } catch (err) {
        if (!(err instanceof IterationError) || request.requireIterations) throw err;
        out.iterationError = err.message.replace(`${handle.path}: `, '');
        extraNotes.push({ source: 'report', text: `no iterations: ${out.iterationError}; the report has no per-iteration sections` });
      }
    }
    if (parts.has('gaps')) {
      const rows = out.iterations?.iterations ?? null;
      out.gaps = timed('gaps', () =>
        analyzeGaps(handle, {
          iterations: rows,
          // The report says it once among its own notes; `gaps` says it among the gaps' notes.
          iterationsUnavailable: parts.has('coverage') ? undefined : (out.iterationError ?? undefined), minGapNs: request.minGapNs, deviceId: request.deviceId, gpuOps, apiCalls }),
      );
      if (rows) {
        const byIter = idleByCausePerIteration(out.gaps, rows, { includeFragmented: true });
        for (const row of rows) row.idleByCauseNs = byIter.get(row.iter) ?? {};
      }
    }
    // Aten ops per iteration when there is a PyTorch profiler trace (timed only then).
    const it0 = out.iterations;
    if (parts.has('pytorchHost') && it0 && hasPytorchHostSide(handle, request.torchTrace)) {
      out.pytorchHost = timed('pytorchHost', () => pytorchHostSide(handle, it0, request.torchTrace, gpuOps!));
    }
    // Graph capture against the GPU work after it, and whole-graph rows: from the columns while they are here.
    if (parts.has('health')) launchFacts = timed('healthLaunches', () => launchPhases(handle, gpuOps!, apiCalls!));
    // The serving span from the steps, else from the same columns (and the graph capture above).
    if (parts.has('servingSpan') && gpuOps.count > 0) {
      const input = { iterations: out.iterations, gpuOps, apiCalls, launches: launchFacts, capture: out.capture, classifier };
      out.servingSpan = timed('servingSpan', () => servingSpan(handle, input));
    }
    // The worker's NVTX summary, made meanwhile: `info` counts ranges per domain from it.
    if (nvtxInBackground) summarizeNvtx();
    // `info` and the kernel summary from the columns while they are here.
    if (parts.has('info')) out.info = timed('info', () => describeExport(handle, { gpuOps, apiCalls, nvtxRangesByDomain }));
    // Nothing below reads the API calls: let them go before the kernel summary allocates its
    // duration buffers (a GC it triggers can then take them: 123 MB on the 10x bench export).
    apiCalls = undefined;
    if (parts.has('kernels')) out.kernels = timed('kernels', () => (inBackground ? takeBackgroundKernelSummary(handle) : undefined) ?? summarizeKernels(handle, request.kernels, { gpuOps }));
    if (slices) {
      const ops = gpuOps as GpuOpColumnsWithSlices;
      out.timeline = timed('timeline', () => buildTimeline(handle, ops, request.kernelNames));
    }
    gpuOps = undefined;
  }

  // 4: what is computed from the iterations, then the summaries of the whole capture.
  const it = out.iterations;
  if (it) {
    if (parts.has('metrics')) out.metrics = timed('metrics', () => addGpuMetrics(handle, it));
    if (parts.has('phases')) {
      out.phases = summarizeByPhase(it.iterations, it.categories);
      if (out.metrics) addPhaseMetrics(it, out.phases, out.metrics);
    }
    if (parts.has('rankFigures')) out.rankFigures = timed('rankFigures', () => rankFiguresFromIterations(handle, it, classifier, request.communicationCategory));
  }
  if (parts.has('info') && !out.info) out.info = timed('info', () => describeExport(handle, { nvtxRangesByDomain }));
  if (parts.has('kernels') && !out.kernels) out.kernels = timed('kernels', () => summarizeKernels(handle, request.kernels));
  if (parts.has('host') && out.gaps) {
    const gaps = out.gaps;
    out.host = timed('host', () => summarizeHost(handle, gaps, it?.iterations, out.info?.nvtxDomains));
  }
  if (parts.has('gilHolders') && out.gaps && out.info) {
    const gaps = out.gaps;
    const domains = out.info.nvtxDomains;
    out.gilHolders = timed('gilHolders', () => findGilHolders(handle, gaps, domains));
  }
  if (parts.has('memory') && out.gaps) {
    const d = out.gaps.devices;
    const gpuSpan = d.length ? { startNs: Math.min(...d.map((x) => x.spanStartNs)), endNs: Math.max(...d.map((x) => x.spanEndNs)) } : null;
    out.memory = timed('memory', () => analyzeMemoryTraffic(handle, it?.iterations ?? [], gpuSpan));
  }
  if (projectionInBackground) out.projection = timed('nvtxGpu', () => takeBackgroundProjection(handle) ?? projectNvtxOntoGpu(handle));
  if (parts.has('categories') && out.kernels) out.categories = categoryTime(it, out.kernels, classifier);
  // What the capture can answer: a few small tables, after the analyses (their contract errors
  // come first on a damaged export), before the findings that read it.
  if (parts.has('health')) out.health = timed('health', () => ({ ...(emptyCaptureHealth ?? describeCaptureHealth(handle, out.capture)), launches: launchFacts }));
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
