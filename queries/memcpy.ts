import type { ExportHandle, QueryOptions } from './handle.js';
import { activityFilters } from './filters.js';
import { globalPidColumn, gpuRowGlobalPid } from './globalIds.js';
import { columnOrNull } from './optionalColumns.js';

/** Memory copies with their direction label from `ENUM_CUDA_MEMCPY_OPER` (labels vary by version). */
export function selectMemcpys(handle: ExportHandle, opts: QueryOptions = {}) {
  const table = 'CUPTI_ACTIVITY_KIND_MEMCPY';
  const base = handle.db
    .selectFrom('CUPTI_ACTIVITY_KIND_MEMCPY as m')
    .select([
      'm.start',
      'm.end',
      'm.deviceId',
      columnOrNull<number>(handle, table, 'contextId', 'm.contextId').as('contextId'),
      'm.streamId',
      'm.correlationId',
      globalPidColumn(handle, table, 'm.globalPid'),
      columnOrNull<number>(handle, table, 'bytes', 'm.bytes').as('bytes'),
      columnOrNull<number>(handle, table, 'copyKind', 'm.copyKind').as('copyKind'),
    ])
    .where((eb) => activityFilters(eb, opts, { start: 'm.start', end: 'm.end', id: gpuRowGlobalPid(handle, table, 'm.globalPid'), device: 'm.deviceId' }));
  return handle.hasTable('ENUM_CUDA_MEMCPY_OPER') && handle.hasColumn(table, 'copyKind')
    ? base.leftJoin('ENUM_CUDA_MEMCPY_OPER as e', 'e.id', 'm.copyKind').select('e.label as copyKindLabel')
    : base.select((eb) => eb.val<string | null>(null).as('copyKindLabel'));
}
