import type { ExportHandle } from '../export/openExport.js';
import { compileCategoryRules, defaultCategoryClassifier } from '../categories/rules.js';
import { captureSettings } from '../load/captureSettings.js';
import { LoadedExport } from '../load/loadedExport.js';
import { COLLECT_FROM_ROWS, GarbagePolicy } from '../v8/collectGarbage.js';
import { fitToMemory } from './memoryPlan.js';
import type { PartContext, PartName, PartValues } from './parts.js';
import { partsFor, planRun, type PlannedPart } from './plan.js';
import { partStep, StepProgress, type StepCount } from './stepProgress.js';
import { resolveParts, type AnalysisRequest } from './request.js';
import type { ExportAnalysis } from './exportAnalysis.js';
import { SHARED_NVTX_ROWS, backgroundPlan, readWorkersFor, projectionQueriesLaunches } from '../worker/policy.js';

/**
 * Progress of `analyzeExport`, for a bar on a terminal (in-process callers only): each timed step
 * as it ends, with how many steps are done of those known so far (`StepProgress`).
 */
export type AnalysisProgress = (step: string, count: StepCount) => void;

/**
 * The one analysis of an export. Every command, worker task, summary, report and trace calls
 * this and picks the parts it prints; each table is read once and shared. The parts (src/pipeline/
 * parts.ts) run in one loop, each from its dependencies' values, in the order `planRun` gives:
 *
 * 1. the NVTX columns and summary (or, meanwhile, in a worker thread: the NVTX columns, the NVTX
 *    and kernel summaries, the host ranges and the NVTX GPU projection; `nvtxRead`, see
 *    src/worker/policy.ts and backgroundParts.ts);
 * 2. GPU ops and CUDA API calls (typed columns) when iterations, gaps or the timeline are asked for;
 *    with gaps, each device's gaps are scanned next (`gapScan`: from these alone, while the worker
 *    still reads);
 * 3. iterations: windows from the first iteration source with ranges (or the user's
 *    `--iteration-range`), numbered, GPU work attributed by launch call, joined to the logs;
 * 4. the gaps explained by their host causes (given the iterations: idle time by cause per
 *    iteration), then the columns are let go, unless the `timeline` part (what `trace` writes)
 *    keeps the GPU ops;
 * 5. GPU metrics per iteration, phases, GC/GIL, category time, the kernel and NVTX summaries, the
 *    NVTX GPU projection, and the coverage with every note.
 *
 * `ExportAnalysis` is assembled once from the parts' values (`assembleAnalysis`).
 *
 * Opens nothing itself: `handle` is an open export (`openExport` / `withExport`); the NVTX worker
 * thread, when there is one, opens the same file read-only on a connection of its own.
 */
export function analyzeExport(handle: ExportHandle, asRequested: AnalysisRequest, onProgress?: AnalysisProgress): ExportAnalysis {
  const asked = resolveParts(asRequested.parts);
  const parts = partsFor(asked);
  // Above the memory budget, the slower order that holds less (memoryPlan.ts).
  const request = fitToMemory(handle, asRequested, parts, SHARED_NVTX_ROWS);
  const has = (name: PartName) => parts.some((p) => p.name === name);
  const timingsMs: Record<string, number> = {};
  const steps = new StepProgress(parts, onProgress);
  const timed = <T>(name: string, fn: () => T): T => {
    const t0 = performance.now();
    try {
      return fn();
    } finally {
      timingsMs[name] = Math.round(performance.now() - t0);
      steps.finished(name);
    }
  };
  // NVTX_EVENTS read once, into columns every NVTX consumer shares. When the GPU ops and API calls
  // are read too, the NVTX read may run on another core meanwhile.
  const readsNvtx = parts.some((p) => p.loads?.includes('nvtx'));
  const slices = has('timeline') ? { kernelName: request.kernelNames === 'demangled' ? ('demangledName' as const) : ('shortName' as const) } : undefined;
  // The device timelines are the gaps' (over every device; `--device` filters the ops first).
  const precompute = has('gaps') && request.deviceId === undefined ? (['apiCallIndex', 'busyUnion', 'deviceTimelines'] as const) : (['apiCallIndex', 'busyUnion'] as const);
  const readWorkers = readWorkersFor(request.nvtxRead ?? 'auto', parts.some((p) => p.loads?.includes('apiCalls')));
  // The young generation kept small where measured faster: the analyses reading the GPU ops here, but the trace's (see src/v8/youngGeneration.ts).
  const smallYoungGeneration = has('launches') && !has('timeline');
  const loaded = new LoadedExport(handle, { launchIds: has('nvtxGpu'), slices, precompute, readWorkers, memcpyTraffic: has('memory'), smallYoungGeneration }, timed);
  // Closed whatever throws from here on: its worker threads end, and V8's flags are set back.
  try {
    const bgPlan = has('launches') && (readsNvtx || has('iterationWindows')) ? backgroundPlan(loaded, request, parts, readsNvtx) : null;
    const background = !!bgPlan && loaded.startNvtxWorker(bgPlan);
    if (readsNvtx && !background && has('nvtxGpu') && projectionQueriesLaunches(loaded, request.nvtxRead ?? 'auto', has('launches'))) loaded.startLaunchesRead();
    const ctx: PartContext = {
      loaded,
      request,
      asked,
      classifier: request.categoryRules ? compileCategoryRules(request.categoryRules) : defaultCategoryClassifier(),
      capture: captureSettings(loaded),
      logs: (request.logs ?? []).map((l) => ({ file: l.file, records: l.records.length, skippedLines: l.skippedLines, formats: l.formats })),
    };
    if (readsNvtx && !background) loaded.nvtx();
    const largeNvtx = readsNvtx && !background && (request.nvtxRead === 'release' || (loaded.sharedNvtx()?.count ?? 0) > SHARED_NVTX_ROWS);
    // The NVTX parts run first and alone: the launches the read worker folds meanwhile are waited for here, not beside them.
    if (largeNvtx) loaded.settleLaunchesRead();
    const values = runParts(planRun(parts, { largeNvtx, inBackground: (name) => background && loaded.inBackground(name) }), ctx, timed, steps);
    return assembleAnalysis(handle, ctx, values, timingsMs);
  } finally {
    loaded.close();
  }
}

