import { sql } from 'kysely';
import type { ExportHandle } from './handle.js';
import { processPartOf, tidOf } from './globalIds.js';
import { NVTX_RANGE_EVENT_TYPES } from './schema.js';

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

/** Which GIL-domain ranges `selectNvtxHostCauseColumnRows` leaves out: the holds. */
export interface GilHoldFilter {
  /** Domain ids named `GIL Trace` (none: nothing left out). */
  gilDomainIds: readonly number[];
  /** `Holding GIL`, as inline text. */
  gilHoldRange: string;
  /** StringIds ids whose value is `gilHoldRange`. */
  holdTextIds: readonly number[];
}

/**
 * `selectNvtxColumnRows`' columns of the rows that can be a host cause of GPU idle time: ranges,
 * without the GIL domains' holds (99% of a GIL-traced export's rows). A superset: a hold is left
 * out only when its text is certain (a registered `gilHoldRange`, or no text id and the inline
 * text), the reader applies the exact rule (coalesce of the two) to what comes back; ranges
 * without a thread (no host cause) are kept, so the rows hold every range but the holds (the
 * iteration ranges are found among them, see `hostCauseScanOf`).
 */
export function selectNvtxHostCauseColumnRows(handle: ExportHandle, f: GilHoldFilter) {
  let q = selectNvtxColumnRows(handle);
  if (f.gilDomainIds.length) {
    // First (SQLite tests the terms in order): the holds are most rows. Two-valued on purpose:
    // NULL textId/text must not turn the whole test NULL (row dropped).
    const registered = f.holdTextIds.length ? sql`coalesce(textId, -1) IN (${sql.join([...f.holdTextIds])})` : sql`0`;
    q = q.where(sql<boolean>`NOT (coalesce(domainId, 0) IN (${sql.join([...f.gilDomainIds])}) AND (${registered} OR (textId IS NULL AND text IS ${f.gilHoldRange})))`);
  }
  return q.where('eventType', 'in', [...NVTX_RANGE_EVENT_TYPES]);
}
