import { validIntervalSql, validNvtxSql } from './validRows.js';
import { sql } from 'kysely';
import type { ExportHandle } from './handle.js';
import { gpuRowGlobalPid, pidOf } from './globalIds.js';
import { allRows } from './run.js';

// What an export holds, table by table: extents, devices, processes. Table names come
// from iterscope's own constants (checked with `hasTable`), never from user input.

type AnyTable = 'CUPTI_ACTIVITY_KIND_KERNEL';

/**
 * `max(rowid)` of a table, 0 when empty (one row, `n`): a b-tree lookup and at least its row
 * count, to size column arrays up front.
 */
export function selectRowIdBound(handle: ExportHandle, table: string) {
  return handle.db.selectFrom(table as AnyTable).select(sql<number>`coalesce(max(rowid), 0)`.as('n'));
}

/** `selectRowIdBound`'s number (0 for an empty table). */
export function rowIdBound(handle: ExportHandle, table: string): number {
  return Number(allRows(handle, selectRowIdBound(handle, table))[0].n);
}

/**
 * First start and last end (`coalesce(end, start)`) over the given tables (one row, `s` and `e`,
 * null when all are empty); null when none of them is in the export.
 */
export function selectActivitySpan(handle: ExportHandle, tables: readonly string[]) {
  const parts = tables
    .filter((t) => handle.hasTable(t))
    // Only rows with usable times (validRows.ts): a TEXT `end` would be the max() of any number.
    .map((t) =>
      handle.db
        .selectFrom(t as AnyTable)
        .select([sql<number | null>`min(start)`.as('s'), sql<number | null>`max(coalesce("end", start))`.as('e')])
        .where(sql<boolean>`${sql.raw(t === 'NVTX_EVENTS' ? validNvtxSql() : validIntervalSql())}`),
    );
  if (parts.length === 0) return null;
  let u = parts[0];
  for (const p of parts.slice(1)) u = u.unionAll(p);
  return handle.db.selectFrom(u.as('spans')).select([sql<number | null>`min(s)`.as('s'), sql<number | null>`max(e)`.as('e')]);
}

/** The distinct `deviceId`s of a GPU table (`d`). */
export function selectDeviceIds(handle: ExportHandle, table: string) {
  return handle.db.selectFrom(table as AnyTable).select(sql<number>`deviceId`.as('d')).distinct();
}

/** The distinct PIDs that called the CUDA runtime/driver API (`p`). */
export function selectApiCallerPids(handle: ExportHandle) {
  return handle.db.selectFrom('CUPTI_ACTIVITY_KIND_RUNTIME').select(pidOf('globalTid').as('p')).distinct();
}

/** The distinct PIDs that ran kernels (`p`). */
export function selectKernelPids(handle: ExportHandle) {
  return handle.db.selectFrom('CUPTI_ACTIVITY_KIND_KERNEL').select(pidOf(gpuRowGlobalPid(handle, 'CUPTI_ACTIVITY_KIND_KERNEL')).as('p')).distinct();
}

/** One row when some kernel ran as a CUDA-graph node (node-level graph trace); needs `graphNodeId`. */
export function selectGraphNodeKernel(handle: ExportHandle) {
  return handle.db.selectFrom('CUPTI_ACTIVITY_KIND_KERNEL').select(sql<number>`1`.as('hit')).where('graphNodeId', 'is not', null).limit(1);
}
