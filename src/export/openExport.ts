import { closeSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { InputError } from '../errors.js';
import { convertKinetoTraceSync } from '../kineto/convert/convertSync.js';
import { detectInput } from './detectInput.js';
import { schemaErrorFromSqlite } from './contract.js';
import { flushExcludedRowNotes } from './excludedRows.js';
import { exportNotes } from './exportNotes.js';
import type { Database } from '../../queries/schema.js';
import type { ExportHandle, ExportMetadata } from '../../queries/handle.js';

/** What `openExport` / `openInput` give: an open export (the pipeline and the loader read it). */
export type { ExportHandle, ExportMetadata };
import { limitPageCache, listTablesAndViews, readMetadataRows, setQueryOnly, tableColumns } from '../../queries/probe.js';
import { resolveNsysReport } from './nsysRep.js';
import { hasNsysTables } from './nsysTables.js';

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

/**
 * Why SQLite would not read a file, in our words where its error code says (a file that is no
 * database at all, a damaged one), else SQLite's first line.
 */
function unreadableDatabase(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  if (code === 'SQLITE_NOTADB') return 'not an SQLite database (an nsys export, .nsys-rep or PyTorch-profiler JSON trace was expected)';
  if (code === 'SQLITE_CORRUPT') return 'a damaged SQLite database (export it again: nsys export --type sqlite --force-overwrite true)';
  return `not an SQLite database or damaged: ${sqliteMessage(err)}`;
}

/** A metadata table is read by its name/value columns: without them, as no metadata (contract.ts `OPTIONAL_COLUMNS`). */
function readableMetadataTable(sqlite: BetterSqlite3.Database, table: 'META_DATA_EXPORT' | 'EXPORT_META_DATA', tables: Set<string>): boolean {
  if (!tables.has(table)) return false;
  const names = tableColumns(sqlite, table).map((c) => c.name);
  return names.includes('name') && names.includes('value');
}

function readMetadata(sqlite: BetterSqlite3.Database, tables: Set<string>): ExportMetadata {
  const metadataTable = readableMetadataTable(sqlite, 'META_DATA_EXPORT', tables) ? 'META_DATA_EXPORT' : readableMetadataTable(sqlite, 'EXPORT_META_DATA', tables) ? 'EXPORT_META_DATA' : null;
  const values = new Map<string, string | null>();
  if (metadataTable) {
    for (const row of readMetadataRows(sqlite, metadataTable)) {
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
/** Largest WAL-mode export read into memory (Node's Buffer limit is 4 GiB). */
export const MAX_WAL_EXPORT_BYTES = 4 * 1024 * 1024 * 1024 - 1;

/**
 * Is the file in WAL mode (header bytes 18 and 19, the file format write/read versions, are 2)?
 * nsys writes rollback-journal files; a copy edited with the sqlite3 shell can be WAL.
 */
function isWalMode(path: string): boolean {
  const fd = openSync(path, 'r');
  try {
    const header = Buffer.alloc(20);
    return readSync(fd, header, 0, 20, 0) === 20 && header.subarray(0, 16).toString('latin1') === 'SQLite format 3\0' && (header[18] === 2 || header[19] === 2);
  } finally {
    closeSync(fd);
  }
}

/**
 * The read-only connection. A WAL-mode file opened by path would get `-shm` and `-wal` files
 * created beside it (even read-only), and this better-sqlite3 build has URI filenames off (no
 * `?immutable=1`), so such a file is read into memory instead, its header switched to rollback
 * mode in our copy (SQLite cannot deserialize a WAL-mode image): nothing is written beside the
 * input. As with `immutable=1`, the content of an existing `-wal` file is not read.
 */
function openReadOnly(path: string): BetterSqlite3.Database {
  if (!isWalMode(path)) return new BetterSqlite3(path, { readonly: true, fileMustExist: true });
  const size = statSync(path).size;
  if (size > MAX_WAL_EXPORT_BYTES) throw new Error(`a WAL-mode database above 4 GiB (${size} bytes) is not read; convert it with sqlite3 FILE 'PRAGMA journal_mode=DELETE'`);
  const image = readFileSync(path);
  image[18] = 1;
  image[19] = 1;
  return new BetterSqlite3(image, { readonly: true });
}

export function openExport(input: string): ExportHandle {
  // An .nsys-rep opens as its SQLite export (exported once with nsys, see nsysRep.ts).
  const path = resolveNsysReport(input);
  assertReadableFile(path);
  let sqlite: BetterSqlite3.Database;
  try {
    sqlite = openReadOnly(path);
  } catch (err) {
    throw new InputError('E_NOT_SQLITE', path, `cannot open as SQLite: ${sqliteMessage(err)}`);
  }
  const tables = new Set<string>();
  const columns = new Map<string, string[]>();
  const declaredTypes = new Map<string, Map<string, string>>();
  try {
    // query_only guards against any accidental write through this connection.
    setQueryOnly(sqlite);
    limitPageCache(sqlite);
    for (const name of listTablesAndViews(sqlite)) tables.add(name);
  } catch (err) {
    sqlite.close();
    throw new InputError('E_NOT_SQLITE', path, unreadableDatabase(err));
  }
  if (!hasNsysTables(tables)) {
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
      // `table` was checked against sqlite_master above (PRAGMA arguments cannot be bound).
      const info = tableColumns(sqlite, table);
      cols = info.map((c) => c.name);
      columns.set(table, cols);
      declaredTypes.set(table, new Map(info.map((c) => [c.name, c.type ?? ''])));
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
    declaredTypeOf: (t, c) => {
      columnsOf(t);
      return declaredTypes.get(t)?.get(c) ?? null;
    },
    close: () => {
      // Kysely's destroy() is async and would close the connection too; close directly.
      if (sqlite.open) sqlite.close();
    },
  };
}

/** What the caller of `openInput` / `withExport` will read. */
export interface InputReadOptions {
  /**
   * The tables the analyses run on the input read (`tablesReadBy`): a Kineto trace's conversion
   * then writes only those (every table when absent). An nsys export is opened whole either way.
   */
  tables?: readonly string[];
}

/**
 * Opens any input an analysis reads, decided by content (`detectInput`): an nsys SQLite export as
 * `openExport`; a PyTorch profiler (Kineto) trace, `.json` or `.json.gz`, converted into an
 * nsys-shaped database in os.tmpdir() (deleted on close) so every analysis runs on it unchanged;
 * an `.nsys-rep` report is an error that says how to export it. The handle's `path` is the input.
 */
export function openInput(path: string, opts: InputReadOptions = {}): ExportHandle {
  const kind = detectInput(path);
  // An .nsys-rep opens as its SQLite export (nsys on PATH, see nsysRep.ts; else a one-line error).
  if (kind === 'nsys-export' || kind === 'nsys-report') return openExport(path);
  const converted = convertKinetoTraceSync(path, opts.tables);
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
export function withExport<T>(path: string, fn: (handle: ExportHandle) => T, opts: InputReadOptions = {}): T {
  const handle = openInput(path, opts);
  try {
    const result = fn(handle);
    // Notes on the input and its excluded rows only with a result: an error stays the one line it is.
    flushExcludedRowNotes(handle, exportNotes(handle));
    return result;
  } catch (err) {
    if (isDamagedFileError(err)) throw new InputError('E_NOT_SQLITE', path, `damaged SQLite database: ${sqliteMessage(err)}`);
    // A table or column no declared contract (contract.ts) covers: still one line, not a crash.
    if (err instanceof BetterSqlite3.SqliteError && /^no such (column|table)/.test(err.message)) throw schemaErrorFromSqlite(handle, sqliteMessage(err));
    throw err;
  } finally {
    handle.close();
  }
}
