import { sql } from 'kysely';
import { validIntervalSql } from './validRows.js';
import type { ExportHandle, QueryOptions } from './handle.js';
import { activityFilters } from './filters.js';
import { pidOf, tidOf } from './globalIds.js';

/**
 * CUDA runtime and driver API calls (`CUPTI_ACTIVITY_KIND_RUNTIME`) with their name. Names keep
 * nsys's version suffix (`cudaLaunchKernel_v7000`); see `stripApiVersion`.
 */
export function selectRuntimeCalls(handle: ExportHandle, opts: QueryOptions = {}) {
  return handle.db
    .selectFrom('CUPTI_ACTIVITY_KIND_RUNTIME as r')
    .leftJoin('StringIds as s', 's.id', 'r.nameId')
    .select(['r.start', 'r.end', 'r.eventClass', 'r.globalTid', 'r.correlationId', 'r.nameId', 's.value as name'])
    .where((eb) => activityFilters(eb, opts, { start: 'r.start', end: 'r.end', id: 'r.globalTid' }));
}

/** `cudaLaunchKernel_v7000` -> `cudaLaunchKernel`; `cudaGraphLaunch_v10000` -> `cudaGraphLaunch`. */
export function stripApiVersion(name: string): string {
  return name.replace(/_v\d+$/, '');
}

/**
 * API calls as plain ids and times, for the typed columns: pid, tid, correlationId, start, end,
 * nameId, and with `launchIdUpper` a seventh column, `globalTid >> 48` (the hardware and VM ids
 * above the PID; NULL for a NULL globalTid), for a loader that checks in its scan what
 * `selectIrregularLaunchId` would look for. 2022.x exports repeat calls as CUDA-backtrace rows
 * (eventClass 67) with the same correlationId: left out where the column exists. Only rows with
 * usable times unless `checkTimes` is false.
 */
export function selectApiCallRows(handle: ExportHandle, opts: { checkTimes?: boolean; launchIdUpper?: boolean } = {}) {
  let q = handle.db
    .selectFrom('CUPTI_ACTIVITY_KIND_RUNTIME')
    .select([pidOf('globalTid').as('pid'), tidOf('globalTid').as('tid'), 'correlationId', 'start', 'end', 'nameId'])
    .$if(opts.launchIdUpper === true, (b) => b.select(sql<number | null>`globalTid >> 48`.as('launchIdUpper')));
  if (handle.hasColumn('CUPTI_ACTIVITY_KIND_RUNTIME', 'eventClass')) q = q.where('eventClass', '!=', 67);
  // Only rows with usable times (validRows.ts), unless the caller tests them itself
  // (`checkTimes: false`, as the columns loader does: it counts what it leaves out in its scan).
  return (opts.checkTimes ?? true) ? q.where(sql<boolean>`${sql.raw(validIntervalSql())}`) : q;
}
