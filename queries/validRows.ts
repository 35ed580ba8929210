import type { ExportHandle } from './handle.js';

/**
 * SQL tests for rows whose times an analysis can use (see src/export/excludedRows.ts for why):
 * integer `start`/`end`, `end >= start`, within +-(2^53 - 1) ns. Written by us, never from input.
 *
 * Comparisons, no typeof(): SQLite orders NULL < numbers < TEXT < BLOB, and a time column
 * has INTEGER affinity (a TEXT-declared one fails the contract first), so a NULL fails every
 * comparison, a TEXT or BLOB `end` fails `end <= MAX`, and a TEXT or BLOB `start` fails
 * `end >= start`. A REAL left in an INTEGER column has a fraction (an integral one is stored as
 * an INTEGER), which `CAST(t AS INTEGER) = t` finds: the fractional ns nsys never writes. On the
 * 651k kernels of pytorch-dense-long the comparisons cost ~5% of a bare scan, the casts ~35% more
 * (typeof() tests ~120%); the column loaders test in JS instead (`isValidInterval`).
 */
export const MAX_SAFE_NS = Number.MAX_SAFE_INTEGER;

/** `start`/`end` of a GPU op or API call (qualified by `alias` when given). */
export function validIntervalSql(alias?: string): string {
  const s = alias ? `${alias}."start"` : '"start"';
  const e = alias ? `${alias}."end"` : '"end"';
  return `(${s} >= -${MAX_SAFE_NS} AND ${e} <= ${MAX_SAFE_NS} AND ${e} >= ${s} AND CAST(${s} AS INTEGER) = ${s} AND CAST(${e} AS INTEGER) = ${e})`;
}

/**
 * `validIntervalSql` in JS, for loaders that read every row and test it themselves (and so count
 * the rows they leave out in the same scan): both times integers within +-(2^53 - 1), end not
 * before start. A NULL, REAL, TEXT or BLOB time (null, a fraction, string, Buffer here) fails, as in SQL.
 */
export function isValidInterval(start: unknown, end: unknown): boolean {
  // Math.trunc rather than Number.isSafeInteger: the same test at a third of the cost in V8 (per row, millions of rows).
  return typeof start === 'number' && typeof end === 'number' && start >= -MAX_SAFE_NS && end <= MAX_SAFE_NS && end >= start && Math.trunc(start) === start && Math.trunc(end) === end;
}

/** An integer number of ns within +-(2^53 - 1): what every time must be (as `isValidInterval` tests it). */
export function isTimeNs(t: unknown): t is number {
  return typeof t === 'number' && t >= -MAX_SAFE_NS && t <= MAX_SAFE_NS && Math.trunc(t) === t;
}

/** NVTX: `end` may be NULL (marks, ranges never closed). */
export function validNvtxSql(alias?: string): string {
  const s = alias ? `${alias}."start"` : '"start"';
  const e = alias ? `${alias}."end"` : '"end"';
  return `(${s} BETWEEN -${MAX_SAFE_NS} AND ${MAX_SAFE_NS} AND CAST(${s} AS INTEGER) = ${s} AND (${e} IS NULL OR (${e} <= ${MAX_SAFE_NS} AND ${e} >= ${s} AND CAST(${e} AS INTEGER) = ${e})))`;
}

/** `validNvtxSql` in JS: an integer start within +-(2^53 - 1), and no end or an integer end within range, not before it. */
export function isValidNvtxTimes(start: unknown, end: unknown): boolean {
  return isTimeNs(start) && (end === null || (isTimeNs(end) && end >= start));
}

const rowCounts = new WeakMap<ExportHandle, Map<string, number>>();

/**
 * Rows of `table` not passing `validSql`: one scan, for the commands where it is cheap enough.
 * Counted once per open export (the report's NVTX summary and GPU projection both ask).
 */
export function countInvalidRows(handle: ExportHandle, table: string, validSql: string): number {
  // `table` is one of our constants, checked with hasTable by the caller.
  // coalesce: the test is NULL (not false) for a NULL time, and NOT NULL would not count it.
  return cachedCount(handle, `invalid\u0000${table}\u0000${validSql}`, () => (handle.sqlite.prepare(`SELECT count(*) AS n FROM "${table}" WHERE NOT coalesce(${validSql}, 0)`).get() as { n: number }).n);
}

/** A count of an open export's rows, made once (exports are read-only: it cannot change). */
function cachedCount(handle: ExportHandle, key: string, count: () => number): number {
  let counts = rowCounts.get(handle);
  if (!counts) rowCounts.set(handle, (counts = new Map()));
  let n = counts.get(key);
  if (n === undefined) counts.set(key, (n = count()));
  return n;
}

/** Rows of `table` whose `column` is NULL (both ours, checked by the caller), counted once per open export. */
export function countNullRows(handle: ExportHandle, table: string, column: string): number {
  return cachedCount(handle, `null\u0000${table}\u0000${column}`, () => (handle.sqlite.prepare(`SELECT count(*) AS n FROM "${table}" WHERE "${column}" IS NULL`).get() as { n: number }).n);
}

/**
 * Records that `table` has `rows` rows, counted by a loader that read every one of them, so a
 * later `countAllRows(handle, table)` (`info`, the projection's checks) costs no scan.
 */
export function recordRowCount(handle: ExportHandle, table: string, rows: number): void {
  let counts = rowCounts.get(handle);
  if (!counts) rowCounts.set(handle, (counts = new Map()));
  counts.set(allRowsKey(table, '1', []), rows);
}

const allRowsKey = (table: string, where: string, params: unknown[]) => `all\u0000${table}\u0000${where}\u0000${JSON.stringify(params)}`;

/** All rows of `table` (a b-tree count: no row is decoded); `where` is our own SQL with bound `params`. */
export function countAllRows(handle: ExportHandle, table: string, where = '1', params: unknown[] = []): number {
  // Counted once per open export: the GPU-op loader, the kernel summary and `info` ask for the same tables.
  return cachedCount(handle, allRowsKey(table, where, params), () => (handle.sqlite.prepare(`SELECT count(*) AS n FROM "${table}" WHERE ${where}`).get(...params) as { n: number }).n);
}
