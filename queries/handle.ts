import type BetterSqlite3 from 'better-sqlite3';
import type { Kysely } from 'kysely';
import type { Database, TableName } from './schema.js';

/** What nsys and the export file say about themselves (META_DATA_EXPORT / EXPORT_META_DATA). */
export interface ExportMetadata {
  /** e.g. `2025.3.2.0`; null when the export has no metadata table (pre-2022). */
  productVersion: string | null;
  /** e.g. `3.20.3`. */
  schemaVersion: string | null;
  /** Which metadata table the export has. */
  metadataTable: 'META_DATA_EXPORT' | 'EXPORT_META_DATA' | null;
  /** All name/value rows (first value wins for repeated names). */
  values: Map<string, string | null>;
}

/**
 * An opened export: the raw better-sqlite3 connection (for streaming with `iterate()`), a typed
 * Kysely instance over it, and what tables and columns this nsys version wrote.
 */
export interface ExportHandle {
  readonly path: string;
  readonly sqlite: BetterSqlite3.Database;
  readonly db: Kysely<Database>;
  readonly metadata: ExportMetadata;
  hasTable(table: TableName | string): boolean;
  hasColumn(table: TableName | string, column: string): boolean;
  /** Column names of a table, in declaration order ([] when absent). */
  columnsOf(table: TableName | string): readonly string[];
  /** The declared type of a column as written in its CREATE TABLE (`INTEGER`, `TEXT`, ''), or null when absent. */
  declaredTypeOf?(table: TableName | string, column: string): string | null;
  close(): void;
}

/** Filters most queries accept. Every value is bound as a parameter. */
export interface QueryOptions {
  /** OS process id (the PID part of globalPid / globalTid). */
  pid?: number;
  /** CUDA device id (GPU tables only). */
  deviceId?: number;
  /** Keep rows that overlap [startNs, endNs) in session time. */
  startNs?: number;
  endNs?: number;
}
