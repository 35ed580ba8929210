import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { openExport } from '../../src/export/openExport.js';
import { loadGpuOpColumns } from '../../src/load/gpuOpColumns.js';
import { NO_STRING_ID } from '../../src/columns/typedColumn.js';
import { presentGpuOpSources, selectGpuOps, selectGpuOpsOf, selectGpuOpProcessCount, GpuOpKind } from '../../queries/gpuOps.js';
import { pidOf, threadKeyOf, tidOf } from '../../queries/globalIds.js';
import { allRows } from '../../queries/run.js';
import { buildMiniExport } from '../helpers/miniExport.js';
import { fixture } from '../helpers/fixtures.js';

const DENSE = fixture('pytorch-dense', 'trace.sqlite');
const GRAPHS = fixture('external', 'nsys2025.5.2_cudagraph_flameox.sqlite');
const WINDOWS = fixture('external', 'nsys2022.1_windows_extrap.sqlite');

const tmp = mkdtempSync(join(tmpdir(), 'iterscope-gpuops-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** The ops as nsys's tables hold them, read with hand-written SQL and unpacked in JS (the oracle). */
function opsByHand(file: string): { start: number; end: number; deviceId: number; pid: number; kind: number; nameId: number | null }[] {
  const db = new BetterSqlite3(file, { readonly: true });
  try {
    const tables = ['CUPTI_ACTIVITY_KIND_KERNEL', 'CUPTI_ACTIVITY_KIND_MEMCPY', 'CUPTI_ACTIVITY_KIND_MEMSET', 'CUPTI_ACTIVITY_KIND_GRAPH_TRACE'];
    const present = new Set((db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).all() as { name: string }[]).map((r) => r.name));
    return tables
      .filter((t) => present.has(t))
      .flatMap((t) =>
        (db.prepare(`SELECT * FROM ${t}`).safeIntegers(true).all() as Record<string, bigint | null>[]).map((r) => ({
          start: Number(r.start),
          end: Number(r.end),
          deviceId: Number(r.deviceId),
          pid: Number((BigInt(r.globalPid!) >> 24n) & 0xffffffn),
          kind: tables.indexOf(t),
          nameId: t === 'CUPTI_ACTIVITY_KIND_KERNEL' && r.demangledName != null ? Number(r.demangledName) : null,
        })),
      );
  } finally {
    db.close();
  }
}

describe('one GPU-op query', () => {
  for (const [label, file] of [
    ['pytorch-dense', DENSE],
    ['cudagraph (graph-level trace)', GRAPHS],
  ] as const) {
    it(`selectGpuOps and the typed columns hold the same rows as the tables (${label})`, () => {
      const oracle = opsByHand(file);
      const h = openExport(file);
      try {
        const rows = allRows(h, selectGpuOps(h)!);
        expect(rows.length).toBe(oracle.length);
        expect(rows.map((r) => [r.start, r.end, r.deviceId, r.pid, r.kind, r.nameId])).toEqual(oracle.map((o) => [o.start, o.end, o.deviceId, o.pid, o.kind, o.nameId]));
        const cols = loadGpuOpColumns(h);
        expect(cols.count).toBe(oracle.length);
        expect(Array.from(cols.pid)).toEqual(oracle.map((o) => o.pid));
        expect(Array.from(cols.kind)).toEqual(oracle.map((o) => o.kind));
        expect(Array.from(cols.nameId)).toEqual(oracle.map((o) => o.nameId ?? NO_STRING_ID));
        const excluded = allRows(h, selectGpuOps(h, { excludeGraphTraces: true })!);
        expect(excluded.length).toBe(oracle.filter((o) => o.kind !== GpuOpKind.Graph).length);
        expect(allRows(h, selectGpuOpProcessCount(h)!)[0].n).toBe(new Set(oracle.map((o) => o.pid)).size);
      } finally {
        h.close();
      }
    });
  }

  it('has graph-level rows in the cudagraph fixture (so the test above covers them)', () => {
    expect(opsByHand(GRAPHS).filter((o) => o.kind === GpuOpKind.Graph).length).toBeGreaterThan(0);
  });

  it('column options: only the asked-for columns, in the documented order', () => {
    const h = openExport(DENSE);
    try {
      const kernels = presentGpuOpSources(h)[0];
      const names = (q: Parameters<typeof allRows>[1]) => h.sqlite.prepare(q.compile().sql).columns().map((c) => c.name);
      expect(names(selectGpuOpsOf(h, kernels))).toEqual(['start', 'end', 'deviceId', 'streamId', 'correlationId', 'globalPid', 'pid', 'kind', 'nameId']);
      expect(names(selectGpuOpsOf(h, kernels, { globalPid: false, kind: false }))).toEqual(['start', 'end', 'deviceId', 'streamId', 'correlationId', 'pid', 'nameId']);
      expect(names(selectGpuOpsOf(h, kernels, { globalPid: false, sliceColumns: { kernelName: 'shortName' } }))).toEqual([
        'start', 'end', 'deviceId', 'streamId', 'correlationId', 'pid', 'kind', 'nameId', 'catId', 'extra',
      ]);
      // Slice columns: the kernel's short name id, its demangled id for the category.
      const byHand = new BetterSqlite3(DENSE, { readonly: true });
      const first = byHand.prepare('SELECT shortName, demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL LIMIT 1').get() as { shortName: number; demangledName: number };
      byHand.close();
      const row = allRows(h, selectGpuOpsOf(h, kernels, { sliceColumns: { kernelName: 'shortName' } }).limit(1))[0];
      expect([row.nameId, row.catId, row.extra]).toEqual([first.shortName, first.demangledName, null]);
    } finally {
      h.close();
    }
  });

  it('keepZeroLengthAtStart keeps a zero-length op at the window start that the overlap test drops', () => {
    const file = join(tmp, 'zero-length.sqlite');
    const kernel = (start: number, end: number, correlationId: number) => ({
      start, end, deviceId: 0, streamId: 7, correlationId, globalPid: 281479271677952, demangledName: 1, shortName: 1, contextId: 1,
      gridX: 1, gridY: 1, gridZ: 1, blockX: 1, blockY: 1, blockZ: 1, registersPerThread: 1, staticSharedMemory: 0, dynamicSharedMemory: 0, localMemoryPerThread: 0, localMemoryTotal: 0, gridId: correlationId,
    });
    buildMiniExport(file, DENSE, {
      META_DATA_EXPORT: [{ name: 'EXPORT_PRODUCT_VERSION', value: '2025.3.2.0' }],
      CUPTI_ACTIVITY_KIND_KERNEL: [kernel(100, 200, 1), kernel(200, 200, 2), kernel(150, 250, 3), kernel(300, 300, 4), kernel(50, 100, 5)],
    });
    const h = openExport(file);
    try {
      const kernels = presentGpuOpSources(h)[0];
      const corr = (opts: Parameters<typeof selectGpuOpsOf>[2]) => allRows(h, selectGpuOpsOf(h, kernels, opts)).map((r) => r.correlationId).sort();
      // [200, 300): overlap keeps 3 only; zero-length 2 starts at 200; 4 starts at the end (excluded), 5 ends before.
      expect(corr({ startNs: 200, endNs: 300 })).toEqual([3]);
      expect(corr({ startNs: 200, endNs: 300, keepZeroLengthAtStart: true })).toEqual([2, 3]);
    } finally {
      h.close();
    }
  });
});

describe('pidOf / tidOf / threadKeyOf', () => {
  it('unpack globalTid as BigInt arithmetic does, on a Windows export with ids beyond 2^53', () => {
    const h = openExport(WINDOWS);
    try {
      const q = h.db
        .selectFrom('CUPTI_ACTIVITY_KIND_RUNTIME')
        .select(['globalTid', pidOf('globalTid').as('pid'), tidOf('globalTid').as('tid'), threadKeyOf('globalTid').as('key')])
        .distinct();
      const rows = allRows(h, q, { safeIntegers: true }) as unknown as { globalTid: bigint; pid: bigint; tid: bigint; key: bigint }[];
      expect(rows.length).toBeGreaterThan(0);
      expect(rows.some((r) => r.globalTid > BigInt(Number.MAX_SAFE_INTEGER))).toBe(true);
      for (const r of rows) {
        const pid = (r.globalTid >> 24n) & 0xffffffn;
        const tid = r.globalTid & 0xffffffn;
        expect([r.pid, r.tid, r.key]).toEqual([pid, tid, pid * 16777216n + tid]);
      }
    } finally {
      h.close();
    }
  });
});
