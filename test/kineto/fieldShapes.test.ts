/**
 * PyTorch profiler trace shapes seen in public sources but not held here as whole files
 * (test/fixtures-field/README.md says why). Each input is either a real file of
 * test/fixtures-field/kineto edited as named, or built event by event the way the quoted writer
 * writes it; each test quotes where the shape was read. Opening a trace runs the built converter.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openInput, withExport } from '../../src/export/openExport.js';
import { exportNotes } from '../../src/export/exportNotes.js';
import { summarizeKernels } from '../../src/analysis/kernelSummary.js';
import { analyzeIterations } from '../../src/iterations/analyzeIterations.js';
import { IterationError, KinetoTraceError } from '../../src/errors.js';
import type { ExportHandle } from '../../queries/handle.js';
import { REPO_ROOT } from '../helpers/fixtures.js';
import { runCli } from '../helpers/cli.js';
import { LoadedExport } from '../../src/load/loadedExport.js';

const KINETO_2026 = join(REPO_ROOT, 'test', 'fixtures-field', 'kineto', 'kineto-2026-before_fix_trace.json');
const dir = mkdtempSync(join(tmpdir(), 'iterscope-field-shapes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function write(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

interface RawEvent {
  ph?: string;
  cat?: string;
  name?: string;
  ts?: number;
  dur?: number;
  args?: Record<string, unknown>;
}

/** The test's own reading of a trace: every complete event of category kernel, its dur in ns. */
function independentKernelNs(text: string): number {
  const doc = JSON.parse(text) as { traceEvents: RawEvent[] };
  return doc.traceEvents.filter((e) => e.ph === 'X' && e.cat?.toLowerCase() === 'kernel').reduce((a, e) => a + Math.round((e.dur ?? 0) * 1000), 0);
}

const sessionStart = (h: ExportHandle) =>
  h.sqlite.prepare('SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME').safeIntegers(true).all() as { utcEpochNs: bigint }[];
const metadata = (h: ExportHandle, name: string) => h.metadata.values.get(name);

describe('the 2026 libkineto trace without baseTimeNanoseconds (ts relative to an unknown origin)', () => {
  // PyTorch writes relative ts (output_json.cpp `transToRelativeTime`: "By using relative time,
  // other applications can accurately read the 'ts' field as a double") and the base beside it;
  // a trace whose base was dropped (older writers, tools that rewrite traces) keeps relative ts.
  const real = readFileSync(KINETO_2026, 'utf8');
  const text = real.replace(/\n\s*"baseTimeNanoseconds": 1775078550000000000,/, '');

  it('reads the same kernels, writes no session start, and says the clock is unknown', () => {
    expect(text).not.toContain('baseTimeNanoseconds');
    withExport(write('no-base-time.json', text), (h) => {
      expect(summarizeKernels(new LoadedExport(h)).rows.map((r) => [r.name, r.total])).toEqual([['Kernel', independentKernelNs(real)]]);
      expect(sessionStart(h)).toEqual([]);
      expect(exportNotes(h).some((n) => /no absolute clock/.test(n))).toBe(true);
    });
  });
});

