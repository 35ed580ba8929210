import { basename } from 'node:path';
import { defaultCategoryClassifier, type CategoryClassifier } from '../categories/rules.js';
import { idleByCausePerIteration, type GapRow } from '../gaps/analyzeGaps.js';
import type { IterationRow } from '../iterations/types.js';
import type { ExportAnalysis } from '../pipeline/exportAnalysis.js';
import { formatBytes } from './format.js';
import { writeGaps } from './gapSlices.js';
import { writeGpuOps, type GpuOpSliceStats } from './gpuOpSlices.js';
import { writeIterations } from './iterationSlices.js';
import { writeLayers, type LayerTrackStats } from './layerSlices.js';
import { writeHostOps } from './hostOpSlices.js';
import { selectIterations, type IterRange } from './itersOption.js';
import { TrackRegistry } from './tracks.js';
import { TraceFileWriter } from './writer.js';

/** Above this size a note suggests `--iters` (Perfetto issue #99: a ~900 MB JSON crashes the UI). */
export const LARGE_TRACE_BYTES = 512 * 1024 * 1024;

export interface TraceOptions {
  /** Only iterations A..B, and the GPU ops and gaps overlapping [start of A, end of B). */
  iters?: IterRange;
  classifier?: CategoryClassifier;
  /** `--layers`: a track per device with each step's layers (needs the pipeline's `layers` part, with spans). */
  layers?: boolean;
}

export interface TraceSummary {
  file: string;
  output: string;
  /** File size in bytes and number of trace events (metadata included). */
  bytes: number;
  events: number;
  /** The `--iters` time window, null for the whole export. */
  window: { first: number; last: number; startNs: number; endNs: number } | null;
  iterations: number;
  counterSamples: number;
  gaps: number;
  gpuOps: GpuOpSliceStats;
  /** `--layers` only. */
  layers?: LayerTrackStats;
  processes: number;
  tracks: number;
  notes: string[];
}

/**
 * Writes a Chrome trace-event JSON file (object form, opens in ui.perfetto.dev and
 * chrome://tracing) of an export:
 *
 * - `Iterations (pid N)`: one slice per iteration window named by its batch composition
 *   (`iter 103: 1 ctx (768 tok), 15 gen`; args: wall, GPU busy/idle, ns by kernel category, idle by
 *   cause, the log record) and counters `context tokens` and `active requests`;
 * - `GPU d`: `GPU d idle gaps` (gaps >= minGap named and coloured by primary cause), then
 *   `GPU d stream s` per stream with every kernel, memcpy, memset and whole-graph launch.
 *
 * `ts`/`dur` are microseconds from session start with ns precision. Everything comes from the
 * analysis (`analyzeExport` with the `iterations`, `gaps` and `timeline` parts), nothing from the
 * export; the file is written incrementally in ~1 MB chunks, never held as a whole.
 */
