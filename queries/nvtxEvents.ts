import { sql, type SqlBool } from 'kysely';
import { MAX_SAFE_NS, validNvtxSql } from './validRows.js';
import type { ExportHandle, QueryOptions } from './handle.js';
import { NVTX_RANGE_EVENT_TYPES } from './schema.js';
import { pidOf } from './globalIds.js';

export interface NvtxQueryOptions extends QueryOptions {
  /** Event types to return (default: the range types 59, 60, 70, 71). */
  eventTypes?: readonly number[];
  /** Only ranges of this domain name (bound; `''` = the default domain, which has no name). */
  domain?: string;
  /** Only ranges whose resolved text equals this (bound). */
  text?: string;
}

/**
 * NVTX events with resolved text and domain name.
 * - text = `coalesce(StringIds.value via textId, text)` (registered strings live in StringIds);
 * - domain = text of the DomainCreate (eventType 75) row with the same `domainId` in the same
 *   process; null for the default domain and for domains whose create row is missing (trimmed
 *   exports).
 * `end` may be NULL (marks, ranges never closed). `rowId` is the NVTX_EVENTS rowid (nsys's RangeId).
 */
export function selectNvtxEvents(handle: ExportHandle, opts: NvtxQueryOptions = {}) {
  const types = opts.eventTypes ?? NVTX_RANGE_EVENT_TYPES;
  let q = handle.db
    .with('domains', (db) =>
      db
        .selectFrom('NVTX_EVENTS as dn')
        .leftJoin('StringIds as ds', 'ds.id', 'dn.textId')
        .select([
          'dn.domainId as domainId',
          pidOf('dn.globalTid').as('pid'),
          sql<string | null>`coalesce(ds.value, dn.text)`.as('name'),
        ])
        .where('dn.eventType', '=', 75)
        .groupBy(['dn.domainId', pidOf('dn.globalTid')]),
    )
    .selectFrom('NVTX_EVENTS as n')
    .leftJoin('StringIds as s', 's.id', 'n.textId')
    .leftJoin('domains as d', (join) =>
      join.onRef('d.domainId', '=', 'n.domainId').on(sql<SqlBool>`d.pid = ${pidOf('n.globalTid')}`),
    )
    .select([
      sql<number>`n.rowid`.as('rowId'),
      'n.start',
      'n.end',
      'n.eventType',
      'n.globalTid',
      'n.endGlobalTid',
      'n.domainId',
      'n.category',
      sql<string | null>`coalesce(s.value, n.text)`.as('text'),
      'd.name as domain',
    ])
    .where('n.eventType', 'in', [...types])
    .where(sql<SqlBool>`${sql.raw(validNvtxSql('n'))}`);
  if (opts.pid !== undefined) q = q.where(sql<SqlBool>`${pidOf('n.globalTid')} = ${opts.pid}`);
  if (opts.endNs !== undefined) q = q.where('n.start', '<', opts.endNs);
  if (opts.startNs !== undefined) q = q.where((eb) => eb.or([eb('n.end', 'is', null), eb('n.end', '>', opts.startNs!)]));
  if (opts.domain !== undefined) q = opts.domain === '' ? q.where('n.domainId', '=', 0) : q.where('d.name', '=', opts.domain);
  if (opts.text !== undefined) q = q.where(sql<SqlBool>`coalesce(s.value, n.text) = ${opts.text}`);
  return q;
}

/** The latest NVTX timestamp: where nsys ends ranges that were never closed. */
export function selectNvtxMaxTimestamp(handle: ExportHandle) {
  return handle.db
    .selectFrom('NVTX_EVENTS')
    // Integers only (NULL, TEXT and BLOB fail `<= MAX`, TEXT would be every max(); a REAL has a
    // fraction no range may end at): as `loadNvtxColumns` finds it.
    .select(
      sql<number | null>`max(coalesce(max(CASE WHEN "start" <= ${sql.raw(String(MAX_SAFE_NS))} AND CAST("start" AS INTEGER) = "start" THEN "start" END), 0), coalesce(max(CASE WHEN "end" <= ${sql.raw(String(MAX_SAFE_NS))} AND CAST("end" AS INTEGER) = "end" THEN "end" END), 0))`.as('maxTs'),
    );
}

/**
 * One row (`hit`) when some NVTX range's text is `text` (bound), inline or as a registered string
 * (`withStrings`: the export has `StringIds`).
 */
export function selectNvtxRangeWithText(handle: ExportHandle, text: string, withStrings: boolean) {
  return handle.db
    .selectFrom('NVTX_EVENTS as n')
    .select(sql<number>`1`.as('hit'))
    .where('n.eventType', 'in', [...NVTX_RANGE_EVENT_TYPES])
    .where((eb) =>
      withStrings ? eb.or([eb('n.text', '=', text), eb('n.textId', 'in', eb.selectFrom('StringIds').select('id').where('value', '=', text))]) : eb('n.text', '=', text),
    )
    .limit(1);
}

/**
 * Every NVTX range (the range event types) as plain ids and times, for grouping in JS without a
 * per-row join: eventType, domainId, pid, textId, text, start, end (NULL: never closed), and
 * `crossThread` (a start/end range that ended on another thread). Optionally one process.
 */
export function selectNvtxRangeRows(handle: ExportHandle, opts: Pick<QueryOptions, 'pid'> = {}) {
  let q = handle.db
    .selectFrom('NVTX_EVENTS')
    .select([
      'eventType',
      'domainId',
      pidOf('globalTid').as('pid'),
      'textId',
      'text',
      'start',
      'end',
      sql<number>`endGlobalTid IS NOT NULL AND endGlobalTid != globalTid`.as('crossThread'),
    ])
    .where('eventType', 'in', [...NVTX_RANGE_EVENT_TYPES])
    // Unusable times (validRows.ts): excluded here, counted by the summary.
    .where(sql<SqlBool>`${sql.raw(validNvtxSql())}`);
  if (opts.pid !== undefined) q = q.where(pidOf('globalTid'), '=', opts.pid);
  return q;
}

/** NVTX marks (instants, eventType 34), counted (one row, `n`). Optionally one process. */
export function selectNvtxMarkCount(handle: ExportHandle, opts: Pick<QueryOptions, 'pid'> = {}) {
  let q = handle.db.selectFrom('NVTX_EVENTS').select((eb) => eb.fn.countAll<number>().as('n')).where('eventType', '=', 34);
  if (opts.pid !== undefined) q = q.where(pidOf('globalTid'), '=', opts.pid);
  return q;
}
