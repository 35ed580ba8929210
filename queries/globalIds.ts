import { sql, type RawBuilder } from 'kysely';
import type { ExportHandle } from './handle.js';
import { allRows } from './run.js';

// nsys serializes ids into one 64-bit integer: the TID in bits 0-23, the PID in bits 24-47, higher
// ids above (a globalPid is the same with TID 0). These expressions unpack them in SQL, in one place.

/** A serialized id in a query: a column (name, optionally qualified), or a value bound in its place. */
export type IdSource = string | RawBuilder<number | bigint | null>;

/** The id as an SQL expression: the column referenced, or the bound value. */
export const idRef = (id: IdSource) => (typeof id === 'string' ? sql.ref(id) : id);

/** SQL for the PID packed in a serialized global id (globalTid or globalPid): `(id >> 24) & 0xFFFFFF`. */
export function pidOf(column: IdSource): RawBuilder<number> {
  return sql<number>`((${idRef(column)} >> 24) & 16777215)`;
}

/** SQL for the TID packed in a serialized globalTid: `id & 0xFFFFFF`. */
export function tidOf(column: IdSource): RawBuilder<number> {
  return sql<number>`(${idRef(column)} & 16777215)`;
}

/** SQL for pid and tid in one number, `pid * 2^24 + tid` (as `threadKey` computes it in JS). */
export function threadKeyOf(column: string): RawBuilder<number> {
  return sql<number>`(${pidOf(column)} * 16777216 + ${tidOf(column)})`;
}

/**
 * SQL for the process half of a globalTid, `id >> 24` (hardware, VM and PID bits): nsys joins a
 * GPU op to its API call on `op.globalPid = call.globalTid & ~0xFFFFFF`, i.e. on equal halves.
 */
export function processPartOf(column: string): RawBuilder<number | null> {
  return sql<number | null>`(${sql.ref(column)} >> 24)`;
}

/** `processPartOf` for a globalPid, NULL when its thread field is not 0 (such a row joins no call). */
export function processPartOfGlobalPid(column: IdSource): RawBuilder<number | null> {
  return sql<number | null>`CASE WHEN ${tidOf(column)} = 0 THEN ${idRef(column)} >> 24 END`;
}

/** The distinct process halves (`globalTid >> 24`) of the CUDA API calls, at most two. */
function apiProcessHalves(handle: ExportHandle): bigint[] {
  if (!handle.hasTable('CUPTI_ACTIVITY_KIND_RUNTIME')) return [];
  const q = handle.db.selectFrom('CUPTI_ACTIVITY_KIND_RUNTIME').select(sql<bigint>`globalTid >> 24`.as('hi')).distinct().limit(2);
  return allRows(handle, q, { safeIntegers: true }).map((r) => BigInt(r.hi));
}

/** How many processes called the CUDA API: 0, 1, or 2 meaning two or more. */
export function apiProcessCount(handle: ExportHandle): number {
  return apiProcessHalves(handle).length;
}

/**
 * The globalPid of a GPU table's rows: `column` (default `globalPid`, or qualified, `k.globalPid`)
 * or, when the table lacks it (an older or minimal export), the globalPid of the one process that
 * called the CUDA API, bound in its place (NULL without API calls): with one process, correlation
 * ids alone join the rows to their launches. Several such processes make that join ambiguous:
 * `requireContract` refuses the export before a query gets here.
 */
export function gpuRowGlobalPid(handle: ExportHandle, table: string, column = 'globalPid'): IdSource {
  if (handle.hasColumn(table, 'globalPid')) return column;
  const halves = apiProcessHalves(handle);
  return sql<bigint | null>`${halves.length === 1 ? halves[0] << 24n : null}`;
}

/** `gpuRowGlobalPid` as a select column named `globalPid`. */
export function globalPidColumn(handle: ExportHandle, table: string, column = 'globalPid') {
  return sql<number | null>`${idRef(gpuRowGlobalPid(handle, table, column))}`.as('globalPid');
}

/** The PID of the one process that called the CUDA API; null with none or several. */
export function soleApiProcessPid(handle: ExportHandle): number | null {
  const halves = apiProcessHalves(handle);
  return halves.length === 1 ? Number(halves[0] & 0xffffffn) : null;
}
