import { kernelSummaryNotes, type KernelSummary } from '../src/analysis/kernelSummary.js';
import type { DataTable } from './table.js';
import { nsysStatColumns } from './nsysColumns.js';

/** `cuda_gpu_kern_sum` columns, headers exactly as `nsys stats --format csv` prints them. */
export function kernelSummaryTable(summary: KernelSummary): DataTable {
  return {
    title: 'CUDA GPU kernel summary (cuda_gpu_kern_sum)',
    columns: [
      ...nsysStatColumns(),
      { key: 'name', header: 'Name', kind: 'text', display: 'kernel-name' },
    ],
    rows: summary.rows as unknown as DataTable['rows'],
    notes: kernelSummaryNotes(summary),
  };
}
