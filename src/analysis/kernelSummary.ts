import type { ExportHandle } from '../../queries/handle.js';
import { selectKernelDurations, type KernelQueryOptions } from '../../queries/kernels.js';
import { selectGraphTraces } from '../../queries/graphTrace.js';
import { forEachRow, iterateQuery } from '../../queries/run.js';
import { countAllRows, noteExcludedRows } from '../export/rowChecks.js';
import { loadStrings } from '../../queries/strings.js';
import { durationStats, Float64Buffer, percentOf, type DurationStats } from './durationStats.js';
import { requireContract } from '../export/contract.js';

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
export function summarizeKernels(handle: ExportHandle, opts: KernelSummaryOptions = {}): KernelSummary {
  requireContract(handle, 'kernelSummary');
  const groups = new Map<string, Float64Buffer>();
  const kernelTablePresent = handle.hasTable('CUPTI_ACTIVITY_KIND_KERNEL');
  if (kernelTablePresent) {
    const byId = new Map<number, Float64Buffer>();
    const kept = forEachRow(handle, selectKernelDurations(handle, opts), (nameId: number, duration: number) => {
      let buf = byId.get(nameId);
      if (!buf) byId.set(nameId, (buf = new Float64Buffer()));
      buf.push(duration);
    });
    // Rows left out for unusable times (rowChecks.ts): all rows less those kept, when unfiltered.
    const unfiltered = opts.pid === undefined && opts.deviceId === undefined && opts.startNs === undefined && opts.endNs === undefined;
    if (unfiltered) noteExcludedRows(handle, 'CUPTI_ACTIVITY_KIND_KERNEL', countAllRows(handle, 'CUPTI_ACTIVITY_KIND_KERNEL') - kept);
    const names = loadStrings(handle, byId.keys());
    for (const [id, buf] of byId) {
      const name = names.get(id) ?? `<unknown name ${id}>`;
      // Distinct ids can carry the same text; nsys groups by the text.
      const prev = groups.get(name);
      if (prev) for (const v of buf.view()) prev.push(v);
      else groups.set(name, buf);
    }
  }
  let graphTraceRows = 0;
  if (handle.hasTable('CUPTI_ACTIVITY_KIND_GRAPH_TRACE')) {
    for (const g of iterateQuery(handle, selectGraphTraces(handle, opts))) {
      graphTraceRows++;
      if (!opts.includeGraphs) continue;
      const name = `[CUDA graph ${g.graphId}]`;
      let buf = groups.get(name);
      if (!buf) groups.set(name, (buf = new Float64Buffer()));
      buf.push(g.end - g.start);
    }
  }
  const stats = [...groups].map(([name, buf]) => ({ name, ...durationStats(buf.view()) }));
  const grand = stats.reduce((a, s) => a + s.total, 0);
  const rows = stats
    .map((s) => ({ timePercent: percentOf(s.total, grand), ...s }))
    .sort((a, b) => b.total - a.total || a.count - b.count || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { rows, graphTraceRows, graphsIncluded: !!opts.includeGraphs && graphTraceRows > 0, kernelTablePresent };
}
