import type BetterSqlite3 from 'better-sqlite3';

// What `openExport` asks a file before an `ExportHandle` exists: these take the raw better-sqlite3
// connection. Table names are either our own constants or names read from sqlite_master, never
// user text.

/** Makes the connection refuse writes: a guard against any accidental write (nothing persists). */
export function setQueryOnly(sqlite: BetterSqlite3.Database): void {
  sqlite.pragma('query_only = ON');
}

/** Names of every table and view in the file (the first read: it fails on a file that is not SQLite). */
export function listTablesAndViews(sqlite: BetterSqlite3.Database): string[] {
  return (sqlite.prepare(`SELECT name FROM sqlite_master WHERE type IN ('table', 'view')`).all() as { name: string }[]).map((row) => row.name);
}

/** The name/value rows of the export's metadata table, in table order (repeated names included). */
export function readMetadataRows(
  sqlite: BetterSqlite3.Database,
  metadataTable: 'META_DATA_EXPORT' | 'EXPORT_META_DATA',
): Iterable<{ name: unknown; value: unknown }> {
  // Table name comes from our own constant, never from user input.
  return sqlite.prepare(`SELECT name, value FROM ${metadataTable}`).iterate() as Iterable<{ name: unknown; value: unknown }>;
}

/** Columns of `table` in declaration order with their declared type (`INTEGER`, `TEXT`, ''). */
export function tableColumns(sqlite: BetterSqlite3.Database, table: string): { name: string; type: string }[] {
  // PRAGMA arguments cannot be bound; callers pass a name checked against sqlite_master.
  return sqlite.pragma(`table_info("${table.replace(/"/g, '""')}")`) as { name: string; type: string }[];
}
