/**
 * The NVTX GPU projection takes its launches from the loaded GPU-op and API-call columns when the
 * pipeline has read them (`report`: `foldColumnsIntoCalls`), else from its own queries
 * (`foldOpsIntoCalls`). On random small exports built from pytorch-dense's real DDL (nested, open
 * and start/end ranges on two threads; calls that share correlation ids; ops of the three tables,
 * some without a call), both give the same projected instances and coverage, and the same fold.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { projectNvtxOntoGpu, type NvtxGpuProjection } from '../../src/analysis/nvtxGpuProjection.js';
import { withExport } from '../../src/export/openExport.js';
import { foldColumnsIntoCalls } from '../../src/load/launchedCalls.js';
import { LoadedExport } from '../../src/load/loadedExport.js';
import { queriedLaunchedCalls } from '../../src/load/projectionReads.js';
import { fixture } from '../helpers/fixtures.js';
import { buildMiniExport } from '../helpers/miniExport.js';

const tmp = mkdtempSync(join(tmpdir(), 'iterscope-projcols-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const DENSE = fixture('pytorch-dense', 'trace.sqlite');

const VM = 2 ** 48; // a VM id bit above the PID, as in the fixtures' globalTids
const PID = 111;
const gpid = VM + PID * 2 ** 24;
const gtid = (tid: number) => gpid + tid;

interface Case {
  ranges: { start: number; len: number; open: boolean; type: number; tid: number }[];
  calls: { start: number; len: number; corr: number; tid: number }[];
  ops: { start: number; len: number; corr: number; table: 'KERNEL' | 'MEMCPY' | 'MEMSET' }[];
}

let seq = 0;
function writeCase(c: Case): string {
  const path = join(tmp, `case${seq++}.sqlite`);
  const common = (o: Case['ops'][number]) => ({ start: o.start, end: o.start + o.len, deviceId: 0, contextId: 1, streamId: 7, correlationId: o.corr, globalPid: gpid });
  const kernel = (o: Case['ops'][number]) => ({
    ...common(o), demangledName: 2, shortName: 2, gridX: 1, gridY: 1, gridZ: 1, blockX: 1, blockY: 1, blockZ: 1, registersPerThread: 1,
    staticSharedMemory: 0, dynamicSharedMemory: 0, localMemoryPerThread: 0, localMemoryTotal: 0, gridId: o.corr,
  });
  buildMiniExport(path, DENSE, {
    META_DATA_EXPORT: [{ name: 'EXPORT_PRODUCT_VERSION', value: '2025.3.2.0' }],
    StringIds: [{ id: 1, value: 'cudaLaunchKernel_v7000' }, { id: 2, value: 'kernel' }, { id: 3, value: 'range' }],
    NVTX_EVENTS: c.ranges.map((r) => ({ start: r.start, end: r.open ? null : r.start + r.len, eventType: r.type, textId: 3, globalTid: gtid(r.tid), domainId: 0 })),
    CUPTI_ACTIVITY_KIND_RUNTIME: c.calls.map((k) => ({ start: k.start, end: k.start + k.len, eventClass: 1, globalTid: gtid(k.tid), correlationId: k.corr, nameId: 1, returnValue: 0 })),
    CUPTI_ACTIVITY_KIND_KERNEL: c.ops.filter((o) => o.table === 'KERNEL').map(kernel),
    CUPTI_ACTIVITY_KIND_MEMCPY: c.ops.filter((o) => o.table === 'MEMCPY').map((o) => ({ ...common(o), bytes: 64, copyKind: 1 })),
    CUPTI_ACTIVITY_KIND_MEMSET: c.ops.filter((o) => o.table === 'MEMSET').map((o) => ({ ...common(o), value: 0, bytes: 64 })),
  });
  return path;
}

/** The projection with its launches from its own queries, and from the loaded columns (as the pipeline's `report`). */
function bothProjections(path: string): { queried: NvtxGpuProjection; columns: NvtxGpuProjection } {
  return withExport(path, (h) => {
    const queried = projectNvtxOntoGpu(new LoadedExport(h), { includeInstances: true });
    const loaded = new LoadedExport(h, { launchIds: true });
    loaded.gpuOps();
    loaded.apiCalls();
    return { queried, columns: projectNvtxOntoGpu(loaded, { includeInstances: true }) };
  });
}

/** The columns' fold and the queries' (the columns serve every such export: one process, ids regular). */
function bothFolds(path: string) {
  return withExport(path, (h) => {
    const loaded = new LoadedExport(h, { launchIds: true });
    const upper = loaded.nvtx().upperBits;
    expect(upper).toBe(1);
    expect(loaded.gpuOps().launchIds).toEqual({ upper: 1, irregular: false });
    return { columns: foldColumnsIntoCalls(loaded.gpuOps(), loaded.apiCalls(), loaded.apiCallIndex(), upper! * 2 ** 24), queried: queriedLaunchedCalls(new LoadedExport(h)) };
  });
}

const interval = (maxStart: number, maxLen: number) => fc.tuple(fc.integer({ min: 0, max: maxStart }), fc.integer({ min: 0, max: maxLen }));
const arbCase: fc.Arbitrary<Case> = fc.record({
  ranges: fc.array(fc.record({ iv: interval(40, 12), open: fc.integer({ min: 0, max: 9 }).map((x) => x < 2), type: fc.constantFrom(59, 59, 60), tid: fc.constantFrom(1, 1, 2) }), { minLength: 1, maxLength: 14 })
    .map((rs) => rs.map((r) => ({ start: r.iv[0], len: r.iv[1], open: r.open, type: r.type, tid: r.tid }))),
  calls: fc.array(fc.record({ iv: interval(50, 3), corr: fc.integer({ min: 1, max: 12 }), tid: fc.constantFrom(1, 1, 2) }), { minLength: 1, maxLength: 12 })
    .map((cs) => cs.map((k) => ({ start: k.iv[0], len: k.iv[1], corr: k.corr, tid: k.tid }))),
  ops: fc.array(fc.record({ iv: interval(90, 20), corr: fc.integer({ min: 1, max: 14 }), table: fc.constantFrom('KERNEL' as const, 'MEMCPY' as const, 'MEMSET' as const) }), { minLength: 1, maxLength: 16 })
    .map((os) => os.map((o) => ({ start: o.iv[0], len: o.iv[1], corr: o.corr, table: o.table }))),
});

describe('the NVTX GPU projection from the loaded columns', () => {
  it('equals the projection from its own queries, and folds alike, on random exports of the real DDL', () => {
    let shared = 0;
    let projected = 0;
    fc.assert(
      fc.property(arbCase, (c) => {
        const path = writeCase(c);
        const { queried, columns } = bothProjections(path);
        expect(columns.instances).toEqual(queried.instances);
        expect(columns.rows).toEqual(queried.rows);
        expect(columns.coverage).toEqual(queried.coverage);
        const folds = bothFolds(path);
        expect({ ...folds.columns, start: [...folds.columns.start], end: [...folds.columns.end] }).toEqual({ ...folds.queried, start: [...folds.queried.start], end: [...folds.queried.end] });
        shared += queried.coverage.duplicateCorrelationIds > 0 ? 1 : 0;
        projected += queried.instances!.length > 0 ? 1 : 0;
      }),
      { numRuns: 60, seed: 20261127 },
    );
    // The cases did hold calls sharing an id, and ranges that got GPU work.
    expect(shared).toBeGreaterThan(5);
    expect(projected).toBeGreaterThan(5);
  });
});
