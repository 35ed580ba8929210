import { sql, type RawBuilder } from 'kysely';
import type { ExportHandle } from '../../queries/handle.js';

/**
 * Rows a damaged or edited export can hold that no analysis may sum: a NULL, TEXT or BLOB
 * `start`/`end`, `end < start` (a negative duration), or a time beyond 2^53 ns (a double cannot
 * hold it to the ns; one kernel "ending" at 2^62 would stretch every union and span). They are
 * excluded in SQL (an integer-type test per row is cheap there) and counted in a note, so no
 * NaN, Infinity or negative total reaches an output. nsys itself writes none of them; negative
 * starts (events before the session start) are real and kept.
 */
export { MAX_SAFE_NS, validIntervalSql, validNvtxSql } from '../../queries/validRows.js';
import { MAX_SAFE_NS, validIntervalSql, validNvtxSql } from '../../queries/validRows.js';

/** The same checks as kysely expressions (the SQL is ours: no user or export text in it). */
export const validInterval = (alias?: string): RawBuilder<boolean> => sql<boolean>`${sql.raw(validIntervalSql(alias))}`;
export const validNvtx = (alias?: string): RawBuilder<boolean> => sql<boolean>`${sql.raw(validNvtxSql(alias))}`;

/** The same test in JS, for the few rows a loader already holds (iteration ranges). */
export function isValidNvtxTimes(start: unknown, end: unknown): boolean {
  const ok = (t: unknown) => typeof t === 'number' && Math.abs(t) <= MAX_SAFE_NS;
  return ok(start) && (end === null || (ok(end) && (end as number) >= (start as number)));
}

const excluded = new WeakMap<ExportHandle, Map<string, number>>();

/** Records that `count` rows of `table` were excluded (the largest count per table is kept: loaders may scan a table twice). */
export function noteExcludedRows(handle: ExportHandle, table: string, count: number): void {
  if (!(count > 0)) return;
  let m = excluded.get(handle);
  if (!m) excluded.set(handle, (m = new Map()));
  m.set(table, Math.max(m.get(table) ?? 0, count));
}

/** One note per table with excluded rows, for the export's notes. */
export function excludedRowNotes(handle: ExportHandle): string[] {
  const m = excluded.get(handle);
  if (!m) return [];
  return [...m].map(
    ([table, n]) =>
      `${handle.path}: ${n} ${table} row${n > 1 ? 's' : ''} excluded: NULL, non-integer, end-before-start or beyond-2^53 start/end (a damaged or edited export; nsys writes none)`,
  );
}

/** Where the CLI wants such notes (stderr); set once by the CLI, unset in library use and workers. */
let sink: ((message: string) => void) | null = null;
export function setExcludedRowSink(fn: ((message: string) => void) | null): void {
  sink = fn;
}

/** Hands the export's notes (`first`, then its excluded rows) to the sink (called when the export is closed). */
export function flushExcludedRowNotes(handle: ExportHandle, first: readonly string[] = []): void {
  if (sink) for (const n of [...first, ...excludedRowNotes(handle)]) sink(n);
  excluded.delete(handle);
}
