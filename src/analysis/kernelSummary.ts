import { GpuOpKind, type GpuOpColumns } from '../load/gpuOpColumns.js';
import { forEachGraphLaunch, forEachKernelDuration, type KernelQueryOptions } from '../load/kernelReads.js';
import type { LoadedExport } from '../load/loadedExport.js';
import { durationStats, Float64Buffer, percentOf, type DurationStats } from '../math/durationStats.js';
import { NO_STRING_ID, StringIdTable } from '../columns/typedColumn.js';

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
  const kernelTablePresent = loaded.hasTable('CUPTI_ACTIVITY_KIND_KERNEL');
  // The GPU-op columns, when read, hold every kernel's demangled-name id, start and end (in the
  // table's scan order): the summary needs no second scan unless it groups by short name or filters.
  const loadedOps = loaded.loadedGpuOps();
  const ops = loadedOps && opts.nameBy !== 'short' && !hasActivityFilter(opts) ? loadedOps : undefined;
  const byName = !kernelTablePresent ? { groups: new Map<string, Float64Array>(), nullNameKernels: 0, unknownNameKernels: 0 } : ops ? kernelDurationsOfOps(loaded, ops) : queriedKernelDurations(loaded, opts);
  const groups = new Map(byName.groups);
  let graphTraceRows = 0;
  const graphs = new Map<string, Float64Buffer>();
  if (ops && !opts.includeGraphs) {
    for (let i = 0; i < ops.count; i++) if (ops.kind[i] === GpuOpKind.Graph) graphTraceRows++;
  } else if (loaded.hasTable('CUPTI_ACTIVITY_KIND_GRAPH_TRACE')) {
    forEachGraphLaunch(loaded, opts, (graphId, durationNs) => {
      graphTraceRows++;
      if (!opts.includeGraphs) return;
      const name = `[CUDA graph ${graphId}]`;
      let buf = graphs.get(name);
      if (!buf) graphs.set(name, (buf = new Float64Buffer()));
      buf.push(durationNs);
    });
  }
  // A graph row named as a kernel group joins it, after its kernels.
  for (const [name, buf] of graphs) groups.set(name, concatDurations(groups.get(name), buf.view()));
  const stats = [...groups].map(([name, values]) => ({ name, ...durationStats(values) }));
  const grand = stats.reduce((a, s) => a + s.total, 0);
  const rows = stats
    .map((s) => ({ timePercent: percentOf(s.total, grand), ...s }))
    .sort((a, b) => b.total - a.total || a.count - b.count || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const { nullNameKernels, unknownNameKernels } = byName;
  return { rows, graphTraceRows, graphsIncluded: !!opts.includeGraphs && graphTraceRows > 0, kernelTablePresent, nullNameKernels, unknownNameKernels };
}

/** `a` then `b` (`a` absent: `b` itself). */
function concatDurations(a: Float64Array | undefined, b: Float64Array): Float64Array {
  if (!a) return b;
  const out = new Float64Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** Kernel durations per name: each name's values in scan order (ids sharing a text, one after the other in first-seen order). */
interface KernelDurations {
  groups: Map<string, Float64Array>;
  nullNameKernels: number;
  unknownNameKernels: number;
}

/** A name id's text: nsys's for a known id, else the row the summary gives it. */
function kernelNameOf(id: number | null, names: ReadonlyMap<number, string>): string {
  return (id == null ? undefined : names.get(id)) ?? (id == null ? NO_NAME : `<unknown name ${id}>`);
}

/** Kernel durations per name from a scan of the kernel table (filtered, or by short name). */
function queriedKernelDurations(loaded: LoadedExport, opts: KernelSummaryOptions): KernelDurations {
  const byId = new Map<number | null, Float64Buffer>();
  // Rows left out for unusable times (src/export/excludedRows.ts) are noted there, when unfiltered.
  forEachKernelDuration(loaded, opts, hasActivityFilter(opts), (nameId, duration) => {
    let buf = byId.get(nameId);
    if (!buf) byId.set(nameId, (buf = new Float64Buffer()));
    buf.push(duration);
  });
  const names = loaded.strings([...byId.keys()].filter((id): id is number => id != null));
  const merged = new Map<string, Float64Buffer>();
  let nullNameKernels = 0;
  let unknownNameKernels = 0;
  for (const [id, buf] of byId) {
    if (id == null) nullNameKernels += buf.length;
    else if (!names.has(id)) unknownNameKernels += buf.length;
    // Distinct ids can carry the same text; nsys groups by the text.
    const name = kernelNameOf(id, names);
    const prev = merged.get(name);
    if (prev) for (const v of buf.view()) prev.push(v);
    else merged.set(name, buf);
  }
  return { groups: new Map([...merged].map(([name, buf]) => [name, buf.view()])), nullNameKernels, unknownNameKernels };
}

/**
 * Kernel durations per name from the loaded GPU ops, in one array sized exactly (a count per name
 * id, then a fill): on the 10x bench export 52 MB, where buffers grown by doubling held up to twice
 * that, with their copies, while the GPU ops were still in memory.
 */
function kernelDurationsOfOps(loaded: LoadedExport, ops: GpuOpColumns): KernelDurations {
  // Slot per name id, in first-seen order.
  const slots = new StringIdTable(loaded.rowBound('StringIds'));
  const ids: number[] = [];
  const counts: number[] = [];
  const slotOf = (id: number): number => {
    const k = slots.get(id);
    if (k >= 0) return k;
    slots.set(id, ids.length);
    ids.push(id);
    counts.push(0);
    return ids.length - 1;
  };
  for (let i = 0; i < ops.count; i++) if (ops.kind[i] === GpuOpKind.Kernel) counts[slotOf(ops.nameId[i])]++;
  const names = loaded.strings(ids.filter((id) => id !== NO_STRING_ID));
  // Distinct ids can carry the same text; nsys groups by the text.
  const textOf = ids.map((id) => kernelNameOf(id === NO_STRING_ID ? null : id, names));
  // Each text's range, its ids' sub-ranges one after the other in first-seen order.
  const textStart = new Map<string, number>();
  const textCount = new Map<string, number>();
  textOf.forEach((t, k) => textCount.set(t, (textCount.get(t) ?? 0) + counts[k]));
  let at = 0;
  for (const [t, n] of textCount) {
    textStart.set(t, at);
    at += n;
  }
  const cursor = new Float64Array(ids.length);
  for (let k = 0; k < ids.length; k++) {
    cursor[k] = textStart.get(textOf[k])!;
    textStart.set(textOf[k], cursor[k] + counts[k]);
  }
  const values = new Float64Array(at);
  for (let i = 0; i < ops.count; i++) if (ops.kind[i] === GpuOpKind.Kernel) values[cursor[slotOf(ops.nameId[i])]++] = ops.end[i] - ops.start[i];
  const groups = new Map<string, Float64Array>();
  for (const [t, n] of textCount) groups.set(t, values.subarray(textStart.get(t)! - n, textStart.get(t)!));
  let nullNameKernels = 0;
  let unknownNameKernels = 0;
  ids.forEach((id, k) => {
    if (id === NO_STRING_ID) nullNameKernels += counts[k];
    else if (!names.has(id)) unknownNameKernels += counts[k];
  });
  return { groups, nullNameKernels, unknownNameKernels };
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
