import { sql } from 'kysely';
import type { ExportHandle } from './handle.js';
import { pidOf, tidOf } from './globalIds.js';
import { NVTX_RANGE_EVENT_TYPES } from './schema.js';
import { validNvtxSql } from './validRows.js';

/**
 * Closed NVTX ranges whose text starts with `prefix` (inline `text`, or a registered string via
 * `textId`): pid, tid, start, end, text. What the layer attribution reads of a module-marker
 * capture (SGLang's `--enable-layerwise-nvtx-marker`, vLLM's `--enable-layerwise-nvtx-tracing`:
 * one range per module forward named by a dict repr `{'Module': ...}`). The prefix is bound, and
 * matched with LIKE (no `%` or `_` of its own is expected: the callers' prefixes have none).
 */
export function selectModuleMarkerRanges(handle: ExportHandle, opts: { prefix: string; hasTextId: boolean; hasText: boolean; hasStrings: boolean }) {
  const like = `${opts.prefix}%`;
  const byText = opts.hasText ? sql<boolean>`n.text LIKE ${like}` : sql<boolean>`0`;
  const byId = opts.hasTextId && opts.hasStrings ? sql<boolean>`n.textId IN (SELECT id FROM StringIds WHERE value LIKE ${like})` : sql<boolean>`0`;
  const text = opts.hasTextId && opts.hasStrings
    ? sql<string | null>`coalesce((SELECT value FROM StringIds s WHERE s.id = n.textId), ${opts.hasText ? sql`n.text` : sql`NULL`})`
    : opts.hasText ? sql<string | null>`n.text` : sql<string | null>`NULL`;
  return handle.db
    .selectFrom('NVTX_EVENTS as n')
    .select([pidOf('n.globalTid').as('pid'), tidOf('n.globalTid').as('tid'), 'n.start as start', 'n.end as end', text.as('text')])
    .where('n.eventType', 'in', [...NVTX_RANGE_EVENT_TYPES])
    .where(sql<boolean>`(${byText} OR ${byId})`)
    .where(sql<boolean>`n.end IS NOT NULL`)
    .where(sql<boolean>`${sql.raw(validNvtxSql('n'))}`);
}
