import type { KernelSummary } from '../src/analysis/kernelSummary.js';
import type { DataTable } from './table.js';
import { nsysStatColumns } from './nsysColumns.js';

/** `cuda_gpu_kern_sum` columns, headers exactly as `nsys stats --format csv` prints them. */
export function kernelSummaryTable(summary: KernelSummary): DataTable {
  const notes: string[] = [];
  if (!summary.kernelTablePresent) notes.push('the export has no CUPTI_ACTIVITY_KIND_KERNEL table: no kernels were recorded');
  if (summary.graphTraceRows > 0 && !summary.graphsIncluded) {
    notes.push(`${summary.graphTraceRows} whole-graph launches (CUPTI_ACTIVITY_KIND_GRAPH_TRACE, --cuda-graph-trace graph) are not in this table, as in nsys; --graphs adds them`);
  }
  return {
    title: 'CUDA GPU kernel summary (cuda_gpu_kern_sum)',
    columns: [
      ...nsysStatColumns(),
      { key: 'name', header: 'Name', kind: 'text', display: 'kernel-name' },
    ],
    rows: summary.rows as unknown as DataTable['rows'],
    notes,
  };
}
