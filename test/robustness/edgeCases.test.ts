import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { summarizeKernels } from '../../src/analysis/kernelSummary.js';
import { summarizeNvtx } from '../../src/analysis/nvtxSummary.js';
import { withExport } from '../../src/export/openExport.js';
import { analyzeIterations } from '../../src/iterations/analyzeIterations.js';
import { nvtxSummaryTable } from '../../reports/nvtxReport.js';
import { fixture } from '../helpers/fixtures.js';
import { gapsOf } from '../helpers/pipeline.js';
import { buildMiniExport } from '../helpers/miniExport.js';
import { LoadedExport } from '../../src/load/loadedExport.js';

// Process 100: executor thread 100, another thread 101. globalTid = pid << 24 | tid.
const G = 100 * 2 ** 24 + 100;
const G2 = 100 * 2 ** 24 + 101;
const PID = 100 * 2 ** 24;

const file = join(mkdtempSync(join(tmpdir(), 'iterscope-edge-')), 'edge.sqlite');
const kernel = (start: number, end: number, correlationId: number) => ({
  start, end, deviceId: 0, contextId: 1, streamId: 7, correlationId, globalPid: PID, demangledName: 10, shortName: 10,
  registersPerThread: 32, gridX: 1, gridY: 1, gridZ: 1, blockX: 1, blockY: 1, blockZ: 1,
  staticSharedMemory: 0, dynamicSharedMemory: 0, localMemoryPerThread: 0, localMemoryTotal: 0, gridId: correlationId,
});
const api = (start: number, end: number, correlationId: number) => ({ start, end, eventClass: 0, globalTid: G, correlationId, nameId: 11, returnValue: 0 });
const range = (start: number, end: number | null, text: string, extra: Record<string, unknown> = {}) => ({ start, end, eventType: 59, text, globalTid: G, domainId: 0, ...extra });

buildMiniExport(file, fixture('pytorch-dense', 'trace.sqlite'), {
  META_DATA_EXPORT: [{ name: 'EXPORT_PRODUCT_VERSION', value: '2025.3.2.0' }],
  StringIds: [
    { id: 10, value: 'nvjet_sm90_tst_64x8_64x16_4x2_h_bz_TNT' },
    { id: 11, value: 'cudaLaunchKernel_v7000' },
  ],
  NVTX_EVENTS: [
    { start: 10, end: null, eventType: 75, text: 'TensorRT-LLM', globalTid: G, domainId: 1 },
    range(1000, 1500, '[Executor] _forward_step 0: 1 ctx reqs, 8 ctx tokens, 0 gen reqs', { domainId: 1 }),
    range(2000, 2500, '[Executor] _forward_step 1: 0 ctx reqs, 0 ctx tokens, 1 gen reqs', { domainId: 1 }),
    range(3000, 3100, '[Executor] _forward_step 2: 0 ctx reqs, 0 ctx tokens, 1 gen reqs', { domainId: 1 }),
    range(3500, null, 'open forever'),
    { start: 1200, end: null, eventType: 34, text: 'marker', globalTid: G, domainId: 0 },
    { start: 1300, end: 2600, eventType: 60, text: 'cross', globalTid: G, endGlobalTid: G2, domainId: 0 },
    range(2550, 2550, 'zero'),
  ],
  CUPTI_ACTIVITY_KIND_RUNTIME: [api(1100, 1120, 1), api(1400, 1410, 2), api(2100, 2120, 3)],
  CUPTI_ACTIVITY_KIND_KERNEL: [kernel(1150, 1300, 1), kernel(1450, 1450, 2), kernel(1600, 1700, 99), kernel(2200, 2400, 3)],
});

describe('edge cases, built from the real DDL: handled and counted, never silently dropped', () => {
  it('NVTX: an unclosed range ends at the latest NVTX timestamp; marks, cross-thread and zero-length ranges are counted', () => {
    const s = withExport(file, (h) => summarizeNvtx(new LoadedExport(h)));
    expect(s.maxTimestampNs).toBe(3500);
    const open = s.rows.find((r) => r.range === ':open forever')!;
    expect(open.total).toBe(0); // 3500 - 3500: it starts at the latest timestamp
    expect(s.unclosedRanges).toBe(1);
    expect(s.marks).toBe(1);
    expect(s.crossThreadRanges).toBe(1);
    expect(s.zeroLengthRanges).toBe(1);
    expect(s.rows.find((r) => r.range === ':cross')!.total).toBe(1300);
    expect(s.rows.reduce((a, r) => a + r.count, 0)).toBe(6);
    const notes = nvtxSummaryTable(s).notes!.join('\n');
    for (const word of ['never closed', 'another thread', 'zero length', 'marks']) expect(notes).toContain(word);
  });

  it('kernels: zero-length kernels and kernels without an API row are in the summary', () => {
    const k = withExport(file, (h) => summarizeKernels(new LoadedExport(h)));
    expect(k.rows).toHaveLength(1);
    expect(k.rows[0].count).toBe(4);
    expect(k.rows[0].min).toBe(0);
    expect(k.rows[0].total).toBe(150 + 0 + 100 + 200);
  });

  it('iterations: the kernel without an API row is counted as unplaced; the zero-length kernel is placed', () => {
    const a = withExport(file, (h) => analyzeIterations(new LoadedExport(h)));
    expect(a.iterations.map((r) => r.iter)).toEqual([0, 1, 2]);
    expect(a.iterations[0].kernelCount).toBe(2);
    expect(a.iterations[0].kernelNs).toBe(150);
    expect(a.iterations[1].kernelCount).toBe(1);
    expect(a.coverage.noRuntimeOps).toBe(1);
    expect(a.coverage.noRuntimeNs).toBe(100);
    expect(a.coverage.placedOps + a.coverage.noRuntimeOps + a.coverage.outsideOps).toBe(4);
    expect(a.coverage.notes.join('\n')).toMatch(/1 GPU ops have no CUDA API row/);
  });

  it('gaps: zero-length ops cover nothing; busy + gaps = span', () => {
    const g = withExport(file, (h) => gapsOf(h, { minGapNs: 0 }));
    const d = g.devices[0];
    expect(d.spanNs).toBe(2400 - 1150);
    expect(d.busyNs).toBe(150 + 100 + 200);
    expect(d.busyNs + d.idleNs).toBe(d.spanNs);
  });
});
