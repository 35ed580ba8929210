import { GpuOpKind } from '../load/gpuOpColumns.js';
import { forEachGraphLaunch, forEachKernelDuration, type KernelQueryOptions } from '../load/kernelReads.js';
import type { LoadedExport } from '../load/loadedExport.js';
import { durationStats, Float64Buffer, percentOf, type DurationStats } from '../math/durationStats.js';
import { NO_STRING_ID } from '../load/typedColumn.js';

/** One row of the `cuda_gpu_kern_sum` report. */
export interface KernelSummaryRow extends DurationStats {
  /** Time (%): share of the summed durations of all rows. */
  timePercent: number;
  name: string;
}

export interface KernelSummary {
  rows: KernelSummaryRow[];
  /** Whether the export has whole-graph rows (`CUPTI_ACTIVITY_KIND_GRAPH_TRACE`) nsys leaves out. */
  graphTraceRows: number;
  /** Whether graph rows were added as `[CUDA graph <graphId>]`. */
  graphsIncluded: boolean;
  kernelTablePresent: boolean;
  /** Kernels whose name id (demangled or short, as grouped) is NULL: summed in one `<no name>` row. */
  nullNameKernels: number;
  /** Kernels whose name id has no StringIds row: summed per id in `<unknown name ID>` rows. */
  unknownNameKernels: number;
}

export interface KernelSummaryOptions extends KernelQueryOptions {
  /** Add graph-level traces as `[CUDA graph <graphId>]` rows (nsys's report leaves them out). */
  includeGraphs?: boolean;
}

/**
 * Reproduces `nsys stats -r cuda_gpu_kern_sum`: kernels grouped by (demangled or short) name,
 * sorted by total time desc, then instances, then name. Durations are streamed into per-name
 * Float64 buffers, so no row objects are kept.
 */
export function summarizeKernels(loaded: LoadedExport, opts: KernelSummaryOptions = {}): KernelSummary {
  loaded.requireContract('kernelSummary');
  const groups = new Map<string, Float64Buffer>();
  const kernelTablePresent = loaded.hasTable('CUPTI_ACTIVITY_KIND_KERNEL');
  let nullNameKernels = 0;
  let unknownNameKernels = 0;
  // The GPU-op columns, when read, hold every kernel's demangled-name id, start and end (in the
  // table's scan order): the summary needs no second scan unless it groups by short name or filters.
  const loadedOps = loaded.loadedGpuOps();
  const ops = loadedOps && opts.nameBy !== 'short' && !hasActivityFilter(opts) ? loadedOps : undefined;
  if (kernelTablePresent) {
    const byId = new Map<number | null, Float64Buffer>();
    const add = (nameId: number | null, duration: number) => {
      let buf = byId.get(nameId);
      if (!buf) byId.set(nameId, (buf = new Float64Buffer()));
      buf.push(duration);
    };
    if (ops) {
      // The columns hold only rows with usable times; their loader counted the others.
      for (let i = 0; i < ops.count; i++) if (ops.kind[i] === GpuOpKind.Kernel) add(ops.nameId[i] === NO_STRING_ID ? null : ops.nameId[i], ops.end[i] - ops.start[i]);
    } else {
      // Rows left out for unusable times (excludedRows.ts) are noted there, when unfiltered.
      forEachKernelDuration(loaded, opts, hasActivityFilter(opts), add);
    }
    const names = loaded.strings([...byId.keys()].filter((id): id is number => id != null));
    for (const [id, buf] of byId) {
      const known = id == null ? undefined : names.get(id);
      if (id == null) nullNameKernels += buf.length;
      else if (known === undefined) unknownNameKernels += buf.length;
      const name = known ?? (id == null ? NO_NAME : `<unknown name ${id}>`);
      // Distinct ids can carry the same text; nsys groups by the text.
      const prev = groups.get(name);
      if (prev) for (const v of buf.view()) prev.push(v);
      else groups.set(name, buf);
    }
  }
  let graphTraceRows = 0;
  if (ops && !opts.includeGraphs) {
    for (let i = 0; i < ops.count; i++) if (ops.kind[i] === GpuOpKind.Graph) graphTraceRows++;
  } else if (loaded.hasTable('CUPTI_ACTIVITY_KIND_GRAPH_TRACE')) {
    forEachGraphLaunch(loaded, opts, (graphId, durationNs) => {
      graphTraceRows++;
      if (!opts.includeGraphs) return;
      const name = `[CUDA graph ${graphId}]`;
      let buf = groups.get(name);
      if (!buf) groups.set(name, (buf = new Float64Buffer()));
      buf.push(durationNs);
    });
  }
  const stats = [...groups].map(([name, buf]) => ({ name, ...durationStats(buf.view()) }));
  const grand = stats.reduce((a, s) => a + s.total, 0);
  const rows = stats
    .map((s) => ({ timePercent: percentOf(s.total, grand), ...s }))
    .sort((a, b) => b.total - a.total || a.count - b.count || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { rows, graphTraceRows, graphsIncluded: !!opts.includeGraphs && graphTraceRows > 0, kernelTablePresent, nullNameKernels, unknownNameKernels };
}

/** The row of the kernels whose name id is NULL. */
const NO_NAME = '<no name>';

/** Whether the options narrow the kernels (then the summary reads them with those filters). */
function hasActivityFilter(opts: KernelSummaryOptions): boolean {
  return opts.pid !== undefined || opts.deviceId !== undefined || opts.startNs !== undefined || opts.endNs !== undefined;
}

/** What the kernel summary leaves out, as one-line notes. */
export function kernelSummaryNotes(summary: KernelSummary): string[] {
  const notes: string[] = [];
  if (!summary.kernelTablePresent) notes.push('the export has no CUPTI_ACTIVITY_KIND_KERNEL table: no kernels were recorded');
  // An edited export's names (nsys names every kernel): what the rows without one stand for.
  const n = (k: number) => `${k} kernel${k > 1 ? 's' : ''}`;
  if (summary.nullNameKernels) notes.push(`${n(summary.nullNameKernels)} have a NULL name id: summed in the row ${NO_NAME}`);
  if (summary.unknownNameKernels) notes.push(`${n(summary.unknownNameKernels)} have a name id with no StringIds row: summed per id in rows <unknown name ID>`);
  if (summary.graphTraceRows > 0 && !summary.graphsIncluded) {
    notes.push(`${summary.graphTraceRows} whole-graph launches (CUPTI_ACTIVITY_KIND_GRAPH_TRACE, --cuda-graph-trace graph) are not in this table, as in nsys; --graphs adds them`);
  }
  return notes;
}