export function writeTrace(output: string, analysis: ExportAnalysis, opts: TraceOptions = {}): TraceSummary {
  const notes: string[] = [];
  const classifier = opts.classifier ?? defaultCategoryClassifier();
  if (!analysis.gaps) throw new Error(`writeTrace needs the pipeline's gaps (got ${analysis.parts.join(', ')})`);
  if (!analysis.timeline) throw new Error(`writeTrace needs the pipeline's timeline (got ${analysis.parts.join(', ')})`);
  const timeline = analysis.timeline;
  const gapAnalysis = analysis.gaps;
  const minGapNs = gapAnalysis.minGapNs;
  // Iterations (optional unless --iters asks for them).
  const rows: IterationRow[] = analysis.iterations?.iterations ?? [];
  if (analysis.iterations) notes.push(...analysis.iterations.coverage.notes.filter((n) => /^pid \d+:|iterations found|joined to a log record/.test(n)));
  else if (analysis.iterationError) notes.push(`no iteration track: ${analysis.iterationError}`);
  let window: TraceSummary['window'] = null;
  let shown = rows;
  if (opts.iters) {
    const sel = selectIterations(rows, opts.iters);
    shown = sel.rows;
    window = { ...opts.iters, startNs: sel.startNs, endNs: sel.endNs };
  }

  // Gaps (all of them; the window picks those overlapping it).
  const idleByIter = idleByCausePerIteration(gapAnalysis, shown);
  const gaps: GapRow[] = window ? gapAnalysis.gaps.filter((g) => g.startNs < window!.endNs && g.endNs > window!.startNs) : gapAnalysis.gaps;

  const otherData: Record<string, unknown> = {
    generator: 'iterscope trace',
    source: basename(analysis.file),
    nsysVersion: analysis.metadata.productVersion,
    timeBase: 'ts/dur in microseconds from the nsys session start',
    sessionStartUtcEpochNs: timeline.sessionStartUtcEpochNs,
    iterations: opts.iters ? `${opts.iters.first}-${opts.iters.last}` : 'all',
    minGapNs,
    kernelNames: timeline.kernelNames,
  };
  const writer = new TraceFileWriter(output);
  const emit = (json: string) => writer.event(json);
  const tracks = new TrackRegistry(emit);
  try {
    const it = writeIterations(shown, tracks, emit, idleByIter);
    const gapCount = writeGaps(gaps, tracks, emit);
    const ops = writeGpuOps(timeline, tracks, emit, { classifier, window: window ?? undefined });
    // A PyTorch profiler trace's aten ops, as host tracks.
    const hostOps = writeHostOps(timeline.atenOps, tracks, emit, window ?? undefined);
    if (hostOps) notes.push(`${hostOps} aten ops (PyTorch profiler) on host tracks`);
    // Last, so every other track keeps the tid it has without --layers.
    const layers = opts.layers ? writeLayerTracks(analysis, shown, tracks, emit, notes) : undefined;
    writer.close({ ...otherData, iterationSlices: it.slices, ...(layers ? { layerSlices: layers.layerSlices, outsideLayerSlices: layers.outsideSlices } : {}), gapSlices: gapCount, gpuOpSlices: ops.ops, overflowOps: ops.overflowOps });

    if (window) notes.push(`iterations ${window.first}..${window.last}: ${shown.length} iteration slices, GPU ops and gaps overlapping ${(window.startNs / 1e6).toFixed(3)}..${(window.endNs / 1e6).toFixed(3)} ms`);
    if (ops.overflowOps) {
      notes.push(`${ops.overflowOps} GPU ops start before the previous op on their stream ends (timestamp jitter); they are on '(overlap k)' tracks next to their stream, times unchanged`);
    }
    if (it.overflowSlices) notes.push(`${it.overflowSlices} iteration windows overlap the previous one; they are on '(overlap k)' tracks`);
    if (writer.bytes > LARGE_TRACE_BYTES) {
      notes.push(`the trace is ${formatBytes(writer.bytes)}: Perfetto's UI handles JSON traces up to a few hundred MB (about 1 GB crashes it); use --iters A-B for a window`);
    }
    notes.push(`${gapCount} idle gaps >= ${minGapNs / 1000} us as slices; ${ops.ops} GPU ops on ${ops.streams} stream track(s) of ${ops.devices.length} device(s)`);
    return {
      file: analysis.file,
      output,
      bytes: writer.bytes,
      events: writer.events,
      window,
      iterations: it.slices,
      counterSamples: it.counterSamples,
      gaps: gapCount,
      gpuOps: ops,
      ...(layers ? { layers } : {}),
      processes: tracks.processCount,
      tracks: tracks.trackCount,
      notes,
    };
  } catch (err) {
    writer.abort();
    throw err;
  }
}

/** `--layers`: the shown steps' layer spans, one track per device; what the split says in notes. */
function writeLayerTracks(analysis: ExportAnalysis, shown: readonly IterationRow[], tracks: TrackRegistry, emit: (json: string) => void, notes: string[]): LayerTrackStats | undefined {
  const split = analysis.layers;
  if (!split) {
    notes.push('no layer tracks: no steps with GPU work to split by layer');
    return undefined;
  }
  const keys = new Set(shown.map((r) => `${r.pid}:${r.iter}`));
  const steps = split.steps.filter((s) => keys.has(`${s.pid}:${s.iter}`));
  const stats = writeLayers(steps, tracks, emit);
  notes.push(...split.notes);
  notes.push(`${stats.layerSlices} layer slices and ${stats.outsideSlices} outside-layer slices of ${steps.length} steps on ${stats.devices} 'GPU d layers' track(s)`);
  if (stats.overflowSlices) notes.push(`${stats.overflowSlices} layer slices overlap another (a layer's kernels on several streams); they are on '(overlap k)' tracks`);
  return stats;
}
