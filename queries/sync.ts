import type { ExportHandle, QueryOptions } from './handle.js';
import { activityFilters } from './filters.js';

/**
 * Synchronization records. `syncType` is encoded differently across nsys versions; classify by
 * the runtime API name (join on correlationId + PID) instead.
 */
export function selectSynchronizations(handle: ExportHandle, opts: QueryOptions = {}) {
  return handle.db
    .selectFrom('CUPTI_ACTIVITY_KIND_SYNCHRONIZATION as y')
    .select(['y.start', 'y.end', 'y.deviceId', 'y.contextId', 'y.streamId', 'y.correlationId', 'y.globalPid', 'y.syncType'])
    .where((eb) => activityFilters(eb, opts, { start: 'y.start', end: 'y.end', id: 'y.globalPid', device: 'y.deviceId' }));
}
