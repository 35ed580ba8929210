import { sql } from 'kysely';
import type { ExportHandle } from './handle.js';
import { inJsonList } from './filters.js';
import { gpuRowGlobalPid, pidOf } from './globalIds.js';
import { validIntervalSql } from './validRows.js';

// A chosen set of kernels (by demangled-name id, e.g. the collectives) and the API calls that
// launched them. The ids are bound as one JSON array: any count, nothing spliced into SQL.

const demangledNameIn = (ids: readonly number[]) => sql<boolean>`demangledName IN ${inJsonList(ids)}`;

/**
 * The kernels with these demangled-name ids, in start order: start, end, correlationId, pid. Only
 * rows with usable times (validRows.ts), as in the GPU-op columns, whose loader notes the others.
 */
export function selectKernelsNamed(handle: ExportHandle, nameIds: readonly number[]) {
  return handle.db
    .selectFrom('CUPTI_ACTIVITY_KIND_KERNEL')
    .select(['start', 'end', 'correlationId', pidOf(gpuRowGlobalPid(handle, 'CUPTI_ACTIVITY_KIND_KERNEL')).as('pid')])
    .where(demangledNameIn(nameIds))
    .where(sql<boolean>`${sql.raw(validIntervalSql())}`)
    .orderBy('start');
}

/**
 * The runtime calls whose correlation id is that of a kernel with these name ids: pid,
 * correlationId, start (2022.x backtrace rows, eventClass 67, and rows with unusable times left
 * out, as in the API-call columns).
 */
export function selectLaunchesOfKernelsNamed(handle: ExportHandle, nameIds: readonly number[]) {
  return handle.db
    .selectFrom('CUPTI_ACTIVITY_KIND_RUNTIME')
    .select([pidOf('globalTid').as('pid'), 'correlationId', 'start'])
    .where('eventClass', '!=', 67)
    .where(sql<boolean>`${sql.raw(validIntervalSql())}`)
    .where(sql<boolean>`correlationId IN (SELECT correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE ${demangledNameIn(nameIds)})`);
}
