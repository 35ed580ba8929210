import { selectEnumLabels, selectMemcpyTraffic, selectMemoryUsageEvents, type MemoryUsageRow } from '../../queries/memoryEvents.js';
import { forEachRow } from '../../queries/run.js';
import type { LoadedExport } from './loadedExport.js';

export type { MemoryUsageRow };

/** `id -> label` of an nsys enum table (`ENUM_CUDA_MEM_KIND`, `ENUM_CUDA_MEMCPY_OPER`), read once; empty when absent. */
export function enumLabels(loaded: LoadedExport, table: 'ENUM_CUDA_MEM_KIND' | 'ENUM_CUDA_MEMCPY_OPER'): ReadonlyMap<number, string> {
  return loaded.cached(`enum\u0000${table}`, () => selectEnumLabels(loaded.handle, table));
}

/**
 * Visits every memcpy in table order (streamed: a big export has millions): pid, GPU start/end,
 * bytes, direction (`copyKind`), host memory kinds (null where this nsys version does not record
 * them). False (nothing visited) without the memcpy table.
 */
export function forEachMemcpy(
  loaded: LoadedExport,
  visit: (pid: number, start: number, end: number, bytes: number, copyKind: number, srcKind: number | null, dstKind: number | null) => void,
): boolean {
  const q = selectMemcpyTraffic(loaded.handle);
  if (!q) return false;
  forEachRow(loaded.handle, q, visit);
  return true;
}

/** `--cuda-memory-usage` allocation and deallocation events, in time order; none when it was off. */
export function memoryUsageEvents(loaded: LoadedExport): Iterable<MemoryUsageRow> {
  return selectMemoryUsageEvents(loaded.handle);
}
