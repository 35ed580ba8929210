import type BetterSqlite3 from 'better-sqlite3';

// What `openExport` asks a file before an `ExportHandle` exists: these take the raw better-sqlite3
// connection. Table names are either our own constants or names read from sqlite_master, never
// user text.

/** Makes the connection refuse writes: a guard against any accidental write (nothing persists). */
export function setQueryOnly(sqlite: BetterSqlite3.Database): void {
  sqlite.pragma('query_only = ON');
}

/**
 * SQLite's page cache of this connection, in KiB: 512 (SQLite's own default is 2000, this
 * better-sqlite3 build's 16000). The large reads are scans that read each page once in rowid order
 * (and lookups in a table of a few thousand strings), so cached pages are hardly read twice, while
 * each page the cache first takes is a page of memory the process touches for the first time:
 * 16 MB per connection, the main thread's and the NVTX worker's. Measured on pytorch-dense-long
 * (2 cores, A/B of alternating runs, CPU): `report` 0.93x, `kernels` 0.84x, `nvtx --gpu` 0.91x;
 * below 512 KiB no further gain. The few queries that sort (a converted Kineto trace's aten ops,
 * GPU metrics out of time order) keep up to 1 MB in memory instead of 16 before SQLite spills to
 * a temporary file: `report` on a 50 MB Kineto trace 0.994x. Per connection, nothing persists in
 * the file.
 */
export const PAGE_CACHE_KIB = 512;

/** Sets this connection's page cache to `PAGE_CACHE_KIB` (see there why). */
export function limitPageCache(sqlite: BetterSqlite3.Database): void {
  sqlite.pragma(`cache_size = -${PAGE_CACHE_KIB}`);
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
