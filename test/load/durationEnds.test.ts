/**
 * The API calls' ends are held as Uint32 durations from their starts (`DurationEnds`), an end that
 * is not its start plus a whole ns below 2^32 - 1 kept whole: read back with `endAt` / `callEnd`,
 * each is the end as read (fast-check over starts and ends past 2^32 ns apart, fractions and times
 * near 2^53; every call of pytorch-dense against SQL's `end`, and a copy with calls edited long).
 */
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Column } from '../../src/columns/typedColumn.js';
import { DurationEndsColumn, endAt, LONG_DURATION } from '../../src/columns/durationEnds.js';
import { callEnd, loadApiCallColumns } from '../../src/load/apiCallColumns.js';
import { withExport } from '../../src/export/openExport.js';
import { fixture } from '../helpers/fixtures.js';
import { copyExport, editExport } from '../helpers/hostileExport.js';

const dense = fixture('pytorch-dense', 'trace.sqlite');
const dir = mkdtempSync(join(tmpdir(), 'iterscope-ends-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('DurationEnds', () => {
  const time = fc.oneof(fc.integer({ min: 0, max: 2 ** 40 }), fc.double({ min: 0, max: 2 ** 40, noNaN: true }), fc.integer({ min: 2 ** 52, max: 2 ** 53 - 1 }));
  const length = fc.oneof(fc.integer({ min: 0, max: 100_000 }), fc.integer({ min: 2 ** 32 - 3, max: 2 ** 32 + 3 }), fc.double({ min: 0, max: 2 ** 34, noNaN: true }));

  it('each end read back as it was put, in 4 bytes when it is its start plus a whole ns below 2^32 - 1', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(time, length), { maxLength: 200 }), (rows) => {
        const start = Float64Array.from(rows, ([s]) => s);
        const ends = rows.map(([s, len]) => s + len);
        const col = new DurationEndsColumn(new Column((n) => new Uint32Array(n), 1));
        col.ensure(rows.length);
        rows.forEach((_, i) => col.put(i, start[i], ends[i]));
        const held = col.trim(rows.length);
        expect(rows.map((_, i) => endAt(start, held, i))).toEqual(ends);
        rows.forEach((_, i) => {
          const d = ends[i] - start[i];
          const fits = Number.isInteger(d) && d < LONG_DURATION && start[i] + d === ends[i];
          expect(held.long.has(i)).toBe(!fits);
        });
      }),
      { numRuns: 300 },
    );
  });

  it('pytorch-dense: every API call ends where SQL says, none kept whole', () => {
    const calls = withExport(dense, (h) => loadApiCallColumns(h));
    const sql = withExport(dense, (h) => h.sqlite.prepare('SELECT "end" FROM CUPTI_ACTIVITY_KIND_RUNTIME ORDER BY rowid').pluck().all() as number[]);
    expect(calls.count).toBe(sql.length);
    expect(Array.from({ length: calls.count }, (_, i) => callEnd(calls, i))).toEqual(sql);
    expect(calls.end.duration).toHaveLength(calls.count);
    expect(calls.end.long.size).toBe(0);
  });

  it('a copy with a call of 5 s and one of 2^32 - 1 ns: those two kept whole, every end as SQL says', () => {
    const copy = editExport(copyExport(dense, join(dir, 'long-calls.sqlite')), (db) => {
      db.prepare('UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET "end" = start + 5000000000 WHERE rowid = 100').run();
      db.prepare('UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET "end" = start + 4294967295 WHERE rowid = 200').run();
    });
    const calls = withExport(copy, (h) => loadApiCallColumns(h));
    const sql = withExport(copy, (h) => h.sqlite.prepare('SELECT "end" FROM CUPTI_ACTIVITY_KIND_RUNTIME ORDER BY rowid').pluck().all() as number[]);
    expect([...calls.end.long.keys()]).toEqual([99, 199]);
    expect(Array.from({ length: calls.count }, (_, i) => callEnd(calls, i))).toEqual(sql);
  });
});
