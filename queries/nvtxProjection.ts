import { validNvtxSql } from './validRows.js';
import { sql } from 'kysely';
import type { ExportHandle, QueryOptions } from './handle.js';
import { inJsonList } from './filters.js';
import { gpuRowGlobalPid, idRef, pidOf, processPartOf, processPartOfGlobalPid, tidOf, type IdSource } from './globalIds.js';
import { NVTX_RANGE_EVENT_TYPES } from './schema.js';

// The three streams of the NVTX GPU projection (`nsys stats -r nvtx_gpu_proj_sum`): ranges, the
// API calls made in them, the GPU work of those calls; then the labels of the projected ranges.
// Threads are (hi, lo) = (globalTid >> 24, globalTid & 0xFFFFFF); GPU ops join their call on hi.

/**
 * Every NVTX range: rowId, start, end, hi, lo, eventType, `sameThread` (0: ended on another
 * thread; always 1 when the export has no `endGlobalTid`).
 */
export function selectProjectionRanges(handle: ExportHandle, opts: { hasEndGlobalTid: boolean }) {
  return handle.db
    .selectFrom('NVTX_EVENTS')
    .select([
      sql<number>`rowid`.as('rowId'),
      'start',
      'end',
      processPartOf('globalTid').as('hi'),
      sql<number | null>`${tidOf('globalTid')}`.as('lo'),
      'eventType',
      opts.hasEndGlobalTid ? sql<number>`endGlobalTid IS NULL`.as('sameThread') : sql<number>`1`.as('sameThread'),
    ])
    .where('eventType', 'in', [...NVTX_RANGE_EVENT_TYPES])
    // Only rows with usable times (validRows.ts); the projection counts the others.
    .where(sql<boolean>`${sql.raw(validNvtxSql())}`);
}

/**
 * CUDA API calls with a thread and a correlation id: hi, lo, start, end, correlationId. Times
 * unchecked: the projection tests and counts them (`isValidInterval`).
 */
export function selectProjectionCalls(handle: ExportHandle, opts: Pick<QueryOptions, 'pid'> = {}) {
  let q = handle.db
    .selectFrom('CUPTI_ACTIVITY_KIND_RUNTIME')
    .select([processPartOf('globalTid').as('hi'), sql<number | null>`${tidOf('globalTid')}`.as('lo'), 'start', 'end', 'correlationId'])
    .where('correlationId', 'is not', null)
    .where('globalTid', 'is not', null);
  if (opts.pid !== undefined) q = q.where(pidOf('globalTid'), '=', opts.pid);
  return q;
}

/**
 * The GPU ops of one table (kernels, memcpys or memsets): hi (NULL: joins no call), correlationId,
 * start, end. Times unchecked: the projection tests and counts them (`isValidInterval`).
 */
export function selectProjectionOps(
  handle: ExportHandle,
  table: 'CUPTI_ACTIVITY_KIND_KERNEL' | 'CUPTI_ACTIVITY_KIND_MEMCPY' | 'CUPTI_ACTIVITY_KIND_MEMSET',
  opts: Pick<QueryOptions, 'pid'> = {},
) {
  const globalPid = gpuRowGlobalPid(handle, table);
  let q = handle.db.selectFrom(table as 'CUPTI_ACTIVITY_KIND_KERNEL').select([processPartOfGlobalPid(globalPid).as('hi'), 'correlationId', 'start', 'end']);
  if (opts.pid !== undefined) q = q.where(pidOf(globalPid), '=', opts.pid);
  return q;
}

/** What labels the given NVTX rows (by rowid, bound as one list): rowId, domainId, pid, textId, text. */
export function selectNvtxLabelParts(handle: ExportHandle, rowIds: Iterable<number>) {
  return handle.db
    .selectFrom('NVTX_EVENTS')
    .select([sql<number>`rowid`.as('rowId'), 'domainId', pidOf('globalTid').as('pid'), 'textId', 'text'])
    .where(sql`rowid`, 'in', inJsonList(rowIds));
}

/** A GPU row's globalPid is irregular: NULL, other bits above the PID than `upper`, or a thread part. */
function irregularGlobalPid(id: IdSource, upper: number) {
  const ref = idRef(id);
  return sql<boolean>`${ref} IS NULL OR (${ref} >> 48) != ${upper} OR ${tidOf(id)} != 0`;
}

/**
 * One row (`hit`) when some row of the runtime table (by `globalTid`) or of a GPU-op table (by
 * `globalPid`) has a NULL id, bits above the PID other than `upper` (`id >> 48`: hardware and VM
 * ids), or (GPU ops) a thread part other than 0; none otherwise. The NVTX GPU projection reads the
 * pipeline's columns, which keep only the PID, when this finds nothing.
 */
export function selectIrregularLaunchId(
  handle: ExportHandle,
  table: 'CUPTI_ACTIVITY_KIND_RUNTIME' | 'CUPTI_ACTIVITY_KIND_KERNEL' | 'CUPTI_ACTIVITY_KIND_MEMCPY' | 'CUPTI_ACTIVITY_KIND_MEMSET',
  upper: number,
) {
  const irregular =
    table === 'CUPTI_ACTIVITY_KIND_RUNTIME'
      ? sql<boolean>`globalTid IS NULL OR (globalTid >> 48) != ${upper}`
      : irregularGlobalPid(gpuRowGlobalPid(handle, table), upper);
  return handle.db
    .selectFrom(table as 'CUPTI_ACTIVITY_KIND_KERNEL')
    .select(sql<number>`1`.as('hit'))
    .where(irregular)
    .limit(1);
}
