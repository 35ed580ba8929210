import { sql, type RawBuilder } from 'kysely';
import type { ExportHandle } from './handle.js';

/**
 * A column the export may lack (src/export/contract.ts `OPTIONAL_COLUMNS`): the column itself, or
 * NULL, so a lean export (a `TARGET_INFO_GPU` of `id, name` only) reads as one whose values are
 * unknown instead of failing with SQLite's "no such column". `ref` qualifies it (`t.priority`)
 * where the query joins; the caller names it with `.as(column)`.
 */
export function columnOrNull<T = unknown>(handle: ExportHandle, table: string, column: string, ref: string = column): RawBuilder<T | null> {
  return handle.hasColumn(table, column) ? sql<T | null>`${sql.ref(ref)}` : sql<T | null>`NULL`;
}

/** Whether the table is there with every one of `columns` (a table without them is read as absent). */
export function hasColumns(handle: ExportHandle, table: string, columns: readonly string[]): boolean {
  return handle.hasTable(table) && columns.every((c) => handle.hasColumn(table, c));
}
