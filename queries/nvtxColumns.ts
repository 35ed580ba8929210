import { sql } from 'kysely';
import type { ExportHandle } from './handle.js';
import { processPartOf, tidOf } from './globalIds.js';

/**
 * Every row of NVTX_EVENTS, unfiltered (the reader tests the times itself, so one scan also counts
 * the unusable rows and finds nsys's end of time), in table order: rowId, start, end, eventType, pid, tid, domainId (0:
 * the default domain), textId, text, and `endTid`: 0 without `endGlobalTid`, 1 when it equals
 * `globalTid`, 2 when the range ended on another thread.
 *
 * `hi` is `globalTid >> 24` (the process with the bits above it: hardware and VM ids), as the
 * NVTX GPU projection joins threads; `pid` is its low 24 bits.
 */
export function selectNvtxColumnRows(handle: ExportHandle) {
  const hasEndTid = handle.hasColumn('NVTX_EVENTS', 'endGlobalTid');
  return handle.db
    .selectFrom('NVTX_EVENTS')
    .select([
      sql<number>`rowid`.as('rowId'),
      'start',
      'end',
      'eventType',
      processPartOf('globalTid').as('hi'),
      sql<number | null>`${tidOf('globalTid')}`.as('tid'),
      sql<number>`coalesce(domainId, 0)`.as('domainId'),
      'textId',
      'text',
      (hasEndTid ? sql<number>`CASE WHEN endGlobalTid IS NULL THEN 0 WHEN endGlobalTid = globalTid THEN 1 ELSE 2 END` : sql<number>`0`).as('endTid'),
    ]);
}
