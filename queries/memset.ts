import type { ExportHandle, QueryOptions } from './handle.js';
import { activityFilters } from './filters.js';
import { globalPidColumn, gpuRowGlobalPid } from './globalIds.js';

/** Memory sets (`CUPTI_ACTIVITY_KIND_MEMSET`). */
export function selectMemsets(handle: ExportHandle, opts: QueryOptions = {}) {
  const table = 'CUPTI_ACTIVITY_KIND_MEMSET';
  return handle.db
    .selectFrom('CUPTI_ACTIVITY_KIND_MEMSET as m')
    .select(['m.start', 'm.end', 'm.deviceId', 'm.contextId', 'm.streamId', 'm.correlationId', globalPidColumn(handle, table, 'm.globalPid'), 'm.bytes'])
    .where((eb) => activityFilters(eb, opts, { start: 'm.start', end: 'm.end', id: gpuRowGlobalPid(handle, table, 'm.globalPid'), device: 'm.deviceId' }));
}
