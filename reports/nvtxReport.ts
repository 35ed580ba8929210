import type { NvtxSummary } from '../src/analysis/nvtxSummary.js';
import type { NvtxGpuProjection } from '../src/analysis/nvtxGpuProjection.js';
import type { DataTable } from './table.js';
import { nsysStatColumns } from './nsysColumns.js';

/** `nvtx_sum` columns, headers exactly as `nsys stats --format csv` prints them. */
export function nvtxSummaryTable(summary: NvtxSummary): DataTable {
  const notes: string[] = [];
  if (summary.unclosedRanges > 0) notes.push(`${summary.unclosedRanges} ranges were never closed; they end at the latest NVTX timestamp (${summary.maxTimestampNs} ns), as in nsys`);
  if (summary.crossThreadRanges > 0) notes.push(`${summary.crossThreadRanges} start/end ranges ended on another thread (counted in full, as in nsys)`);
  if (summary.zeroLengthRanges > 0) notes.push(`${summary.zeroLengthRanges} ranges have zero length (counted, duration 0)`);
  if (summary.marks > 0) notes.push(`${summary.marks} NVTX marks (instants) are not ranges and are not in this table`);
  return {
    title: 'NVTX range summary (nvtx_sum)',
    columns: [
      ...nsysStatColumns(),
      { key: 'style', header: 'Style', kind: 'text' },
      { key: 'range', header: 'Range', kind: 'text' },
    ],
    rows: summary.rows as unknown as DataTable['rows'],
    notes,
  };
}

/** `nvtx_gpu_proj_sum` columns, headers exactly as `nsys stats --format csv` prints them. */
export function nvtxGpuProjectionTable(p: NvtxGpuProjection): DataTable {
  const c = p.coverage;
  const notes: string[] = [];
  if (p.missingTables.length) notes.push(`the export lacks ${p.missingTables.join(', ')}: nothing to project`);
  if (c.graphTraceRowsIgnored) notes.push(`${c.graphTraceRowsIgnored} whole-graph launches (graph-level CUDA-graph trace) are not projected, as in nsys`);
  if (c.crossThreadRanges) notes.push(`${c.crossThreadRanges} start/end ranges ended on another thread and are left out, as in nsys`);
  if (c.unclosedRanges) notes.push(`${c.unclosedRanges} ranges were never closed; they end at the latest NVTX timestamp`);
  if (c.gpuOpsWithoutApiCall) notes.push(`${c.gpuOpsWithoutApiCall} GPU ops have no CUDA API row (time-trimmed export?) and cannot be projected`);
  if (c.apiCallsOutsideRanges) notes.push(`${c.apiCallsOutsideRanges} API calls (${c.gpuOpsOutsideRanges} GPU ops) were made outside every NVTX range`);
  return {
    title: 'GPU time projected onto NVTX ranges (nvtx_gpu_proj_sum)',
    columns: [
      { key: 'range', header: 'Range', kind: 'text' },
      { key: 'style', header: 'Style', kind: 'text' },
      { key: 'totalProjNs', header: 'Total Proj Time (ns)', kind: 'ns' },
      { key: 'totalRangeNs', header: 'Total Range Time (ns)', kind: 'ns' },
      { key: 'instances', header: 'Range Instances', kind: 'int' },
      { key: 'projAvg', header: 'Proj Avg (ns)', kind: 'decimal1' },
      { key: 'projMed', header: 'Proj Med (ns)', kind: 'decimal1' },
      { key: 'projMin', header: 'Proj Min (ns)', kind: 'ns' },
      { key: 'projMax', header: 'Proj Max (ns)', kind: 'ns' },
      { key: 'projStdDev', header: 'Proj StdDev (ns)', kind: 'decimal1' },
      { key: 'totalGpuOps', header: 'Total GPU Ops', kind: 'int' },
      { key: 'avgGpuOps', header: 'Avg GPU Ops', kind: 'decimal1' },
      { key: 'avgRangeLvl', header: 'Avg Range Lvl', kind: 'decimal1' },
      { key: 'avgNumChild', header: 'Avg Num Child', kind: 'decimal1' },
    ],
    rows: p.rows.map((r) => ({ ...r, avgRangeLvl: Number.isNaN(r.avgRangeLvl) ? null : r.avgRangeLvl })) as unknown as DataTable['rows'],
    notes,
  };
}
