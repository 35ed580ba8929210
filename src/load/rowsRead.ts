import type { ExportHandle } from '../../queries/handle.js';
import { rowIdBound } from '../../queries/capture.js';
import { GPU_OP_SOURCES } from '../../queries/gpuOps.js';
import type { ExportRows } from '../memoryBudget.js';

/**
 * The rows an analysis would read whole, counted before anything is read (max(rowid) per table: a
 * b-tree lookup, at least the row count): the GPU ops, the CUDA API calls and the NVTX rows, each
 * only when `reads` says the analysis reads it (else 0). What the memory budget is checked against.
 */
export function rowsRead(handle: ExportHandle, reads: { gpuOps: boolean; apiCalls: boolean; nvtx: boolean }): ExportRows {
  const bound = (table: string) => (handle.hasTable(table) ? rowIdBound(handle, table) : 0);
  return {
    gpuOps: reads.gpuOps ? GPU_OP_SOURCES.reduce((a, s) => a + bound(s.table), 0) : 0,
    apiCalls: reads.apiCalls ? bound('CUPTI_ACTIVITY_KIND_RUNTIME') : 0,
    nvtx: reads.nvtx ? bound('NVTX_EVENTS') : 0,
  };
}
