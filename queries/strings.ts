import { sql } from 'kysely';
import type { ExportHandle } from './handle.js';
import { inJsonList } from './filters.js';
import { forEachRow, iterateQuery, prepareQuery } from './run.js';

/** `StringIds` rows (interned kernel names, API names, registered NVTX strings, thread names). */
export function selectStrings(handle: ExportHandle) {
  return handle.db.selectFrom('StringIds').select(['id', 'value']);
}

/** Resolves a set of string ids in one pass over `StringIds`. */
export function loadStrings(handle: ExportHandle, ids: Iterable<number>): Map<number, string> {
  const wanted = new Set(ids);
  const out = new Map<number, string>();
  if (!handle.hasTable('StringIds') || wanted.size === 0) return out;
  for (const row of iterateQuery(handle, selectStrings(handle))) {
    if (wanted.has(row.id)) out.set(row.id, row.value);
  }
  return out;
}

/**
 * The values of `ids` (NULL as null; an id without a row is absent), in one query: the ids bound
 * as one JSON list, each a primary-key lookup. For the few hundred or thousand distinct ids a
 * scan met (registered NVTX strings), where a lookup per id costs a statement call each.
 */
export function loadStringsById(handle: ExportHandle, ids: Iterable<number>): Map<number, string | null> {
  const out = new Map<number, string | null>();
  const list = [...ids];
  if (!handle.hasTable('StringIds') || list.length === 0) return out;
  forEachRow(handle, selectStrings(handle).where(sql<boolean>`id IN ${inJsonList(list)}`), (id: number, value: string | null) => out.set(id, value));
  return out;
}

/**
 * A cached lookup of single string ids by primary key, for the few distinct ids met while
 * scanning millions of rows (kernel names during attribution): cheaper than a pass over the
 * rows' distinct ids in SQL. Unknown ids (or no StringIds table) give undefined.
 */
export function stringLookup(handle: ExportHandle): (id: number) => string | undefined {
  const cache = new Map<number, string | undefined>();
  if (!handle.hasTable('StringIds')) return () => undefined;
  const { stmt } = prepareQuery(handle, selectStrings(handle).where('id', '=', 0));
  stmt.raw(true);
  return (id) => {
    if (cache.has(id)) return cache.get(id);
    const row = stmt.get(id) as [number, string] | undefined;
    cache.set(id, row?.[1]);
    return row?.[1];
  };
}

/** The `StringIds` rows whose value is one of `values` (bound): ids of registered NVTX names. */
export function selectStringIdsOf(handle: ExportHandle, values: readonly string[]) {
  return selectStrings(handle).where('value', 'in', [...values]);
}

/** `StringIds` rows whose value is neither text nor NULL (a BLOB or number: a damaged export). */
export function countNonTextStrings(handle: ExportHandle): number {
  return (handle.sqlite.prepare(`SELECT count(*) AS n FROM StringIds WHERE typeof(value) NOT IN ('text', 'null')`).get() as { n: number }).n;
}
