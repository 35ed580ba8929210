import { selectEnumLabels, selectMemcpyTraffic, selectMemoryUsageEvents, type MemoryUsageRow } from '../../queries/memoryEvents.js';
import { forEachRow } from '../../queries/run.js';
import type { LoadedExport } from './loadedExport.js';
import { isTimeNs, isValidInterval } from '../../queries/validRows.js';
import { noteExcludedRows, unusableTime } from '../export/excludedRows.js';
import { NO_MEM_KIND } from './memcpyTrafficColumns.js';

export type { MemoryUsageRow };

/** `id -> label` of an nsys enum table (`ENUM_CUDA_MEM_KIND`, `ENUM_CUDA_MEMCPY_OPER`), read once; empty when absent. */
export function enumLabels(loaded: LoadedExport, table: 'ENUM_CUDA_MEM_KIND' | 'ENUM_CUDA_MEMCPY_OPER'): ReadonlyMap<number, string> {
  return loaded.cached(`enum\u0000${table}`, () => selectEnumLabels(loaded.handle, table));
}

/**
 * Visits every memcpy with usable times in table order: pid, GPU start/end, bytes, direction
 * (`copyKind`), host memory kinds (null where this nsys version does not record them). From the
 * traffic the GPU ops' scan read (`LoadedExport.memcpyTraffic`), else streamed from the table (a
 * big export has millions), the others left out and counted in the export's notes as the GPU-op
 * loader counts them. False (nothing visited) without the memcpy table.
 */
export function forEachMemcpy(
  loaded: LoadedExport,
  visit: (pid: number, start: number, end: number, bytes: number, copyKind: number, srcKind: number | null, dstKind: number | null) => void,
): boolean {
  const read = loaded.memcpyTraffic();
  if (read) {
    const { pid, start, end, bytes, copyKind, srcKind, dstKind } = read;
    for (let i = 0; i < read.count; i++) visit(pid[i], start[i], end[i], bytes[i], copyKind[i], srcKind[i] === NO_MEM_KIND ? null : srcKind[i], dstKind[i] === NO_MEM_KIND ? null : dstKind[i]);
    return true;
  }
  const q = selectMemcpyTraffic(loaded.handle);
  if (!q) return false;
  let invalid = 0;
  forEachRow(loaded.handle, q, (pid: number, start: number, end: number, bytes: number, copyKind: number, srcKind: number | null, dstKind: number | null) => {
    if (isValidInterval(start, end)) visit(pid, start, end, bytes, copyKind, srcKind, dstKind);
    else invalid++;
  });
  noteExcludedRows(loaded.handle, 'CUPTI_ACTIVITY_KIND_MEMCPY', invalid);
  return true;
}

/**
 * `--cuda-memory-usage` allocation and deallocation events, in time order; none when it was off.
 * An event whose time is not an integer number of ns (a damaged or edited export) is left out and
 * counted in the export's notes.
 */
export function* memoryUsageEvents(loaded: LoadedExport): Iterable<MemoryUsageRow> {
  loaded.requireContract('memoryUsage');
  let invalid = 0;
  for (const e of selectMemoryUsageEvents(loaded.handle)) {
    if (isTimeNs(e.start)) yield e;
    else invalid++;
  }
  noteExcludedRows(loaded.handle, 'CUDA_GPU_MEMORY_USAGE_EVENTS', invalid, unusableTime('start'));
}
