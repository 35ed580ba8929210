/**
 * PyTorch profiler traces from the field (test/fixtures-field/README.md: repository, path, commit,
 * licence): a PyTorch 1.8 trace, today's libkineto writer, a 2026 ROCm trace. Each is read, not
 * refused; the kernel totals equal the test's own reading of the JSON, and the one ProfilerStep of
 * the 1.8 trace gets the kernel time of the kernels launched inside it. Opening a trace runs the
 * built converter (dist/).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { withExport } from '../../src/export/openExport.js';
import { exportNotes } from '../../src/export/exportNotes.js';
import { summarizeKernels } from '../../src/analysis/kernelSummary.js';
import { analyzeIterations } from '../../src/iterations/analyzeIterations.js';
import { allRows } from '../../queries/run.js';
import { selectLaunchCalls } from '../../queries/launchCalls.js';
import { REPO_ROOT, fixture } from '../helpers/fixtures.js';
import { tablesReadBy } from '../../src/export/contract.js';
import { LoadedExport } from '../../src/load/loadedExport.js';

const FIELD = join(REPO_ROOT, 'test', 'fixtures-field', 'kineto');
const PT18 = join(FIELD, 'pytorch1.8-gpu_metrics_input.trimmed.json');
const KINETO_2026 = join(FIELD, 'kineto-2026-before_fix_trace.json');
const ROCM = join(FIELD, 'tracelens-rocm-gemm_01.trimmed.json');

interface RawEvent {
  ph?: string;
  cat?: string;
  name?: string;
  tid?: number | string;
  ts?: number;
  dur?: number;
  args?: Record<string, unknown>;
}

/** The test's own reading: every complete event whose category names a GPU kernel, in ns. */
function rawEvents(file: string): RawEvent[] {
  return (JSON.parse(readFileSync(file, 'utf8')) as { traceEvents: RawEvent[] }).traceEvents;
}
const isKernel = (e: RawEvent) => e.ph === 'X' && (e.cat ?? '').toLowerCase() === 'kernel';
const ns = (us: number) => Math.round(us * 1000);

function kernelTotalNs(file: string): number {
  return rawEvents(file)
    .filter(isKernel)
    .reduce((a, e) => a + ns(e.dur ?? 0), 0);
}

describe('a PyTorch 1.8 trace (kineto tb_plugin test data): Operator/Runtime/Kernel, text tids, epoch-µs ts, no baseTimeNanoseconds', () => {
  it('is read: the kernel summary totals the JSON kernels, one row per name', () => {
    const summary = withExport(PT18, (h) => summarizeKernels(new LoadedExport(h)));
    const raw = rawEvents(PT18).filter(isKernel);
    expect(summary.rows.reduce((a, r) => a + r.total, 0)).toBe(kernelTotalNs(PT18));
    expect(summary.rows.reduce((a, r) => a + r.count, 0)).toBe(raw.length);
    expect(new Set(summary.rows.map((r) => r.name))).toEqual(new Set(raw.map((e) => e.name)));
  });

  it('gives ProfilerStep#2 (an Operator event) the kernels launched inside it, within 2% of the JSON', () => {
    const events = rawEvents(PT18);
    const step = events.find((e) => e.name === 'ProfilerStep#2')!;
    const launchUs = new Map<number, number>();
    for (const e of events) if (e.cat === 'Runtime' && typeof e.args?.correlation === 'number') launchUs.set(e.args.correlation, e.ts!);
    let expected = 0;
    for (const k of events.filter(isKernel)) {
      const t = launchUs.get(k.args!.correlation as number)!;
      if (t >= step.ts! && t < step.ts! + step.dur!) expected += ns(k.dur!);
    }
    const a = withExport(PT18, (h) => analyzeIterations(new LoadedExport(h)));
    expect(a.iterations.map((r) => r.iter)).toEqual([2]);
    expect(expected).toBeGreaterThan(0);
    expect(Math.abs(a.iterations[0].kernelNs - expected) / expected).toBeLessThanOrEqual(0.02);
    expect(a.iterations[0].memcpyCount).toBe(1);
  });

  it('keeps both launching threads (tid "24572" and "24610"), the 1.8 computeProperties and the epoch clock, and says how it read the clock', () => {
    withExport(PT18, (h) => {
      const tids = h.sqlite.prepare('SELECT DISTINCT globalTid & 16777215 AS tid FROM CUPTI_ACTIVITY_KIND_RUNTIME ORDER BY tid').all() as { tid: number }[];
      expect(tids.map((r) => r.tid)).toEqual([24572, 24610]);
      const gpus = h.sqlite.prepare('SELECT id, name, computeMajor, smCount FROM TARGET_INFO_GPU ORDER BY id').all();
      expect(gpus).toHaveLength(4);
      expect(gpus[0]).toEqual({ id: 0, name: 'Tesla V100-DGXS-32GB', computeMajor: 7, smCount: 80 });
      const start = h.sqlite.prepare('SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME').safeIntegers(true).get() as { utcEpochNs: bigint };
      // The profiler's span starts first: ts 1621401187223005 µs.
      expect(start.utcEpochNs).toBe(1621401187223005000n);
      const kernelStreams = h.sqlite.prepare('SELECT DISTINCT deviceId, streamId FROM CUPTI_ACTIVITY_KIND_KERNEL').all();
      expect(kernelStreams).toEqual([{ deviceId: 0, streamId: 7 }]);
      expect(exportNotes(h).some((n) => /no "baseTimeNanoseconds".*Unix-epoch µs/.test(n))).toBe(true);
    });
  });
});

