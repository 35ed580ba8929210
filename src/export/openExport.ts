import { statSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { InputError, NsysReportError } from '../errors.js';
import { convertKinetoTraceSync } from '../kineto/convertSync.js';
import { detectInput } from './detectInput.js';
import type { Database } from '../../queries/schema.js';
import type { ExportHandle, ExportMetadata } from '../../queries/handle.js';
import { resolveNsysReport } from './nsysRep.js';

/** Tables whose presence marks a file as an nsys export (at least one, plus StringIds or metadata). */
const NSYS_MARKER_TABLES = [
  'META_DATA_EXPORT',
  'EXPORT_META_DATA',
  'CUPTI_ACTIVITY_KIND_KERNEL',
  'CUPTI_ACTIVITY_KIND_RUNTIME',
  'NVTX_EVENTS',
  'TARGET_INFO_SESSION_START_TIME',
  'ANALYSIS_DETAILS',
  'TARGET_INFO_GPU',
  'ThreadNames',
];

/** Checks the path before SQLite sees it, so each failure gets its own message. */
function assertReadableFile(path: string): void {
  let st;
  try {
    st = statSync(path);
  } catch {
    throw new InputError('E_INPUT_MISSING', path, 'no such file');
  }
  if (st.isDirectory()) throw new InputError('E_INPUT_NOT_FILE', path, 'is a directory, expected an nsys SQLite export (.sqlite)');
  if (!st.isFile()) throw new InputError('E_INPUT_NOT_FILE', path, 'is not a regular file');
  if (st.size === 0) throw new InputError('E_INPUT_EMPTY', path, 'is empty (0 bytes), expected an nsys SQLite export');
}

function sqliteMessage(err: unknown): string {
  const msg = err instanceof Error ? err.message : String(err);
  return msg.split('\n')[0];
}

function readMetadata(sqlite: BetterSqlite3.Database, tables: Set<string>): ExportMetadata {
  const metadataTable = tables.has('META_DATA_EXPORT') ? 'META_DATA_EXPORT' : tables.has('EXPORT_META_DATA') ? 'EXPORT_META_DATA' : null;
  const values = new Map<string, string | null>();
  if (metadataTable) {
    // Table name comes from our own constant, never from user input.
    for (const row of sqlite.prepare(`SELECT name, value FROM ${metadataTable}`).iterate() as Iterable<{ name: unknown; value: unknown }>) {
      const name = String(row.name);
      if (!values.has(name)) values.set(name, row.value == null ? null : String(row.value));
    }
  }
  return {
    productVersion: values.get('EXPORT_PRODUCT_VERSION') ?? null,
    schemaVersion: values.get('EXPORT_SCHEMA_VERSION') ?? null,
    metadataTable,
    values,
  };
}

/**
 * Opens an `nsys export --type sqlite` file read-only and probes what it holds.
 *
 * Never writes to the file (read-only connection, no pragmas that persist). Throws `InputError`
 * with a one-line message for a missing path, a directory, an empty file, a file that is not
 * SQLite, and an SQLite file that is not an nsys export. Any nsys table may be absent (exports are
 * lazy): callers ask `hasTable` / `hasColumn`.
 */
export function openExport(input: string): ExportHandle {
  // An .nsys-rep opens as its SQLite export (exported once with nsys, see nsysRep.ts).
  const path = resolveNsysReport(input);
  assertReadableFile(path);
  let sqlite: BetterSqlite3.Database;
  try {
    sqlite = new BetterSqlite3(path, { readonly: true, fileMustExist: true });
  } catch (err) {
    throw new InputError('E_NOT_SQLITE', path, `cannot open as SQLite: ${sqliteMessage(err)}`);
  }
  const tables = new Set<string>();
  const columns = new Map<string, string[]>();
  try {
    // query_only guards against any accidental write through this connection.
    sqlite.pragma('query_only = ON');
    for (const row of sqlite.prepare(`SELECT name FROM sqlite_master WHERE type IN ('table', 'view')`).iterate() as Iterable<{ name: string }>) {
      tables.add(row.name);
    }
  } catch (err) {
    sqlite.close();
    throw new InputError('E_NOT_SQLITE', path, `not an SQLite database or damaged: ${sqliteMessage(err)}`);
  }
  const isNsys = NSYS_MARKER_TABLES.some((t) => tables.has(t)) && (tables.has('StringIds') || tables.has('META_DATA_EXPORT') || tables.has('EXPORT_META_DATA'));
  if (!isNsys) {
    sqlite.close();
    throw new InputError('E_NOT_NSYS', path, tables.size === 0 ? 'SQLite database with no tables, not an nsys export' : 'SQLite database, but not an nsys export (no StringIds, metadata or CUPTI/NVTX tables)');
  }
  let metadata: ExportMetadata;
  try {
    metadata = readMetadata(sqlite, tables);
  } catch (err) {
    sqlite.close();
    throw new InputError('E_NOT_SQLITE', path, `cannot read export metadata: ${sqliteMessage(err)}`);
  }
  const columnsOf = (table: string): string[] => {
    if (!tables.has(table)) return [];
    let cols = columns.get(table);
    if (!cols) {
      // PRAGMA arguments cannot be bound; `table` was checked against sqlite_master above.
      cols = (sqlite.pragma(`table_info("${table.replace(/"/g, '""')}")`) as { name: string }[]).map((c) => c.name);
      columns.set(table, cols);
    }
    return cols;
  };
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
  return {
    path,
    sqlite,
    db,
    metadata,
    hasTable: (t) => tables.has(t),
    hasColumn: (t, c) => columnsOf(t).includes(c),
    columnsOf,
    close: () => {
      // Kysely's destroy() is async and would close the connection too; close directly.
      if (sqlite.open) sqlite.close();
    },
  };
}

/**
 * Opens any input an analysis reads, decided by content (`detectInput`): an nsys SQLite export as
 * `openExport`; a PyTorch profiler (Kineto) trace, `.json` or `.json.gz`, converted into an
 * nsys-shaped database in os.tmpdir() (deleted on close) so every analysis runs on it unchanged;
 * an `.nsys-rep` report is an error that says how to export it. The handle's `path` is the input.
 */
export function openInput(path: string): ExportHandle {
  const kind = detectInput(path);
  if (kind === 'nsys-report') {
    throw new NsysReportError(path, 'an Nsight Systems report (.nsys-rep), not an export: run `nsys export --type sqlite -o FILE.sqlite ' + 'REPORT.nsys-rep` and pass the .sqlite file');
  }
  if (kind === 'nsys-export') return openExport(path);
  const converted = convertKinetoTraceSync(path);
  let handle: ExportHandle;
  try {
    handle = openExport(converted.dbPath);
  } catch (err) {
    converted.remove();
    throw err;
  }
  return {
    ...handle,
    path,
    close: () => {
      handle.close();
      converted.remove();
    },
  };
}

/**
 * SQLite's verdict on a damaged file, met only once a query reads the broken pages (the schema
 * pages probed by `openExport` may be intact): corrupt pages, a truncated file, not a database.
 */
function isDamagedFileError(err: unknown): err is Error {
  return err instanceof BetterSqlite3.SqliteError && /^SQLITE_(CORRUPT|NOTADB|IOERR)/.test(err.code);
}

/**
 * Opens (any input `openInput` reads), runs `fn`, and always closes. A damaged export found while `fn` reads it becomes an
 * `InputError` (one line naming the file), like the damage `openExport` itself detects.
 */
export function withExport<T>(path: string, fn: (handle: ExportHandle) => T): T {
  const handle = openInput(path);
  try {
    return fn(handle);
  } catch (err) {
    if (isDamagedFileError(err)) throw new InputError('E_NOT_SQLITE', path, `damaged SQLite database: ${sqliteMessage(err)}`);
    throw err;
  } finally {
    handle.close();
  }
}
