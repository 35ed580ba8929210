/**
 * The loaders test every row's times in JS (`isValidInterval`) instead of in SQL
 * (`validIntervalSql`): both must keep exactly the same rows, whatever a damaged export holds in
 * its INTEGER time columns (the column affinity of the real DDL applies on insert).
 */
import BetterSqlite3 from 'better-sqlite3';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isValidInterval, validIntervalSql } from '../../queries/validRows.js';

const B = 2 ** 53;
/** What a damaged time column may hold: ints near every bound, REALs, numeric and other text, BLOBs, NULL. */
const arbTime = fc.oneof(
  fc.integer({ min: -1000, max: 1000 }),
  fc.constantFrom(B - 2, B - 1, B, B + 2, -(B - 1), -B, -(B + 2), 2 ** 62, -(2 ** 62)),
  fc.double({ noNaN: true, min: -1e17, max: 1e17 }),
  fc.constantFrom('12', '-3', '1.5', 'abc', '', ' 7', '9007199254740993'),
  fc.constant(null),
  fc.constant(Buffer.from([0, 1])),
);

describe('isValidInterval = validIntervalSql on the stored values', () => {
  it('keeps the same rows', () => {
    const db = new BetterSqlite3(':memory:');
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, start INTEGER, "end" INTEGER)');
    const insert = db.prepare('INSERT INTO t (start, "end") VALUES (?, ?)');
    fc.assert(
      fc.property(fc.array(fc.tuple(arbTime, arbTime), { minLength: 1, maxLength: 20 }), (rows) => {
        db.exec('DELETE FROM t');
        for (const [s, e] of rows) insert.run(typeof s === 'number' && Number.isInteger(s) && !Number.isSafeInteger(s) ? BigInt(s) : s, typeof e === 'number' && Number.isInteger(e) && !Number.isSafeInteger(e) ? BigInt(e) : e);
        const bySql = (db.prepare(`SELECT id FROM t WHERE ${validIntervalSql()} ORDER BY id`).raw(true).all() as [number][]).map((r) => r[0]);
        const byJs = (db.prepare('SELECT id, start, "end" FROM t ORDER BY id').raw(true).all() as [number, unknown, unknown][]).filter(([, s, e]) => isValidInterval(s, e)).map((r) => r[0]);
        expect(byJs).toEqual(bySql);
      }),
      { numRuns: 300 },
    );
    db.close();
  });
});
