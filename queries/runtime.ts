import type { ExportHandle, QueryOptions } from './handle.js';
import { activityFilters } from './filters.js';

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
