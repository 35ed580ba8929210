import type { ExportHandle, QueryOptions } from './handle.js';
import { sql } from 'kysely';
import { activityFilters } from './filters.js';
import { validIntervalSql } from './validRows.js';

/**
 * Whole-graph launches (`CUPTI_ACTIVITY_KIND_GRAPH_TRACE`, `--cuda-graph-trace graph`): the GPU
 * work of a `cudaGraphLaunch` when its kernels are not in the kernel table.
 */
export function selectGraphTraces(handle: ExportHandle, opts: QueryOptions = {}) {
  return handle.db
    .selectFrom('CUPTI_ACTIVITY_KIND_GRAPH_TRACE as g')
    .select(['g.start', 'g.end', 'g.deviceId', 'g.contextId', 'g.streamId', 'g.correlationId', 'g.globalPid', 'g.graphId', 'g.graphExecId'])
    .where((eb) => activityFilters(eb, opts, { start: 'g.start', end: 'g.end', id: 'g.globalPid', device: 'g.deviceId' }))
    .where(sql<boolean>`${sql.raw(validIntervalSql('g'))}`);
}