/** Every part's value, computed in `plan` order; each loader column let go after its last reader. */
function runParts(plan: readonly PlannedPart[], ctx: PartContext, timed: <T>(name: string, fn: () => T) => T, steps: StepProgress): Partial<PartValues> {
  const values: Partial<Record<PartName, unknown>> = {};
  const garbage = new GarbagePolicy(() => ctx.loaded.largestRowsHeld() >= COLLECT_FROM_ROWS);
  for (const { part, release, dropValues } of plan) {
    const deps = Object.fromEntries([...part.needs, ...(part.uses ?? [])].map((d) => [d, values[d]]));
    const step = partStep(part);
    if (part.when?.(ctx, deps as never) === false) {
      values[part.name] = null;
      if (step) steps.skipped(step);
    } else values[part.name] = step ? timed(step, () => part.compute(ctx, deps as never)) : part.compute(ctx, deps as never);
    for (const data of release) ctx.loaded.release(data);
    for (const name of dropValues) delete values[name];
    // Columns outside V8's heap are freed only by a full collection, which V8 does not run for them in time (src/v8/collectGarbage.ts).
    garbage.afterPart(ctx.loaded.takeReleasedRows());
  }
  return values as Partial<PartValues>;
}

/** The analysis from the parts' values: every part asked for, null (or empty) for the others. */
function assembleAnalysis(handle: ExportHandle, ctx: PartContext, v: Partial<PartValues>, timingsMs: Record<string, number>): ExportAnalysis {
  return {
    file: handle.path,
    parts: [...ctx.asked],
    metadata: handle.metadata,
    capture: ctx.capture,
    info: v.info ?? null,
    kernels: v.kernels ?? null,
    nvtx: v.nvtx?.summary ?? null,
    projection: v.nvtxGpu ?? null,
    iterations: v.iterations ?? null,
    iterationError: v.iterationRun?.error ?? null,
    phases: v.phases ?? [],
    metrics: v.metrics ?? null,
    gaps: v.gaps?.analysis ?? null,
    host: v.host ?? null,
    categories: v.categories ?? null,
    coverage: v.coverage ?? null,
    health: v.health ?? null,
    rankFigures: v.rankFigures ?? null,
    servingSpan: v.servingSpan ?? null,
    pytorchHost: v.pytorchHost ?? null,
    gilHolders: v.gilHolders ?? null,
    memory: v.memory ?? null,
    findings: v.findings ?? null,
    timeline: v.timeline ?? null,
    ...(ctx.asked.has('stepTimeline') ? { stepTimeline: v.stepTimeline ?? null } : {}),
    logs: ctx.logs,
    timingsMs,
    // Only when asked for: no existing output gains a key.
    ...(v.layers ? { layers: v.layers } : {}),
  };
}
