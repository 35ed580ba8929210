import type { ExportHandle, QueryOptions } from './handle.js';
import { activityFilters } from './filters.js';
import { forEachRow } from './run.js';
import { sql } from 'kysely';
import { validIntervalSql } from './validRows.js';
import { globalPidColumn, gpuRowGlobalPid } from './globalIds.js';

const KERNEL_TABLE = 'CUPTI_ACTIVITY_KIND_KERNEL';

export interface KernelQueryOptions extends QueryOptions {
  /** Which name to resolve: the demangled one (default, as `nsys stats` prints) or the short one. */
  nameBy?: 'demangled' | 'short';
}

/**
 * Kernels (`CUPTI_ACTIVITY_KIND_KERNEL`) with their resolved name. Absent table: use
 * `handle.hasTable` first; an export without kernels simply has none.
 */
export function selectKernels(handle: ExportHandle, opts: KernelQueryOptions = {}) {
  const nameCol = opts.nameBy === 'short' ? 'k.shortName' : 'k.demangledName';
  return handle.db
    .selectFrom('CUPTI_ACTIVITY_KIND_KERNEL as k')
    .leftJoin('StringIds as s', 's.id', nameCol)
    .select([
      'k.start',
      'k.end',
      'k.deviceId',
      'k.contextId',
      'k.streamId',
      'k.correlationId',
      globalPidColumn(handle, KERNEL_TABLE, 'k.globalPid'),
      'k.demangledName as nameId',
      's.value as name',
    ])
    .where((eb) => activityFilters(eb, opts, { start: 'k.start', end: 'k.end', id: gpuRowGlobalPid(handle, KERNEL_TABLE, 'k.globalPid'), device: 'k.deviceId' }));
}

/**
 * Kernel durations keyed by name id: the input of the `cuda_gpu_kern_sum` statistics. Rows with
 * unusable times (validRows.ts) are left out.
 */
export function selectKernelDurations(handle: ExportHandle, opts: KernelQueryOptions = {}) {
  const nameCol = opts.nameBy === 'short' ? 'k.shortName' : 'k.demangledName';
  return handle.db
    .selectFrom('CUPTI_ACTIVITY_KIND_KERNEL as k')
    .select((eb) => [eb.ref(nameCol).as('nameId'), eb('k.end', '-', eb.ref('k.start')).as('duration')])
    .where((eb) => activityFilters(eb, opts, { start: 'k.start', end: 'k.end', id: gpuRowGlobalPid(handle, KERNEL_TABLE, 'k.globalPid'), device: 'k.deviceId' }))
    .where(sql<boolean>`${sql.raw(validIntervalSql('k'))}`);
}

/** The demangled names of the kernels in the export, by string id (one pass over the distinct ids). */
export function loadKernelNames(handle: ExportHandle): Map<number, string> {
  const names = new Map<number, string>();
  if (!handle.hasTable('CUPTI_ACTIVITY_KIND_KERNEL') || !handle.hasTable('StringIds')) return names;
  forEachRow(
    handle,
    handle.db
      .selectFrom('StringIds')
      .select(['id', 'value'])
      .where('id', 'in', (eb) => eb.selectFrom('CUPTI_ACTIVITY_KIND_KERNEL').select('demangledName').distinct()),
    (id: number, value: string) => names.set(id, value),
  );
  return names;
}
