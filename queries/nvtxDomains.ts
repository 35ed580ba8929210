import { validNvtxSql } from './validRows.js';
import { sql } from 'kysely';
import type { ExportHandle } from './handle.js';
import { pidOf } from './globalIds.js';
import { NVTX_RANGE_EVENT_TYPES } from './schema.js';

/**
 * The NVTX DomainCreate rows (eventType 75) that name the domains: domainId, pid, start, textId,
 * text. The name is `coalesce(StringIds.value via textId, text)`, resolved by the caller.
 */
export function selectNvtxDomainCreates(handle: ExportHandle) {
  return handle.db.selectFrom('NVTX_EVENTS').select(['domainId', pidOf('globalTid').as('pid'), 'start', 'textId', 'text']).where('eventType', '=', 75).where(sql<boolean>`${sql.raw(validNvtxSql())}`);
}

/**
 * NVTX ranges (every range event type) per (domain, process), in (pid, domainId) order:
 * `domainId` (0 for the default domain), `pid`, `ranges`. Integer-only grouping, no text.
 */
export function selectNvtxRangeCountsByDomain(handle: ExportHandle) {
  return handle.db
    .selectFrom('NVTX_EVENTS')
    .select([sql<number>`coalesce(domainId, 0)`.as('domainId'), pidOf('globalTid').as('pid'), sql<number>`count(*)`.as('ranges')])
    .where('eventType', 'in', [...NVTX_RANGE_EVENT_TYPES])
    .groupBy([sql`1`, sql`2`])
    .orderBy(sql`2`)
    .orderBy(sql`1`);
}

/**
 * Every NVTX row's event type, domain (0 for the default domain, as `selectNvtxRangeCountsByDomain`
 * groups it), pid and times, and a DomainCreate row's name (its text id and text; NULL on every
 * other row), in table order: `info`'s one scan of the table when the NVTX columns are not read (the
 * ranges per domain, the domains' names, the span of the usable rows and the row count together).
 */
export function selectNvtxInfoRows(handle: ExportHandle) {
  return handle.db
    .selectFrom('NVTX_EVENTS')
    .select([
      'eventType',
      sql<number>`coalesce(domainId, 0)`.as('domainId'),
      pidOf('globalTid').as('pid'),
      'start',
      'end',
      sql<number | null>`CASE WHEN eventType = 75 THEN textId END`.as('createTextId'),
      sql<string | null>`CASE WHEN eventType = 75 THEN text END`.as('createText'),
    ]);
}
