import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { kernelShortName, memcpyKinds, memsetKind } from '../../src/kineto/trace/activityNames.js';
import { fixture } from '../helpers/fixtures.js';

describe('kernelShortName', () => {
  it.each(['pytorch-torch-trace', 'pytorch-dense', 'vllm-dense', 'pytorch-moe-window'])("equals nsys's shortName for every kernel of %s", (name) => {
    const db = new BetterSqlite3(fixture(name, 'trace.sqlite'), { readonly: true });
    const rows = db
      .prepare('SELECT DISTINCT d.value AS demangled, s.value AS short FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds d ON d.id = k.demangledName JOIN StringIds s ON s.id = k.shortName')
      .all() as { demangled: string; short: string }[];
    db.close();
    expect(rows.length).toBeGreaterThan(30);
    for (const r of rows) expect(kernelShortName(r.demangled), r.demangled).toBe(r.short);
  });

  it("reads CUPTI's spelling (as Kineto writes it) the same way", () => {
    expect(kernelShortName('void at::native::vectorized_gather_kernel<16, long>(char*, char*, long*, int, long, long, long, long, bool)')).toBe('vectorized_gather_kernel');
  });
});

describe('memcpy and memset kinds from Kineto names', () => {
  it('maps direction and memory kinds to the nsys enum ids', () => {
    expect(memcpyKinds('Memcpy HtoD (Pageable -> Device)')).toEqual({ copyKind: 1, srcKind: 0, dstKind: 2 });
    expect(memcpyKinds('Memcpy DtoH (Device -> Pinned)')).toEqual({ copyKind: 2, srcKind: 2, dstKind: 1 });
    expect(memcpyKinds('Memcpy DtoD (Device -> Device)')).toEqual({ copyKind: 8, srcKind: 2, dstKind: 2 });
    expect(memcpyKinds('something else')).toEqual({ copyKind: 0, srcKind: 7, dstKind: 7 });
    expect(memsetKind('Memset (Device)')).toBe(2);
  });
});
