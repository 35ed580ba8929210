import { validNvtxSql } from './validRows.js';
import { sql } from 'kysely';
import type { ExportHandle } from './handle.js';
import { inJsonList } from './filters.js';
import { pidOf, threadKeyOf, tidOf } from './globalIds.js';
import { NVTX_RANGE_EVENT_TYPES } from './schema.js';

// The NVTX ranges behind the host-side causes of GPU idle time (GC, GIL, named ranges of the
// launching threads) and the GC/GIL summary. Names arrive from the caller and are bound.

export interface HostCauseRangeFilter {
  /** `Python GC`: its ranges are read on every thread. */
  gcRange: string;
  /** `Holding GIL`: left out in the GIL domains (most of a GIL-traced export's rows). */
  gilHoldRange: string;
  /** Domain ids named `GIL Trace` (none: no GIL filter). */
  gilDomainIds: readonly number[];
  /** StringIds ids of `gilHoldRange` and of `gcRange`. */
  holdTextIds: readonly number[];
  gcTextIds: readonly number[];
  /** `pid * 2^24 + tid` of the threads whose ranges are read. */
  threadKeys: readonly number[];
}

/**
 * NVTX ranges for the gap causes: pid, tid, eventType, domainId, textId, text, start, end,
 * crossThread; the ranges of the given threads and `gcRange` ranges of any thread, without the
 * GIL domains' `gilHoldRange` ranges.
 */
export function selectHostCauseRanges(handle: ExportHandle, f: HostCauseRangeFilter) {
  let q = handle.db.selectFrom('NVTX_EVENTS').select([
    pidOf('globalTid').as('pid'),
    tidOf('globalTid').as('tid'),
    'eventType',
    'domainId',
    'textId',
    'text',
    'start',
    'end',
    sql<number>`endGlobalTid IS NOT NULL AND endGlobalTid != globalTid`.as('crossThread'),
  ]);
  if (f.gilDomainIds.length) {
    // First, with short bound lists: `Holding GIL` is most of a GIL-traced export's rows (99% of
    // dense-long's), and SQLite tests the terms in this order, so the rest runs on few rows
    // (3.5x faster on the 10x bench export). Two-valued on purpose: NULL textId/text must not
    // turn the whole test NULL (row dropped).
    const isHold = f.holdTextIds.length
      ? sql`(coalesce(textId, -1) IN (${sql.join([...f.holdTextIds])}) OR text IS ${f.gilHoldRange})`
      : sql`text IS ${f.gilHoldRange}`;
    q = q.where(sql<boolean>`NOT (coalesce(domainId, 0) IN (${sql.join([...f.gilDomainIds])}) AND ${isHold})`);
  }
  return q
    .where('eventType', 'in', [...NVTX_RANGE_EVENT_TYPES])
    .where(
      sql<boolean>`(${threadKeyOf('globalTid')} IN ${inJsonList(f.threadKeys)} OR coalesce(textId, -1) IN ${inJsonList(f.gcTextIds)} OR text IS ${f.gcRange})`,
    )
    // Last (SQLite tests the terms in order): unusable times (validRows.ts) never become a cause.
    .where(sql<boolean>`${sql.raw(validNvtxSql())}`);
}

/**
 * NVTX ranges whose text is one of `texts` (inline) or whose textId is one of `textIds`
 * (registered strings): pid, tid, domainId (0: default), textId, text, start, end. Columns the
 * export lacks (`hasTextId`/`hasText` false) read as NULL and are not tested; null when nothing
 * can match.
 */
export function selectNvtxRangesNamed(handle: ExportHandle, opts: { textIds: readonly number[]; texts: readonly string[]; hasTextId: boolean; hasText: boolean }) {
  const byId = opts.hasTextId && opts.textIds.length > 0;
  if (!byId && !opts.hasText) return null;
  return handle.db
    .selectFrom('NVTX_EVENTS as n')
    .select([
      pidOf('n.globalTid').as('pid'),
      tidOf('n.globalTid').as('tid'),
      sql<number>`coalesce(n.domainId, 0)`.as('domainId'),
      (opts.hasTextId ? sql<number | null>`n.textId` : sql<number | null>`NULL`).as('textId'),
      (opts.hasText ? sql<string | null>`n.text` : sql<string | null>`NULL`).as('text'),
      'n.start as start',
      'n.end as end',
    ])
    .where('n.eventType', 'in', [...NVTX_RANGE_EVENT_TYPES])
    .where((eb) => {
      const terms = [];
      if (byId) terms.push(eb('n.textId', 'in', [...opts.textIds]));
      if (opts.hasText) terms.push(eb('n.text', 'in', [...opts.texts]));
      return eb.or(terms);
    })
    .where(sql<boolean>`${sql.raw(validNvtxSql('n'))}`);
}