describe('no ProfilerStep#N (the 2026 libkineto trace: a test program, no profiler.step())', () => {
  it('reads the kernels; iterations are refused with one line that says what marks them', () => {
    withExport(KINETO_2026, (h) => {
      expect(summarizeKernels(new LoadedExport(h)).rows).toHaveLength(1);
      expect(() => analyzeIterations(new LoadedExport(h))).toThrow(IterationError);
      expect(() => analyzeIterations(new LoadedExport(h))).toThrow(/without NVTX iteration ranges or ProfilerStep#N, pass --log/);
    });
  });
});

describe('displayTimeUnit "ns" (libkineto built with DISPLAY_TRACE_IN_NS)', () => {
  // pytorch/kineto libkineto/src/output_json.cpp: `std::string display_unit = "ms"; #ifdef
  // DISPLAY_TRACE_IN_NS display_unit = "ns";` while every ts/dur is still written by
  // `fmtTs(time_ns)` as "{us}.{ns:03}": the unit only tells a viewer how to show time.
  const text = readFileSync(KINETO_2026, 'utf8').replace('"displayTimeUnit": "ms"', '"displayTimeUnit": "ns"');

  it('reads ts and dur in µs as with "ms", and says so', () => {
    expect(text).toContain('"displayTimeUnit": "ns"');
    withExport(write('display-ns.json', text), (h) => {
      expect(summarizeKernels(new LoadedExport(h)).rows.map((r) => r.total)).toEqual([independentKernelNs(text)]);
      expect(sessionStart(h)).toEqual([{ utcEpochNs: 1775078550000000000n + 88437691101719n }]);
      expect(exportNotes(h).some((n) => /displayTimeUnit "ns" only sets the unit a trace viewer shows/.test(n))).toBe(true);
    });
  });
});

/**
 * One rank of an NCCL run as libkineto writes it (pytorch/kineto libkineto/src/output_json.cpp,
 * commit 002d99198b93aa6eed09014a7c8b4959eb545372): ts as "{us}.{ns:03}"; a kernel launched under
 * `record_param_comms` carries the collective's fields in its args ("Collective name", "In msg
 * nelems", "Out msg nelems", "Group size", "dtype", "Process Group Name", "Process Group
 * Description", "Process Group Ranks"); GPU activity goes under `pid` = device and `tid` = stream;
 * and `distributedInfo` is written AFTER the traceEvents array (`addOnDemandDistMetadata`:
 * `"distributedInfo": {"backend": "nccl", "rank": .., "world_size": .., "pg_count": ..,
 * "pg_config": [{"pg_name": .., "pg_desc": .., "backend_config": .., "pg_size": .., "ranks": ..}],
 * "nccl_version": ".."}`), before "traceName". Header as HolisticTraceAnalysis
 * tests/test_trace_parse.py EXPECTED_META_VISION_TRANFORMER (`"distributedInfo": {"backend":
 * "nccl", "rank": 0, "world_size": 64}`) has it for rank 0 of 64. Two steps; compute on stream 7 of
 * device 0 and 1 (a process driving two GPUs), the all-reduce on NCCL's stream 20.
 */
function ncclRankTrace(): string {
  const events: unknown[] = [
    { name: 'process_name', ph: 'M', ts: 0, pid: 4242, tid: 0, args: { name: 'python3' } },
    { name: 'thread_name', ph: 'M', ts: 0, pid: 4242, tid: 4242, args: { name: 'thread 4242 (python3)' } },
  ];
  let corr = 100;
  for (let step = 0; step < 2; step++) {
    const t = 5000 + step * 2000;
    events.push({ ph: 'X', cat: 'user_annotation', name: `ProfilerStep#${step + 3}`, pid: 4242, tid: 4242, ts: `${t}.000`, dur: '1500.250', args: { 'External id': 10 + step } });
    for (const device of [0, 1]) {
      const c = corr++;
      events.push(
        { ph: 'X', cat: 'cpu_op', name: 'aten::mm', pid: 4242, tid: 4242, ts: `${t + 10 + device * 20}.500`, dur: '15.125', args: { 'External id': c } },
        { ph: 'X', cat: 'cuda_runtime', name: 'cudaLaunchKernel', pid: 4242, tid: 4242, ts: `${t + 12 + device * 20}.250`, dur: '4.750', args: { 'External id': c, cbid: 211, correlation: c } },
        { ph: 'X', cat: 'kernel', name: 'sm90_xmma_gemm_bf16bf16_bf16f32', pid: device, tid: 7, ts: `${t + 40 + device * 20}.001`, dur: `${200 + step}.333`, args: { 'External id': c, device, stream: 7, correlation: c } },
      );
    }
    const c = corr++;
    events.push(
      {
        ph: 'X', cat: 'cpu_op', name: 'record_param_comms', pid: 4242, tid: 4242, ts: `${t + 100}.000`, dur: '30.000',
        args: { 'External id': c, 'Collective name': 'allreduce', dtype: 'BFloat16', 'In msg nelems': 4096, 'Out msg nelems': 4096, 'Group size': 64, 'Process Group Name': '0', 'Process Group Description': 'default_pg', 'Process Group Ranks': '[0, 1, 2, 3, 4, 5, 6, 7, ..., 63]' },
      },
      { ph: 'X', cat: 'cuda_runtime', name: 'cudaLaunchKernelExC', pid: 4242, tid: 4242, ts: `${t + 110}.000`, dur: '8.500', args: { 'External id': c, cbid: 430, correlation: c } },
      {
        ph: 'X', cat: 'kernel', name: 'ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)', pid: 0, tid: 20, ts: `${t + 300}.125`, dur: `${900 + step * 10}.875`,
        args: { 'External id': c, device: 0, stream: 20, correlation: c, 'Collective name': 'allreduce', 'In msg nelems': 4096, 'Out msg nelems': 4096, 'Group size': 64, dtype: 'BFloat16', 'Process Group Name': '0', 'Process Group Description': 'default_pg', 'Process Group Ranks': '[0, 1, 2, 3, 4, 5, 6, 7, ..., 63]' },
      },
    );
  }
  events.push({ name: 'Record Window End', ph: 'i', s: 'g', pid: '', tid: '', ts: '9000.000' });
  const body = JSON.stringify(events, null, 2)
    // libkineto writes ts and dur as bare numbers: "ts": 5000.000
    .replace(/"(ts|dur)": "([\d.]+)"/g, '"$1": $2');
  return `{
  "schemaVersion": 1,
  "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 84929347584, "computeMajor": 9, "computeMinor": 0, "numSms": 132}, {"id": 1, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 84929347584, "computeMajor": 9, "computeMinor": 0, "numSms": 132}],
  "displayTimeUnit": "ms",
  "baseTimeNanoseconds": 1740461679000000000,
  "traceEvents": ${body},
  "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 64, "pg_count": 1, "pg_config": [{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cuda:nccl", "pg_size": 64, "ranks": "[0, 1, 2, 3, 4, 5, 6, 7, ..., 63]"}], "nccl_version": "2.21.5"},
  "traceName": "/tmp/rank0.pt.trace.json"
}`;
}

describe('one rank of an NCCL run: distributedInfo after the events, collective args on the NCCL kernel, two GPUs, several streams', () => {
  const text = ncclRankTrace();
  const file = write('nccl-rank0.json', text);

  it('is valid JSON of the quoted layout', () => {
    const doc = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    expect(Object.keys(doc)).toEqual(['schemaVersion', 'deviceProperties', 'displayTimeUnit', 'baseTimeNanoseconds', 'traceEvents', 'distributedInfo', 'traceName']);
  });

  it('totals the kernels as the JSON does, per device and stream, and keeps the rank', () => {
    withExport(file, (h) => {
      const rows = summarizeKernels(new LoadedExport(h)).rows;
      expect(rows.reduce((a, r) => a + r.total, 0)).toBe(independentKernelNs(readFileSync(file, 'utf8')));
      expect(rows.map((r) => [r.name.slice(0, 22), r.count])).toEqual([
        ['ncclDevKernel_AllReduc', 2],
        ['sm90_xmma_gemm_bf16bf1', 4],
      ]);
      expect(h.sqlite.prepare('SELECT deviceId, streamId, count(*) AS n FROM CUPTI_ACTIVITY_KIND_KERNEL GROUP BY 1, 2 ORDER BY 1, 2').all()).toEqual([
        { deviceId: 0, streamId: 7, n: 2 },
        { deviceId: 0, streamId: 20, n: 2 },
        { deviceId: 1, streamId: 7, n: 2 },
      ]);
      expect([metadata(h, 'KINETO_DISTRIBUTED_RANK'), metadata(h, 'KINETO_DISTRIBUTED_WORLD_SIZE'), metadata(h, 'KINETO_DISTRIBUTED_BACKEND')]).toEqual(['0', '64', 'nccl']);
      expect(exportNotes(h).some((n) => /distributed run \(distributedInfo\): rank 0 of 64, backend nccl/.test(n))).toBe(true);
    });
  });

  it('gives each ProfilerStep the kernels launched in it, within 2% of the JSON', () => {
    const doc = JSON.parse(readFileSync(file, 'utf8')) as { traceEvents: RawEvent[] };
    const launchUs = new Map<number, number>();
    for (const e of doc.traceEvents) if (e.cat === 'cuda_runtime') launchUs.set(e.args!.correlation as number, e.ts!);
    const steps = doc.traceEvents.filter((e) => e.name?.startsWith('ProfilerStep#'));
    const expected = steps.map((s) =>
      doc.traceEvents
        .filter((e) => e.cat === 'kernel')
        .filter((k) => {
          const t = launchUs.get(k.args!.correlation as number)!;
          return t >= s.ts! && t < s.ts! + s.dur!;
        })
        .reduce((a, k) => a + Math.round(k.dur! * 1000), 0),
    );
    const a = withExport(file, (h) => analyzeIterations(new LoadedExport(h)));
    expect(a.iterations.map((r) => r.iter)).toEqual([3, 4]);
    a.iterations.forEach((r, i) => expect(Math.abs(r.kernelNs - expected[i]) / expected[i], `step ${r.iter}`).toBeLessThanOrEqual(0.02));
  });
});

/**
 * A CPU-only trace: HolisticTraceAnalysis tests/test_trace_parse.py EXPECTED_META_CPU_ONLY_TRACE
 * (of tests/data/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz): `"deviceProperties": [],
 * "distributedInfo": {"backend": "gloo", "pg_config": None, "pg_count": 10, "rank": 34,
 * "world_size": 300}, "schemaVersion": 1`. Its events are CPU ops and ProfilerStep#N annotations;
 * libkineto leaves `args` out when an event has none (output_json.cpp `ArgsBuilder::renderField`:
 * "an empty string if no args were added").
 */
function cpuOnlyTrace(): string {
  const events: unknown[] = [];
  for (let step = 0; step < 3; step++) {
    const t = 1000 + step * 500;
    events.push(
      { ph: 'X', cat: 'user_annotation', name: `ProfilerStep#${step}`, pid: 1074, tid: 1074, ts: t, dur: 400, args: { 'External id': step + 1 } },
      { ph: 'X', cat: 'cpu_op', name: 'aten::addmm', pid: 1074, tid: 1074, ts: t + 10, dur: 120, args: { 'External id': step + 100, 'Record function id': 0 } },
      { ph: 'X', cat: 'cpu_op', name: 'aten::empty', pid: 1074, tid: 1074, ts: t + 150, dur: 3 },
    );
  }
  return JSON.stringify({ schemaVersion: 1, deviceProperties: [], distributedInfo: { backend: 'gloo', pg_config: null, pg_count: 10, rank: 34, world_size: 300 }, traceEvents: events });
}

describe('a CPU-only trace (gloo, no GPU): read, no kernels, iterations with no GPU time', () => {
  const file = write('cpu-only.json', cpuOnlyTrace());

  it('has no kernels and three iterations with 0 ns kernel time; the rank is kept', () => {
    withExport(file, (h) => {
      expect(summarizeKernels(new LoadedExport(h)).rows).toEqual([]);
      const a = analyzeIterations(new LoadedExport(h));
      expect(a.iterations.map((r) => [r.iter, r.kernelNs, r.kernelCount])).toEqual([
        [0, 0, 0],
        [1, 0, 0],
        [2, 0, 0],
      ]);
      expect(metadata(h, 'KINETO_DISTRIBUTED_RANK')).toBe('34');
      expect(exportNotes(h).some((n) => /rank 34 of 300, backend gloo/.test(n))).toBe(true);
    });
  });

  it('`iterations` lists the steps with their host side and no GPU columns, and says the trace has no GPU activity (issue #54)', () => {
    const r = runCli(['iterations', file, '--format', 'json']);
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.iterations.map((x: { iter: number; wallNs: number }) => [x.iter, x.wallNs])).toEqual([
      [0, 500_000],
      [1, 500_000],
      [2, 400_000],
    ]);
    expect(out.noGpuWork).toMatch(/no kernel, memcpy or memset/);
    expect(out.hostSide.iterations.map((x: { cpuOpNs: number }) => x.cpuOpNs)).toEqual([123_000, 123_000, 123_000]);
    expect(r.stderr).toMatch(/the capture has no GPU activity \(/);
    const md = runCli(['iterations', file, '--format', 'md']);
    const header = md.stdout.split('\n').find((l) => l.startsWith('| Iter'))!;
    expect(header).toContain('| Wall |');
    expect(header).not.toMatch(/GPU busy|Kernel/);
  });
});

/**
 * Counter events (ph "C"), left out with a note whatever their values: HolisticTraceAnalysis
 * hta/common/trace.py `convert_time_series_to_events` writes `{"pid", "ts", "args": {counter_name:
 * value}, "ph": "C", "name": counter_name, "id": ...}` into traces (its queue-length counters go
 * negative: test data `negative_queue_length_values_check`), and libkineto's `writeCounterEvent`
 * writes `{"ph": "C", "cat", "name", "pid", "tid", "ts", "args": {...}}`.
 */
describe('counter events, negative values included, beside the real 2026 trace', () => {
  const real = readFileSync(KINETO_2026, 'utf8');
  const counters = [
    '{"pid": 0, "ts": 88437691101.800, "args": {"Queue Length": -1}, "ph": "C", "name": "Queue Length", "id": 1}',
    '{"pid": 0, "ts": 88437691101.900, "args": {"Queue Length": 2}, "ph": "C", "name": "Queue Length", "id": 1}',
    '{"ph": "C", "cat": "mtia_counters", "name": "MTIA Counters", "pid": 0, "tid": 0, "ts": 88437691101.950, "args": {"util": 0.5}}',
  ];
  const text = real.replace('"traceEvents": [', `"traceEvents": [\n  ${counters.join(',\n  ')},`);

  it('reads the same kernels and says 3 counter events were not read', () => {
    expect(JSON.parse(text)).toBeTruthy();
    withExport(write('counters.json', text), (h) => {
      expect(summarizeKernels(new LoadedExport(h)).rows.map((r) => r.total)).toEqual([independentKernelNs(real)]);
      expect(exportNotes(h).some((n) => /: 3 counter events \(ph C/.test(n))).toBe(true);
    });
  });
});

describe('a trace-event JSON that is not a PyTorch profiler trace', () => {
  // The Chrome trace event format is shared by many tools; a file of it with no event of a Kineto
  // category (cpu_op, kernel, cuda_runtime, ...) is not read as one.
  it('is refused with a KinetoTraceError naming the file', () => {
    const file = write('chrome.json', JSON.stringify({ traceEvents: [{ name: 'RunTask', cat: 'toplevel', ph: 'X', ts: 1, dur: 2, pid: 1, tid: 1 }] }));
    expect(() => openInput(file)).toThrow(KinetoTraceError);
    expect(() => openInput(file)).toThrow(new RegExp(`^${file}: `));
  });
});
