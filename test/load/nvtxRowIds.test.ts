/**
 * The NVTX columns' rowids (nsys's RangeId) are held as runs of consecutive rowids, not a column
 * of 4 bytes a row (`NvtxRowIds`): one run on pytorch-dense as nsys wrote it, a run more per row
 * left out on copies with rows deleted or unusable, and a column once the runs are many (every
 * other row deleted). Each way, `nvtxRowId` gives the rowid SQL gives for each row read, and the
 * projection's range ids (`nvtx --gpu --instances`) stay the table's (a rowid one off would name
 * another row, with another start).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withExport } from '../../src/export/openExport.js';
import { loadNvtxColumns, nvtxRowId, nvtxRowsAt, type NvtxColumns } from '../../src/load/nvtxEventColumns.js';
import { LoadedExport } from '../../src/load/loadedExport.js';
import { projectNvtxOntoGpu } from '../../src/analysis/nvtxGpuProjection.js';
import { fixture } from '../helpers/fixtures.js';
import { copyExport, editExport } from '../helpers/hostileExport.js';

const dense = fixture('pytorch-dense', 'trace.sqlite');
const dir = mkdtempSync(join(tmpdir(), 'iterscope-rowids-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The rowids of the rows the NVTX columns read (usable times, an event type), as SQL gives them. */
function sqlRowIds(file: string): number[] {
  return withExport(
    file,
    (h) =>
      h.sqlite
        .prepare(
          `SELECT rowid FROM NVTX_EVENTS WHERE eventType IS NOT NULL AND typeof(start) IN ('integer', 'real')
             AND ("end" IS NULL OR (typeof("end") IN ('integer', 'real') AND "end" >= start)) ORDER BY rowid`,
        )
        .pluck()
        .all() as number[],
  );
}

const rowIdsOf = (c: NvtxColumns) => Array.from({ length: c.count }, (_, i) => nvtxRowId(c, i));

describe('NVTX rowids as runs', () => {
  it('pytorch-dense as nsys wrote it: one run, no column, each rowid as SQL gives it', () => {
    const c = withExport(dense, (h) => loadNvtxColumns(h));
    expect(c.rowIds.column).toBeNull();
    expect(Array.from(c.rowIds.runAt!)).toEqual([0]);
    expect(c.count).toBeGreaterThan(100_000);
    expect(rowIdsOf(c)).toEqual(sqlRowIds(dense));
  });

  it('a copy with three rows deleted and one with an end before its start: a run more for each', () => {
    const copy = editExport(copyExport(dense, join(dir, 'gaps.sqlite')), (db) => {
      db.prepare('DELETE FROM NVTX_EVENTS WHERE rowid IN (1, 5000, 5001, 90000)').run();
      db.prepare('UPDATE NVTX_EVENTS SET "end" = start - 1 WHERE rowid = 70000').run();
    });
    const c = withExport(copy, (h) => loadNvtxColumns(h));
    expect(c.rowIds.column).toBeNull();
    // Run starts: rowid 2 (row 0), 5002, 70001, 90001.
    expect(Array.from(c.rowIds.runFirst!)).toEqual([2, 5002, 70001, 90001]);
    expect(Array.from(c.rowIds.runAt!)).toEqual([0, 4998, 69996, 89995]);
    const sql = sqlRowIds(copy);
    expect(rowIdsOf(c)).toEqual(sql);
    // An extract keeps the rowids of the rows it takes.
    const some = Int32Array.of(0, 4997, 4998, c.count - 1);
    expect(rowIdsOf(nvtxRowsAt(c, some))).toEqual(Array.from(some, (i) => sql[i]));
  });

  it('every other row deleted: past the runs one per 16 rows allows, a column, each rowid as SQL gives it', () => {
    const copy = editExport(copyExport(dense, join(dir, 'sparse.sqlite')), (db) => {
      db.prepare('DELETE FROM NVTX_EVENTS WHERE rowid % 2 = 0').run();
    });
    const c = withExport(copy, (h) => loadNvtxColumns(h));
    expect(c.rowIds.column).toBeInstanceOf(Int32Array);
    expect(c.rowIds.runAt).toBeNull();
    expect(c.rowIds.column!.length).toBe(c.count);
    expect(rowIdsOf(c)).toEqual(sqlRowIds(copy));
  });

  it("the projection's range and parent ids are the table's rowids, each instance's start its row's", () => {
    const copy = editExport(copyExport(dense, join(dir, 'proj.sqlite')), (db) => {
      db.prepare('DELETE FROM NVTX_EVENTS WHERE rowid IN (3, 4, 60000)').run();
    });
    const instances = withExport(copy, (h) => projectNvtxOntoGpu(new LoadedExport(h), { includeInstances: true }).instances!);
    expect(instances.length).toBeGreaterThan(300);
    const present = new Set(sqlRowIds(copy));
    for (const x of instances) {
      expect(present.has(x.rangeId)).toBe(true);
      if (x.parentId !== null) expect(present.has(x.parentId)).toBe(true);
    }
    // Each instance's times are those of its rowid's row.
    const byRowId = new Map(
      withExport(copy, (h) => h.sqlite.prepare('SELECT rowid AS r, start AS s FROM NVTX_EVENTS').all() as { r: number; s: number }[]).map((x) => [x.r, x.s]),
    );
    for (const x of instances) expect(x.start).toBe(byRowId.get(x.rangeId));
  });
});
