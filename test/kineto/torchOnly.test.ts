/**
 * pytorch-torch-only (the PyTorch profiler alone): the Kineto trace goes through the one nsys
 * pipeline. Iterations come from the IterationStats timestamps; each iteration's kernel time is
 * checked against an independent reading of the JSON (each kernel placed by its launch call's time
 * into [timestamp(N), timestamp(N+1))). Opening a trace runs the built converter (dist/).
 */
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { openInput, withExport } from '../../src/export/openExport.js';
import { analyzeIterations } from '../../src/iterations/analyzeIterations.js';
import { summarizeKernels } from '../../src/analysis/kernelSummary.js';
import { parseIterationLogFile } from '../../src/logs/parse.js';
import { fixture } from '../helpers/fixtures.js';
import { LoadedExport } from '../../src/load/loadedExport.js';

const TRACE = fixture('pytorch-torch-only', 'trace.json');
const LOG = fixture('pytorch-torch-only', 'iteration_log.txt');

interface RawEvent {
  ph?: string;
  cat?: string;
  ts?: number;
  dur?: number;
  args?: { correlation?: number };
}

/** The test's own reading: the whole JSON (10 MB) and the log's timestamps as UTC, in ns. */
function independentReading() {
  const doc = JSON.parse(readFileSync(TRACE, 'utf8')) as { baseTimeNanoseconds: number; traceEvents: RawEvent[] };
  const base = BigInt(/"baseTimeNanoseconds":\s*(\d+)/.exec(readFileSync(TRACE, 'utf8').slice(0, 4096))![1]);
  const launchUs = new Map<number, number>();
  for (const e of doc.traceEvents) if ((e.cat === 'cuda_runtime' || e.cat === 'cuda_driver') && e.args?.correlation != null) launchUs.set(e.args.correlation, e.ts!);
  const stamps = new Map<number, bigint>();
  for (const line of readFileSync(LOG, 'utf8').split('\n')) {
    const it = /'iter': (\d+)/.exec(line);
    const ts = /'timestamp': '(\d\d)-(\d\d)-(\d{4}) (\d\d):(\d\d):(\d\d)\.(\d{6})'/.exec(line);
    if (!it || !ts) continue;
    const ms = Date.UTC(+ts[3], +ts[1] - 1, +ts[2], +ts[4], +ts[5], +ts[6]);
    stamps.set(Number(it[1]), BigInt(ms) * 1_000_000n + BigInt(ts[7]) * 1000n);
  }
  const perIter = new Map<number, number>();
  let totalNs = 0;
  for (const e of doc.traceEvents) {
    if (e.ph !== 'X' || e.cat !== 'kernel') continue;
    const durNs = Math.round(e.dur! * 1000);
    totalNs += durNs;
    const launchAbs = BigInt(Math.round(launchUs.get(e.args!.correlation!)! * 1000)) + base;
    for (const [n, t] of stamps) {
      const next = stamps.get(n + 1);
      if (next !== undefined && launchAbs >= t && launchAbs < next) perIter.set(n, (perIter.get(n) ?? 0) + durNs);
    }
  }
  return { perIter, totalNs };
}

describe('pytorch-torch-only: a Kineto trace through the nsys pipeline', () => {
  const truth = independentReading();
  const analysis = withExport(TRACE, (h) => analyzeIterations(new LoadedExport(h), { logs: [parseIterationLogFile(LOG)] }));
  const kernels = withExport(TRACE, (h) => summarizeKernels(new LoadedExport(h)));

  it('finds iterations 30..49 from the log timestamps and joins each to its iteration_log.txt record', () => {
    expect(analysis.iterations.map((r) => r.iter)).toEqual(Array.from({ length: 20 }, (_, i) => 30 + i));
    for (const r of analysis.iterations) {
      expect(r.matched).toBe(true);
      expect(r.log!.sources[0].file.endsWith('iteration_log.txt')).toBe(true);
    }
    expect(analysis.coverage.notes.some((n) => /iteration log's timestamps, read as UTC/.test(n))).toBe(true);
  });

  it("gives each iteration the kernel time of the JSON's kernels launched in [timestamp(N), timestamp(N+1)), within 2%", () => {
    expect(truth.perIter.size).toBeGreaterThanOrEqual(20);
    for (const r of analysis.iterations) {
      const expected = truth.perIter.get(r.iter)!;
      expect(expected, `iteration ${r.iter}`).toBeGreaterThan(0);
      expect(Math.abs(r.kernelNs - expected) / expected, `iteration ${r.iter}: ${r.kernelNs} vs ${expected}`).toBeLessThanOrEqual(0.02);
    }
  });

  it("places every kernel: the iterations' kernel total and the kernel summary's total equal the JSON's", () => {
    const placed = analysis.iterations.reduce((a, r) => a + r.kernelNs, 0);
    expect(placed).toBe(truth.totalNs);
    expect(kernels.rows.reduce((a, r) => a + r.total, 0)).toBe(truth.totalNs);
  });

  it('keeps the session start on the absolute clock (ts * 1000 + baseTimeNanoseconds) and removes the temp database on close', () => {
    const h = openInput(TRACE);
    const tmp = h.sqlite.name;
    expect(h.path).toBe(TRACE);
    const row = h.sqlite.prepare('SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME').safeIntegers(true).get() as { utcEpochNs: bigint };
    // The profiler's own span starts first: 4557702243147.361 us after the base time.
    expect(row.utcEpochNs).toBe(1790857026000000000n + 4557702243147361n);
    expect(h.metadata.values.get('EXPORT_PRODUCT_NAME')).toMatch(/Kineto/);
    h.close();
    expect(existsSync(tmp)).toBe(false);
  });
});
