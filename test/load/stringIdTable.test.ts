/**
 * `StringIdTable`: values by string id for per-op lookups (kernel categories, kernel-summary
 * slots). StringIds keys go to a table sized by the export's max rowid; every other id (negative,
 * past the table, `NO_STRING_ID`) must still be kept, apart, and a 0 value must read as set.
 */
import { describe, expect, it } from 'vitest';
import { withExport } from '../../src/export/openExport.js';
import { LoadedExport } from '../../src/load/loadedExport.js';
import { NO_STRING_ID, StringIdTable } from '../../src/columns/typedColumn.js';
import { fixture } from '../helpers/fixtures.js';

describe('StringIdTable over pytorch-dense (StringIds max rowid)', () => {
  it('keeps ids inside and outside the table apart, and 0 as a value', () => {
    const bound = withExport(fixture('pytorch-dense', 'trace.sqlite'), (h) => new LoadedExport(h).rowBound('StringIds'));
    expect(bound).toBeGreaterThan(100);
    const t = new StringIdTable(bound);
    const ids = [0, 1, bound, bound + 1, 2 ** 31 - 2, -1, -7, NO_STRING_ID];
    for (const id of ids) expect(t.get(id), String(id)).toBe(-1);
    ids.forEach((id, k) => t.set(id, k));
    ids.forEach((id, k) => expect(t.get(id), String(id)).toBe(k));
    t.set(-1, 42);
    expect(t.get(-1)).toBe(42);
    expect(t.get(NO_STRING_ID)).toBe(ids.indexOf(NO_STRING_ID));
  });

  it('an export without StringIds (max rowid 0) still keeps every id', () => {
    const t = new StringIdTable(0);
    t.set(5, 3);
    t.set(0, 9);
    expect([t.get(5), t.get(0), t.get(6)]).toEqual([3, 9, -1]);
  });
});
