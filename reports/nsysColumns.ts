import type { TableColumn } from './table.js';

/**
 * The statistic columns `nsys stats` prints for `cuda_gpu_kern_sum` and `nvtx_sum`, headers
 * exactly as its CSV has them; the report's own name columns follow.
 */
export function nsysStatColumns(): TableColumn[] {
  return [
    { key: 'timePercent', header: 'Time (%)', kind: 'percent' },
    { key: 'total', header: 'Total Time (ns)', kind: 'ns' },
    { key: 'count', header: 'Instances', kind: 'int' },
    { key: 'avg', header: 'Avg (ns)', kind: 'decimal1' },
    { key: 'med', header: 'Med (ns)', kind: 'decimal1' },
    { key: 'min', header: 'Min (ns)', kind: 'ns' },
    { key: 'max', header: 'Max (ns)', kind: 'ns' },
    { key: 'stdDev', header: 'StdDev (ns)', kind: 'decimal1' },
  ];
}
