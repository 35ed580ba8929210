import { afterAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { listTablesAndViews, PAGE_CACHE_KIB, readMetadataRows, setQueryOnly, tableColumns } from '../../queries/probe.js';
import { countAllRows, countInvalidRows, validNvtxSql } from '../../queries/validRows.js';
import { countNonTextStrings } from '../../queries/strings.js';
import { NSYS_TABLE_DDL } from '../../queries/nsysDdl.js';
import { openExport } from '../../src/export/openExport.js';
import { buildMiniExport } from '../helpers/miniExport.js';
import { fixture } from '../helpers/fixtures.js';

const DENSE = fixture('pytorch-dense', 'trace.sqlite');
/** The export the converter's DDL was copied from (nsys 2025.3.2, schema 3.20.3). */
const TORCH_TRACE = fixture('pytorch-torch-trace', 'trace.sqlite');

const tmp = mkdtempSync(join(tmpdir(), 'iterscope-probe-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** The sqlite3 shell's answer (the oracle: another SQLite client than the one under test). */
function shell(file: string, command: string): string {
  return execFileSync('sqlite3', ['-readonly', file, command], { encoding: 'utf8' });
}

function withRaw<T>(file: string, fn: (db: BetterSqlite3.Database) => T): T {
  const db = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

describe('queries/probe (what openExport asks before a handle exists)', () => {
  it('lists the tables and views the sqlite3 shell lists', () => {
    const expected = shell(DENSE, '.tables').split(/\s+/).filter(Boolean).sort();
    expect(expected.length).toBeGreaterThan(10);
    expect(withRaw(DENSE, (db) => listTablesAndViews(db)).sort()).toEqual(expected);
  });

  it('reads the metadata rows nsys wrote', () => {
    const rows = withRaw(DENSE, (db) => [...readMetadataRows(db, 'META_DATA_EXPORT')]);
    const byName = new Map(rows.map((r) => [r.name, r.value]));
    expect(byName.get('EXPORT_SCHEMA_VERSION')).toBe(shell(DENSE, `SELECT value FROM META_DATA_EXPORT WHERE name = 'EXPORT_SCHEMA_VERSION'`).trim());
    expect(byName.get('EXPORT_PRODUCT_VERSION')).toBe('2025.3.2.0');
    expect(rows.length).toBe(Number(shell(DENSE, 'SELECT count(*) FROM META_DATA_EXPORT').trim()));
  });

  it('gives the columns and declared types the DDL declares, for every table the Kineto converter writes', () => {
    for (const [table, ddl] of Object.entries(NSYS_TABLE_DDL)) {
      // Column lines of the real DDL: 4 spaces, the name, the declared type.
      const declared = [...ddl.matchAll(/^ {4}(\w+)\s+(INTEGER|TEXT|REAL|BLOB|NUMERIC)\b/gm)].map((m) => ({ name: m[1], type: m[2] }));
      expect(declared.length, table).toBeGreaterThan(1);
      expect(withRaw(TORCH_TRACE, (db) => tableColumns(db, table)).map((c) => ({ name: c.name, type: c.type })), table).toEqual(declared);
    }
  });

  it('query_only makes a writable connection refuse writes', () => {
    const file = join(tmp, 'writable.sqlite');
    buildMiniExport(file, DENSE, { StringIds: [{ id: 1, value: 'a' }] });
    const db = new BetterSqlite3(file);
    try {
      setQueryOnly(db);
      expect(() => db.prepare(`INSERT INTO StringIds (id, value) VALUES (2, 'b')`).run()).toThrow(/readonly/i);
    } finally {
      db.close();
    }
    expect(shell(file, 'SELECT count(*) FROM StringIds').trim()).toBe('1');
  });

  it('an opened export reads through a 512 KiB page cache, and the setting stays in the connection', () => {
    const handle = openExport(DENSE);
    try {
      expect(handle.sqlite.pragma('cache_size', { simple: true })).toBe(-PAGE_CACHE_KIB);
      expect(PAGE_CACHE_KIB).toBe(512);
    } finally {
      handle.close();
    }
    // A fresh connection still has the build's default: nothing was written to the file.
    const raw = new BetterSqlite3(DENSE, { readonly: true });
    try {
      expect(raw.pragma('cache_size', { simple: true })).not.toBe(-PAGE_CACHE_KIB);
    } finally {
      raw.close();
    }
  });
});

describe('queries/validRows and strings counts', () => {
  it('count every row and the rows of one device on the dense export (56,503 kernels: fixture README)', () => {
    const handle = openExport(DENSE);
    try {
      expect(countAllRows(handle, 'CUPTI_ACTIVITY_KIND_KERNEL')).toBe(56503);
      expect(countAllRows(handle, 'CUPTI_ACTIVITY_KIND_KERNEL', 'deviceId = ?', [0])).toBe(Number(shell(DENSE, 'SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE deviceId = 0').trim()));
      expect(countAllRows(handle, 'CUPTI_ACTIVITY_KIND_KERNEL', 'deviceId = ?', [99])).toBe(0);
      expect(countInvalidRows(handle, 'NVTX_EVENTS', validNvtxSql())).toBe(0);
      expect(countNonTextStrings(handle)).toBe(0);
    } finally {
      handle.close();
    }
  });

  it('count NVTX rows with unusable times and non-text names on an edited export (real DDL)', () => {
    const file = join(tmp, 'edited.sqlite');
    buildMiniExport(file, DENSE, {
      StringIds: [
        { id: 1, value: 'ok' },
        { id: 2, value: Buffer.from([0xde, 0xad]) },
      ],
      NVTX_EVENTS: [
        { start: 10, end: 20, eventType: 59 },
        { start: 30, end: null, eventType: 34 },
        { start: 50, end: 40, eventType: 59 },
        { start: 60, end: 2n ** 62n, eventType: 59 },
      ],
      META_DATA_EXPORT: [{ name: 'EXPORT_SCHEMA_VERSION', value: '3.20.3' }],
    });
    const handle = openExport(file);
    try {
      expect(countInvalidRows(handle, 'NVTX_EVENTS', validNvtxSql())).toBe(2);
      expect(countAllRows(handle, 'NVTX_EVENTS')).toBe(4);
      expect(countNonTextStrings(handle)).toBe(1);
    } finally {
      handle.close();
    }
  });
});
