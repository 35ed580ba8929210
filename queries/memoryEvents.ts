import { sql } from 'kysely';
import type { ExportHandle } from './handle.js';
import { gpuRowGlobalPid, idRef } from './globalIds.js';
import { hasColumns } from './optionalColumns.js';

/**
 * Every memcpy in table order, for `forEachRow`: pid, GPU start/end, bytes, direction
 * (`copyKind`) and the host memory kinds `srcKind`/`dstKind` (NULL where this nsys version does
 * not record them); null without the table, or without `bytes` and `copyKind` (a minimal export:
 * the traffic is then unknown, not zero, and contract.ts's note says so). The pid as the GPU ops
 * read it (`gpuRowGlobalPid`: the one API-calling process's where the column is absent).
 */
export function selectMemcpyTraffic(handle: ExportHandle) {
  if (!hasColumns(handle, 'CUPTI_ACTIVITY_KIND_MEMCPY', ['bytes', 'copyKind'])) return null;
  const kinds = handle.hasColumn('CUPTI_ACTIVITY_KIND_MEMCPY', 'srcKind') && handle.hasColumn('CUPTI_ACTIVITY_KIND_MEMCPY', 'dstKind');
  return handle.db
    .selectFrom('CUPTI_ACTIVITY_KIND_MEMCPY')
    .select([
      sql<number>`(coalesce(${idRef(gpuRowGlobalPid(handle, 'CUPTI_ACTIVITY_KIND_MEMCPY'))}, 0) >> 24) & 16777215`.as('pid'),
      'start',
      'end',
      'bytes',
      'copyKind',
      (kinds ? sql<number | null>`srcKind` : sql<null>`NULL`).as('srcKind'),
      (kinds ? sql<number | null>`dstKind` : sql<null>`NULL`).as('dstKind'),
    ]);
}

/** One `--cuda-memory-usage` event (CUDA_GPU_MEMORY_USAGE_EVENTS). */
export interface MemoryUsageRow {
  pid: number;
  start: number;
  deviceId: number;
  bytes: number;
  memKind: number;
  /** 0: allocation, 1: deallocation (ENUM_CUDA_DEV_MEM_EVENT_OPER). */
  operation: number;
}

/** Allocation and deallocation events, in time order; [] when `--cuda-memory-usage` was off. */
export function selectMemoryUsageEvents(handle: ExportHandle): Iterable<MemoryUsageRow> {
  if (!handle.hasTable('CUDA_GPU_MEMORY_USAGE_EVENTS')) return [];
  return handle.sqlite
    .prepare(
      `SELECT (globalPid >> 24) & 16777215 AS pid, start, deviceId, bytes, memKind, memoryOperationType AS operation
       FROM CUDA_GPU_MEMORY_USAGE_EVENTS`,
    )
    .iterate() as Iterable<MemoryUsageRow>;
}

/** `id -> label` of an nsys enum table (`ENUM_CUDA_MEM_KIND`, `ENUM_CUDA_MEMCPY_OPER`); empty when absent. */
export function selectEnumLabels(handle: ExportHandle, table: 'ENUM_CUDA_MEM_KIND' | 'ENUM_CUDA_MEMCPY_OPER'): Map<number, string> {
  const out = new Map<number, string>();
  if (!handle.hasTable(table) || !handle.hasColumn(table, 'label')) return out;
  // The table name is one of two literals above, never user text.
  for (const r of handle.sqlite.prepare(`SELECT id, label FROM ${table}`).all() as { id: number; label: string }[]) out.set(r.id, r.label);
  return out;
}
