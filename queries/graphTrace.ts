import { sql } from 'kysely';
import type { ExportHandle, QueryOptions } from './handle.js';
import { activityFilters } from './filters.js';
import { globalPidColumn, gpuRowGlobalPid, pidOf } from './globalIds.js';
import { validIntervalSql } from './validRows.js';
import { columnOrNull } from './optionalColumns.js';

/**
 * Whole-graph launches (`CUPTI_ACTIVITY_KIND_GRAPH_TRACE`, `--cuda-graph-trace graph`): the GPU
 * work of a `cudaGraphLaunch` when its kernels are not in the kernel table.
 */
export function selectGraphTraces(handle: ExportHandle, opts: QueryOptions = {}) {
  const table = 'CUPTI_ACTIVITY_KIND_GRAPH_TRACE';
  return handle.db
    .selectFrom('CUPTI_ACTIVITY_KIND_GRAPH_TRACE as g')
    .select([
      'g.start',
      'g.end',
      'g.deviceId',
      columnOrNull<number>(handle, table, 'contextId', 'g.contextId').as('contextId'),
      'g.streamId',
      'g.correlationId',
      globalPidColumn(handle, table, 'g.globalPid'),
      // Optional (contract.ts): without graphId, `kernels --graphs` sums every launch in one row.
      columnOrNull<number>(handle, table, 'graphId', 'g.graphId').as('graphId'),
      columnOrNull<number>(handle, table, 'graphExecId', 'g.graphExecId').as('graphExecId'),
    ])
    .where((eb) => activityFilters(eb, opts, { start: 'g.start', end: 'g.end', id: gpuRowGlobalPid(handle, table, 'g.globalPid'), device: 'g.deviceId' }))
    .where(sql<boolean>`${sql.raw(validIntervalSql('g'))}`);
}

/** Whole-graph launch rows, counted (one row, `n`); optionally of one process. */
export function selectGraphTraceCount(handle: ExportHandle, opts: Pick<QueryOptions, 'pid'> = {}) {
  let q = handle.db.selectFrom('CUPTI_ACTIVITY_KIND_GRAPH_TRACE').select(sql<number>`count(*)`.as('n'));
  if (opts.pid !== undefined) q = q.where(pidOf(gpuRowGlobalPid(handle, 'CUPTI_ACTIVITY_KIND_GRAPH_TRACE')), '=', opts.pid);
  return q;
}
