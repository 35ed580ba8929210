import { sql } from 'kysely';
import type { ExportHandle } from './handle.js';
import { forEachRow } from './run.js';
import { inJsonList } from './filters.js';
import { pidOf, tidOf } from './globalIds.js';
import { NVTX_RANGE_EVENT_TYPES } from './schema.js';

/** Registered-string ids and inline texts of NVTX ranges whose text satisfies `match`. */
export interface MatchingNvtxTexts {
  ids: number[];
  texts: string[];
}

/**
 * The texts that satisfy `match`, found by scanning the string table and the distinct inline
 * texts once (cheap: far fewer rows than NVTX_EVENTS), so the event scan below can filter in SQL.
 */
export function matchingNvtxTexts(handle: ExportHandle, match: (text: string) => boolean): MatchingNvtxTexts {
  const ids: number[] = [];
  const texts: string[] = [];
  if (!handle.hasTable('NVTX_EVENTS')) return { ids, texts };
  if (handle.hasTable('StringIds')) {
    forEachRow(handle, handle.db.selectFrom('StringIds').select(['id', 'value']), (id: number, value: string) => {
      if (match(value)) ids.push(id);
    });
  }
  forEachRow(
    handle,
    handle.db.selectFrom('NVTX_EVENTS').select('text').distinct().where('text', 'is not', null).where('eventType', 'in', [...NVTX_RANGE_EVENT_TYPES]),
    (text: string) => {
      if (match(text)) texts.push(text);
    },
  );
  return { ids, texts };
}

/**
 * Whether any NVTX range's text satisfies `match`: registered strings first, checked with one
 * `LIMIT 1` probe, so an export whose markers are registered strings (TensorRT-LLM) never pays
 * for the scan of inline texts.
 */
export function hasMatchingNvtxRange(handle: ExportHandle, match: (text: string) => boolean): boolean {
  if (!handle.hasTable('NVTX_EVENTS')) return false;
  if (handle.hasTable('StringIds')) {
    const ids: number[] = [];
    forEachRow(handle, handle.db.selectFrom('StringIds').select(['id', 'value']), (id: number, value: string) => {
      if (match(value)) ids.push(id);
    });
    if (ids.length) {
      const hit = handle.db
        .selectFrom('NVTX_EVENTS')
        .select(sql<number>`1`.as('hit'))
        .where('eventType', 'in', [...NVTX_RANGE_EVENT_TYPES])
        .where(sql<boolean>`textId IN ${inJsonList(ids)}`)
        .limit(1);
      let found = false;
      forEachRow(handle, hit, () => {
        found = true;
      });
      if (found) return true;
    }
  }
  let found = false;
  forEachRow(
    handle,
    handle.db.selectFrom('NVTX_EVENTS').select('text').distinct().where('text', 'is not', null).where('eventType', 'in', [...NVTX_RANGE_EVENT_TYPES]),
    (text: string) => {
      if (!found && match(text)) found = true;
    },
  );
  return found;
}

/** Callback of `forEachMatchingNvtxRange`: one range, its text resolved. */
export type NvtxRangeVisitor = (start: number, end: number | null, pid: number, tid: number, domainId: number | null, text: string) => void;

/**
 * `textId IN ids OR text IN texts`, each term only when its list has values; the id list's bounds
 * tested before it (a range test per row is cheaper than a probe of the list's index).
 */
function matchingTextTest(matching: MatchingNvtxTexts) {
  let low = Infinity;
  let high = -Infinity;
  for (const id of matching.ids) {
    if (id < low) low = id;
    if (id > high) high = id;
  }
  const byId = sql<boolean>`(textId BETWEEN ${low} AND ${high} AND textId IN ${inJsonList(matching.ids)})`;
  const byText = sql<boolean>`text IN ${inJsonList(matching.texts)}`;
  if (matching.texts.length === 0) return byId;
  return matching.ids.length === 0 ? byText : sql<boolean>`(${byId} OR ${byText})`;
}

/**
 * Every NVTX range (push/pop and start/end, both payload styles) whose textId is in `matching.ids`
 * or whose inline text is in `matching.texts`, by start, with its text resolved
 * (`coalesce(StringIds.value, text)`). The lists are bound as JSON parameters, never spliced into SQL.
 */
export function forEachMatchingNvtxRange(handle: ExportHandle, matching: MatchingNvtxTexts, visit: NvtxRangeVisitor): void {
  if (matching.ids.length === 0 && matching.texts.length === 0) return;
  const strings = new Map<number, string>();
  if (matching.ids.length) {
    forEachRow(
      handle,
      handle.db.selectFrom('StringIds').select(['id', 'value']).where(sql<boolean>`id IN ${inJsonList(matching.ids)}`),
      (id: number, value: string) => strings.set(id, value),
    );
  }
  forEachRow(
    handle,
    handle.db
      .selectFrom('NVTX_EVENTS')
      .select([
        'start',
        'end',
        pidOf('globalTid').as('pid'),
        tidOf('globalTid').as('tid'),
        'domainId',
        'textId',
        'text',
      ])
      // The text test first (SQLite tests the terms in order, and most rows fail it).
      .where(matchingTextTest(matching))
      .where('eventType', 'in', [...NVTX_RANGE_EVENT_TYPES])
      .orderBy('start'),
    (start: number, end: number | null, pid: number, tid: number, domainId: number | null, textId: number | null, text: string | null) => {
      visit(start, end, pid, tid, domainId, (textId != null ? strings.get(textId) : undefined) ?? text ?? '');
    },
  );
}

/** One NVTX range text and how many ranges carry it (`selectMostFrequentRangeTexts`). */
export interface RangeTextCount {
  text: string;
  count: number;
}

/**
 * The most frequent NVTX range texts (`coalesce(StringIds.value, text)`), most frequent first, ties
 * by text: what a user may pass as `--iteration-range` when no engine's markers are found.
 */
export function selectMostFrequentRangeTexts(handle: ExportHandle, limit: number) {
  const text = handle.hasTable('StringIds') ? sql<string>`coalesce(s.value, n.text)` : sql<string>`n.text`;
  let q = handle.db.selectFrom('NVTX_EVENTS as n');
  if (handle.hasTable('StringIds')) q = q.leftJoin('StringIds as s', 's.id', 'n.textId') as typeof q;
  return q
    .select([text.as('text'), sql<number>`count(*)`.as('count')])
    .where('n.eventType', 'in', [...NVTX_RANGE_EVENT_TYPES])
    .where(sql<boolean>`${text} IS NOT NULL`)
    .groupBy(text)
    .orderBy(sql`count(*)`, 'desc')
    .orderBy(text)
    .limit(limit);
}
