import type { ExportHandle } from '../export/openExport.js';
import { noteOnRead } from '../export/excludedRows.js';
import { rowsRead } from '../load/rowsRead.js';
import { estimateAnalysisBytes, formatMemorySize, memoryBudget, type ExportRows, type MemoryBudget } from '../memoryBudget.js';
import type { PartEntry } from './parts.js';
import type { AnalysisRequest } from './request.js';

/**
 * The request as it fits the memory budget (`--max-memory`, memoryBudget.ts): the analysis's peak
 * is estimated from the rows it will read (counted before reading); within the budget the request
 * runs as asked. Above it, where the caller left the NVTX read to us (`nvtxRead` 'auto'), the NVTX
 * columns are read first and let go before the GPU ops are read (`release`: no worker thread, the
 * two working sets never held at once; slower, the same result). When even that is estimated above
 * the budget, one note says so: the GPU ops and API calls have no bounded path yet (they are read
 * whole), so the process may go past the limit.
 */
export function fitToMemory(
  handle: ExportHandle,
  request: AnalysisRequest,
  parts: readonly PartEntry[],
  sharedNvtxRows: number,
  budget: MemoryBudget = memoryBudget(),
): AnalysisRequest {
  const reads = (data: 'gpuOps' | 'apiCalls' | 'nvtx') => parts.some((p) => p.loads?.includes(data) || p.reads?.includes(data));
  const rows = rowsRead(handle, { gpuOps: reads('gpuOps'), apiCalls: reads('apiCalls'), nvtx: reads('nvtx') });
  const mode = request.nvtxRead ?? 'auto';
  // The NVTX columns stay beside the GPU ops up to `sharedNvtxRows` rows, unless read with 'release'.
  const held = rows.gpuOps > 0 && rows.nvtx > 0 && rows.nvtx <= sharedNvtxRows && mode !== 'release';
  const inWorker = budget.share === true;
  if (estimateAnalysisBytes(rows, held, inWorker) <= budget.bytes) return request;
  const released = held && mode === 'auto' ? { ...request, nvtxRead: 'release' as const } : request;
  const need = estimateAnalysisBytes(rows, held && released === request, inWorker);
  if (need > budget.bytes) noteOnRead(handle, overBudgetNote(handle.path, rows, need, budget));
  return released;
}

/** The note of an analysis estimated above the budget with every bounded path taken. */
function overBudgetNote(path: string, rows: ExportRows, need: number, budget: MemoryBudget): string {
  const limit = budget.share
    ? `this worker's share of the memory limit (${formatMemorySize(budget.bytes)})`
    : budget.given
      ? `--max-memory ${formatMemorySize(budget.bytes)}`
      : `the default memory limit (${formatMemorySize(budget.bytes)}, half the free memory; set --max-memory)`;
  const counted = [`${rows.gpuOps} GPU ops`, `${rows.apiCalls} API calls`, `${rows.nvtx} NVTX rows`].filter((s) => !s.startsWith('0 ')).join(', ');
  return `${path}: an estimated ${formatMemorySize(need)} for ${counted} is above ${limit}; the GPU ops and API calls have no bounded path yet (read whole), so this run may use more`;
}
