import { nvtxSummaryNotes, type NvtxSummary } from '../src/analysis/nvtxSummary.js';
import { nvtxGpuProjectionNotes, type NvtxGpuProjection } from '../src/analysis/nvtxGpuProjection.js';
import type { DataTable } from './table.js';
import { nsysStatColumns } from './nsysColumns.js';

/** `nvtx_sum` columns, headers exactly as `nsys stats --format csv` prints them. */
export function nvtxSummaryTable(summary: NvtxSummary): DataTable {
  return {
    title: 'NVTX range summary (nvtx_sum)',
    columns: [
      ...nsysStatColumns(),
      { key: 'style', header: 'Style', kind: 'text' },
      { key: 'range', header: 'Range', kind: 'text' },
    ],
    rows: summary.rows as unknown as DataTable['rows'],
    notes: nvtxSummaryNotes(summary),
  };
}

/** `nvtx_gpu_proj_sum` columns, headers exactly as `nsys stats --format csv` prints them. */
export function nvtxGpuProjectionTable(p: NvtxGpuProjection): DataTable {
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
    notes: nvtxGpuProjectionNotes(p),
  };
}