describe("today's libkineto writer (kineto docs/traces): cuda_sync records, flows that point nowhere, 8 GPUs listed", () => {
  it('reads the one kernel, leaves the cuda_sync records and the flows out with notes, and lists every GPU', () => {
    withExport(KINETO_2026, (h) => {
      expect(summarizeKernels(new LoadedExport(h)).rows.map((r) => [r.name, r.total])).toEqual([['Kernel', kernelTotalNs(KINETO_2026)]]);
      expect((h.sqlite.prepare('SELECT count(*) AS n FROM TARGET_INFO_GPU').get() as { n: number }).n).toBe(8);
      const notes = exportNotes(h);
      expect(notes.some((n) => /4 flow events .* a flow that points nowhere changes nothing/.test(n))).toBe(true);
      expect(notes.some((n) => /categories not converted.*cuda_sync 2/.test(n))).toBe(true);
      const start = h.sqlite.prepare('SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME').safeIntegers(true).get() as { utcEpochNs: bigint };
      // The earliest event, the profiler span, at ts 88437691101.719 µs after the base time.
      expect(start.utcEpochNs).toBe(1775078550000000000n + 88437691101719n);
    });
  });
});

describe('a ROCm trace (TraceLens eval data): hipExtModuleLaunchKernel, no correlation ids, kernels with only an External id', () => {
  it('totals the kernels as the JSON does, on device 2 (their pid) and stream 0 (their tid)', () => {
    withExport(ROCM, (h) => {
      expect(summarizeKernels(new LoadedExport(h)).rows.reduce((a, r) => a + r.total, 0)).toBe(kernelTotalNs(ROCM));
      expect(h.sqlite.prepare('SELECT DISTINCT deviceId, streamId FROM CUPTI_ACTIVITY_KIND_KERNEL').all()).toEqual([{ deviceId: 2, streamId: 0 }]);
    });
  });

  it('joins each kernel to its hipExtModuleLaunchKernel by the External id they share, and counts those as launch calls', () => {
    withExport(ROCM, (h) => {
      const launches = allRows(h, selectLaunchCalls(h));
      expect(launches.map((l) => l.correlationId)).toEqual([25, 26, 28, 29]);
      expect(launches.every((l) => l.isGraph === 0)).toBe(true);
      const joined = h.sqlite
        .prepare('SELECT k.correlationId AS c, s.value AS launch FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId JOIN StringIds s ON s.id = r.nameId ORDER BY c')
        .all();
      expect(joined).toEqual([25, 26, 28, 29].map((c) => ({ c, launch: 'hipExtModuleLaunchKernel' })));
      // hipDeviceSynchronize with dur 0 is kept as a 0 ns call.
      const zero = h.sqlite.prepare("SELECT count(*) AS n FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId WHERE s.value = 'hipDeviceSynchronize' AND r.start = r.end").get();
      expect(zero).toEqual({ n: 1 });
      expect(exportNotes(h).some((n) => /carry no correlation id: their External id/.test(n))).toBe(true);
    });
  });
});

describe('`kernels` converts only the kernels, reading only the events that can be kernels', () => {
  const TORCH_ONLY = fixture('pytorch-torch-only', 'trace.json');
  it.each([PT18, KINETO_2026, ROCM, TORCH_ONLY])('%s: the same kernel summary as the whole conversion', (file) => {
    const whole = withExport(file, (h) => summarizeKernels(new LoadedExport(h)));
    const lean = withExport(file, (h) => summarizeKernels(new LoadedExport(h)), { tables: tablesReadBy(['kernelSummary']) });
    expect(lean).toEqual(whole);
    expect(whole.rows.reduce((a, r) => a + r.total, 0)).toBe(kernelTotalNs(file));
  });
});
