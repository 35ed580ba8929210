/**
 * The NVTX column scan visits every row of NVTX_EVENTS, so it records the table's row count for
 * `info`: on a large export the columns are let go before `info` runs, and a count(*) of the 10x
 * bench export's 8.5M rows cost 0.45 s. The count is the table's, damaged rows included.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { withExport } from '../../src/export/openExport.js';
import { analyzeExport } from '../../src/pipeline/analyzeExport.js';
import { copyExport, editExport } from '../helpers/hostileExport.js';
import { fixture } from '../helpers/fixtures.js';

const tmp = mkdtempSync(join(tmpdir(), 'iterscope-nvtxcount-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** `info`'s NVTX_EVENTS count with the columns let go first, and the count(*) queries prepared meanwhile. */
function infoAfterRelease(file: string) {
  return withExport(file, (h) => {
    const sqlite = h.sqlite as unknown as { prepare: (sql: string) => unknown };
    const prepare = sqlite.prepare;
    const counts: string[] = [];
    sqlite.prepare = function (this: unknown, text: string) {
      // countAllRows' statement (queries/validRows.ts): the table's rows, no filter.
      if (/^SELECT count\(\*\) AS n FROM "NVTX_EVENTS" WHERE 1$/.test(text)) counts.push(text);
      return prepare.call(this, text);
    };
    try {
      const a = analyzeExport(h, { parts: ['info', 'nvtx'], nvtxRead: 'release' });
      return { rows: a.info!.rowCounts.NVTX_EVENTS, counts };
    } finally {
      sqlite.prepare = prepare;
    }
  });
}

const countAll = (file: string) => {
  const db = new Database(file, { readonly: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM NVTX_EVENTS').get() as { n: number }).n;
  } finally {
    db.close();
  }
};

describe('NVTX_EVENTS row count from the column scan', () => {
  it('pytorch-dense: info after the columns were let go counts every row, with no count(*) of its own', () => {
    const file = fixture('pytorch-dense', 'trace.sqlite');
    const got = infoAfterRelease(file);
    expect(got.rows).toBe(countAll(file));
    expect(got.rows).toBeGreaterThan(100_000);
    expect(got.counts, got.counts.join('\n')).toEqual([]);
  });

  it('rows the columns leave out (unusable start) are still rows of the table', () => {
    const path = editExport(copyExport(fixture('pytorch-dense', 'trace.sqlite'), join(tmp, 'damaged.sqlite')), (db) => {
      db.exec(`UPDATE NVTX_EVENTS SET start = 'x' WHERE rowid IN (SELECT rowid FROM NVTX_EVENTS ORDER BY rowid DESC LIMIT 3)`);
    });
    const got = infoAfterRelease(path);
    expect(got.rows).toBe(countAll(path));
    expect(got.counts).toEqual([]);
  });
});
