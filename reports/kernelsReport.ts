import type { KernelSummary } from '../src/analysis/kernelSummary.js';
import type { DataTable } from './table.js';

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
      { key: 'timePercent', header: 'Time (%)', kind: 'percent' },
      { key: 'total', header: 'Total Time (ns)', kind: 'ns' },
      { key: 'count', header: 'Instances', kind: 'int' },
      { key: 'avg', header: 'Avg (ns)', kind: 'decimal1' },
      { key: 'med', header: 'Med (ns)', kind: 'decimal1' },
      { key: 'min', header: 'Min (ns)', kind: 'ns' },
      { key: 'max', header: 'Max (ns)', kind: 'ns' },
      { key: 'stdDev', header: 'StdDev (ns)', kind: 'decimal1' },
      { key: 'name', header: 'Name', kind: 'text' },
    ],
    rows: summary.rows as unknown as DataTable['rows'],
    notes,
  };
}
