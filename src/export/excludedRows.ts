import type { ExportHandle } from '../../queries/handle.js';

/**
 * Rows a damaged or edited export can hold that no analysis may sum: a NULL, TEXT or BLOB
 * `start`/`end`, a REAL one (a fraction of a ns no output may print), `end < start` (a negative
 * duration), or a time beyond 2^53 ns (a double cannot hold it to the ns; one kernel "ending" at
 * 2^62 would stretch every union and span). They are excluded (in SQL, or in JS by the loaders
 * that read every row) and counted in a note, so no NaN, Infinity, fraction or negative total
 * reaches an output. nsys itself writes none of them; negative starts (events before the session
 * start) are real and kept. Rows excluded for another reason (a NULL `eventType`) are noted here too.
 */
export { MAX_SAFE_NS, validIntervalSql, validNvtxSql, isValidNvtxTimes } from '../../queries/validRows.js';

/** Why rows were excluded, as the note says it: by default their times. */
export const UNUSABLE_TIMES = 'NULL, non-integer, end-before-start or beyond-2^53 start/end';

/** Why kernels whose name column holds no StringIds id (TEXT, REAL: an edited export) were excluded. */
export const NON_INTEGER_NAME_ID = 'a name that is not an integer StringIds id (text or a fraction where nsys writes an id)';

/** Why rows of a table with one time per row (`column`: a sample's or an event's) were excluded. */
export function unusableTime(column: string): string {
  return `NULL, non-integer or beyond-2^53 ${column}`;
}

/** Rows of one table excluded for one reason (what crosses back from a worker thread's export). */
export interface ExcludedRows {
  table: string;
  count: number;
  why: string;
}

const excluded = new WeakMap<ExportHandle, Map<string, ExcludedRows>>();

/**
 * Records that `count` rows of `table` were excluded for `why` (the largest count per table and
 * reason is kept: loaders may scan a table twice, or a filtered part of it).
 */
export function noteExcludedRows(handle: ExportHandle, table: string, count: number, why: string = UNUSABLE_TIMES): void {
  if (!(count > 0)) return;
  let m = excluded.get(handle);
  if (!m) excluded.set(handle, (m = new Map()));
  const key = `${table}\u0000${why}`;
  m.set(key, { table, why, count: Math.max(m.get(key)?.count ?? 0, count) });
}

/** Other notes on how the export was read (the memory budget's), said once each with the excluded rows. */
const readNotes = new WeakMap<ExportHandle, Set<string>>();

/** Records a note on how the export was read (`text`, said once when the export is closed). */
export function noteOnRead(handle: ExportHandle, text: string): void {
  let s = readNotes.get(handle);
  if (!s) readNotes.set(handle, (s = new Set()));
  s.add(text);
}

/** The rows excluded so far from the export, per table and reason. */
export function excludedRows(handle: ExportHandle): ExcludedRows[] {
  return [...(excluded.get(handle)?.values() ?? [])];
}

/** One note per table and reason, for the export's notes. */
export function excludedRowNotes(handle: ExportHandle): string[] {
  return excludedRows(handle).map(
    ({ table, count: n, why }) => `${handle.path}: ${n} ${table} row${n > 1 ? 's' : ''} excluded: ${why} (a damaged or edited export; nsys writes none)`,
  );
}

/** Where the CLI wants such notes (stderr); set once by the CLI, unset in library use and workers. */
let sink: ((message: string) => void) | null = null;
export function setExcludedRowSink(fn: ((message: string) => void) | null): void {
  sink = fn;
}

/** Hands notes made elsewhere (an export read in a worker thread) to the sink. */
export function sayExcludedRowNotes(notes: readonly string[]): void {
  if (sink) for (const n of notes) sink(n);
}

/** Hands the export's notes (`first`, then its excluded rows) to the sink (called when the export is closed). */
export function flushExcludedRowNotes(handle: ExportHandle, first: readonly string[] = []): void {
  if (sink) for (const n of [...first, ...(readNotes.get(handle) ?? []), ...excludedRowNotes(handle)]) sink(n);
  excluded.delete(handle);
  readNotes.delete(handle);
}
