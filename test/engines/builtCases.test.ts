/**
 * The serving span on exports built from the real DDL (plain-fieldguide's): GPU work whose launch
 * call is not in the export, and a capture whose only CUDA-graph capture ends before the serving
 * work. Each figure here is counted by hand from the rows inserted.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { withExport } from '../../src/export/openExport.js';
import { analyzeExport } from '../../src/pipeline/analyzeExport.js';
import { ENGINE_CAPTURE_PARTS, engineCaptureOf } from '../../src/summary/engineCapture.js';
import { engineRows } from '../../src/compare/engineRows.js';
import { fixture } from '../helpers/fixtures.js';
import { buildMiniExport } from '../helpers/miniExport.js';

const G = 100 * 2 ** 24 + 100;
const PID = 100 * 2 ** 24;
const kernel = (start: number, end: number, correlationId: number) => ({
  start, end, deviceId: 0, contextId: 1, streamId: 7, correlationId, globalPid: PID, demangledName: 10, shortName: 10,
  registersPerThread: 32, gridX: 1, gridY: 1, gridZ: 1, blockX: 1, blockY: 1, blockZ: 1,
  staticSharedMemory: 0, dynamicSharedMemory: 0, localMemoryPerThread: 0, localMemoryTotal: 0, gridId: correlationId,
});
const api = (start: number, end: number, correlationId: number, nameId = 11) => ({ start, end, eventClass: 0, globalTid: G, correlationId, nameId, returnValue: 0 });
const STRINGS = [
  { id: 10, value: 'nvjet_sm90_tst_64x8_64x16_4x2_h_bz_TNT' },
  { id: 11, value: 'cudaLaunchKernel_v7000' },
  { id: 12, value: 'cudaStreamBeginCapture_v10000' },
  { id: 13, value: 'cudaGraphInstantiateWithFlags_v11040' },
  { id: 14, value: 'cudaMalloc_v3020' },
];

const dir = mkdtempSync(join(tmpdir(), 'iterscope-engines-built-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function build(name: string, tables: Record<string, Record<string, unknown>[]>): string {
  const file = join(dir, name);
  buildMiniExport(file, fixture('plain-fieldguide', 'trace.sqlite'), { META_DATA_EXPORT: [{ name: 'EXPORT_PRODUCT_VERSION', value: '2025.3.2.0' }], StringIds: STRINGS, ...tables });
  return file;
}

const rowOf = (file: string) => engineRows([withExport(file, (h) => engineCaptureOf(analyzeExport(h, { parts: ENGINE_CAPTURE_PARTS })))], [{ tokens: 10 }]).rows[0];

describe('the serving span on built exports', () => {
  it('start-up ends with the last CUDA-graph capture call: the work launched after it, the allocation calls in the span', () => {
    const file = build('graphs.sqlite', {
      CUPTI_ACTIVITY_KIND_RUNTIME: [api(100, 110, 1), api(200, 210, 90, 12), api(300, 400, 91, 13), api(500, 510, 2), api(520, 530, 92, 14), api(600, 610, 3)],
      CUPTI_ACTIVITY_KIND_KERNEL: [kernel(120, 170, 1), kernel(540, 590, 2), kernel(620, 720, 3)],
    });
    const r = rowOf(file);
    expect(r.boundary).toBe('graph-capture');
    // Kernels 2 and 3 (launched at 500 and 600, after the instantiate call ended at 400): 50 + 100 ns.
    expect([r.kernels, r.kernelNs, r.spanStartNs, r.spanEndNs]).toEqual([2, 150, 540, 720]);
    expect(r.kernelNsPerGeneratedToken).toBe(15);
    expect(r.busyShare).toBe(150 / 180);
    expect(r.allocationCalls).toBe(0); // the cudaMalloc at 520 is before the span's first GPU work (540)
    expect(r.notes.some((n) => /1 GPU op \(0\.00 ms\) launched before \(model load, warm-up, graph capture\) is left out/.test(n))).toBe(true);
  });

  it('GPU work without its launch call is left out and counted; with none placed, the row cannot answer (not "no GPU work", not 0 ns)', () => {
    const some = rowOf(build('some.sqlite', { CUPTI_ACTIVITY_KIND_RUNTIME: [api(100, 110, 1)], CUPTI_ACTIVITY_KIND_KERNEL: [kernel(120, 170, 1), kernel(200, 260, 2)] }));
    expect([some.boundary, some.kernels, some.kernelNs]).toEqual(['none', 1, 50]);
    expect(some.notes.some((n) => /1 GPU op has no CUDA API row in the export/.test(n))).toBe(true);
    const none = rowOf(build('none.sqlite', { CUPTI_ACTIVITY_KIND_RUNTIME: [api(100, 110, 5)], CUPTI_ACTIVITY_KIND_KERNEL: [kernel(120, 170, 1)] }));
    expect(none.status).toBe('cannot-answer');
    expect(none.statusText).toMatch(/none of the GPU ops has its CUDA API call in the export/);
    expect([none.kernelNs, none.kernelNsPerGeneratedToken]).toEqual([null, null]);
  });
});
