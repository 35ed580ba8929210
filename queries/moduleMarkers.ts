import { sql } from 'kysely';
import type { ExportHandle } from './handle.js';
import { pidOf, tidOf } from './globalIds.js';
import { NVTX_RANGE_EVENT_TYPES } from './schema.js';
import { validNvtxSql } from './validRows.js';

// The NVTX ranges the layer attribution reads of a module-marker capture (SGLang's
// `--enable-layerwise-nvtx-marker`, vLLM's `--enable-layerwise-nvtx-tracing`: one range per module
// forward, named by a dict repr `{'Module': ...}`). Texts are matched by prefix as a range of
// strings (`value >= prefix AND value < prefix + U+FFFF`): exact case, and measured 3x faster than
// LIKE with an OR'd textId subquery on pytorch-dense-long's 848k NVTX rows (170 ms, the bare scan).

/** Upper bound of the strings starting with `prefix`. */
const beyond = (prefix: string) => `${prefix}\uffff`;

/** `column` starts with one of `prefixes` (a range of strings each). */
const startsWithAny = (column: string, prefixes: readonly string[]) =>
  sql<boolean>`(${sql.join(prefixes.map((p) => sql`(${sql.ref(column)} >= ${p} AND ${sql.ref(column)} < ${beyond(p)})`), sql` OR `)})`;

/** StringIds ids whose value starts with one of `prefixes`. */
export function selectStringIdsWithPrefix(handle: ExportHandle, prefixes: readonly string[]) {
  return handle.db.selectFrom('StringIds').select('id').where(startsWithAny('value', prefixes));
}

/**
 * Closed NVTX ranges whose inline `text` starts with one of `prefixes`, or whose `textId` is one of
 * `textIds` (registered strings): pid, tid, start, end, text (NULL for a registered one: the
 * caller resolves its id), textId.
 */
export function selectModuleMarkerRanges(handle: ExportHandle, opts: { prefixes: readonly string[]; textIds: readonly number[]; hasTextId: boolean; hasText: boolean }) {
  const byText = opts.hasText ? startsWithAny('n.text', opts.prefixes) : sql<boolean>`0`;
  const byId = opts.hasTextId && opts.textIds.length ? sql<boolean>`n.textId IN (${sql.join([...opts.textIds])})` : sql<boolean>`0`;
  return handle.db
    .selectFrom('NVTX_EVENTS as n')
    .select([
      pidOf('n.globalTid').as('pid'),
      tidOf('n.globalTid').as('tid'),
      'n.start as start',
      'n.end as end',
      (opts.hasText ? sql<string | null>`n.text` : sql<string | null>`NULL`).as('text'),
      (opts.hasTextId ? sql<number | null>`n.textId` : sql<number | null>`NULL`).as('textId'),
    ])
    .where(opts.textIds.length ? sql<boolean>`(${byText} OR ${byId})` : byText)
    .where('n.eventType', 'in', [...NVTX_RANGE_EVENT_TYPES])
    .where(sql<boolean>`n.end IS NOT NULL`)
    .where(sql<boolean>`${sql.raw(validNvtxSql('n'))}`);
}
