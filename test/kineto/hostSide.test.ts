/**
 * The host side from aten ops. pytorch-torch-only: Kineto alone (launch calls and ops on one
 * clock), checked against the JSON read independently. pytorch-torch-trace: dual mode, the nsys
 * export with the CPU-only Kineto trace of the same run. Opening a trace runs the built converter.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { openInput, withExport } from '../../src/export/openExport.js';
import { analyzeIterations } from '../../src/iterations/analyzeIterations.js';
import { parseIterationLogFile } from '../../src/logs/parse.js';
import { analyzeAtenOps } from '../../src/kineto/atenOps.js';
import { attachTorchTrace } from '../../src/kineto/attachTorchTrace.js';
import { alignTorchClock } from '../../src/kineto/clockAlignment.js';
import { cpuOps, launchCalls } from '../../src/load/kinetoReads.js';
import { fixture } from '../helpers/fixtures.js';
import { runCli } from '../helpers/cli.js';
import { LoadedExport } from '../../src/load/loadedExport.js';

const ONLY = (f: string) => fixture('pytorch-torch-only', f);
const DUAL = (f: string) => fixture('pytorch-torch-trace', f);
const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => a + i);

describe('pytorch-torch-only: aten ops per iteration from the trace alone', () => {
  const { analysis, host } = withExport(ONLY('trace.json'), (h) => {
    const a = analyzeIterations(new LoadedExport(h), { logs: [parseIterationLogFile(ONLY('iteration_log.txt'))] });
    return { analysis: a, host: analyzeAtenOps(new LoadedExport(h), a.iterations) };
  });
  const doc = JSON.parse(readFileSync(ONLY('trace.json'), 'utf8')) as { traceEvents: { ph?: string; cat?: string; name?: string; ts?: number; dur?: number }[] };
  const t0 = Math.min(...doc.traceEvents.filter((e) => e.ph === 'X' && typeof e.ts === 'number').map((e) => e.ts!));
  const rel = (us: number) => Math.round((us - t0) * 1000);

  it('counts the launch calls of each iteration as the JSON has them, every one inside an aten op', () => {
    expect(host.iterations.map((r) => r.iter)).toEqual(range(30, 49));
    const launches = doc.traceEvents.filter((e) => e.ph === 'X' && (e.name === 'cudaLaunchKernel' || e.name === 'cuLaunchKernelEx')).map((e) => rel(e.ts!));
    const graphs = doc.traceEvents.filter((e) => e.ph === 'X' && e.name === 'cudaGraphLaunch').map((e) => rel(e.ts!));
    for (const [i, r] of host.iterations.entries()) {
      const w = analysis.iterations[i];
      const inWindow = (t: number) => t >= w.startNs && t < w.endNs;
      expect(r.launchCalls, `iteration ${r.iter}`).toBe(launches.filter(inWindow).length);
      expect(r.graphLaunches, `iteration ${r.iter}`).toBe(graphs.filter(inWindow).length);
      expect(r.attributedLaunchCalls).toBe(r.launchCalls);
    }
    expect(host.totals.launchCalls).toBe(launches.length);
    expect(host.totals.attributedShare).toBe(1);
  });

  it("self times add up to the outermost ops' time, and equal an independent nesting of the JSON", () => {
    let self = 0;
    for (const r of host.iterations) expect(r.topOps.length).toBeGreaterThan(0);
    withExport(ONLY('trace.json'), (h) => {
      const ops = cpuOps(new LoadedExport(h));
      expect(ops.count).toBe(doc.traceEvents.filter((e) => e.cat === 'cpu_op').length);
      let outer = 0;
      for (let i = 0; i < ops.count; i++) {
        self += ops.selfNs[i];
        if (ops.depth[i] === 0) outer += ops.end[i] - ops.start[i];
      }
      expect(self).toBe(outer);
    });
    // aten::matmul, independently: duration minus the ops directly inside it (same thread, by time).
    const cpu = doc.traceEvents.filter((e) => e.cat === 'cpu_op').map((e) => ({ name: e.name!, s: rel(e.ts!), e: rel(e.ts!) + Math.round(e.dur! * 1000) }));
    let expected = 0;
    for (const op of cpu.filter((o) => o.name === 'aten::matmul')) {
      const inside = cpu.filter((o) => o !== op && o.s >= op.s && o.e <= op.e);
      const direct = inside.filter((c) => !inside.some((p) => p !== c && p.s <= c.s && c.e <= p.e && (p.s < c.s || p.e > c.e)));
      expected += op.e - op.s - direct.reduce((a, c) => a + c.e - c.s, 0);
    }
    withExport(ONLY('trace.json'), (h) => {
      const ops = cpuOps(new LoadedExport(h));
      let got = 0;
      for (let i = 0; i < ops.count; i++) if (ops.names.get(ops.nameId[i]) === 'aten::matmul') got += ops.selfNs[i];
      expect(expected).toBeGreaterThan(0);
      expect(got).toBe(expected);
    });
  });

  it('measures the first op to first kernel time, and GPU time by launching op covers the kernels', () => {
    for (const [i, r] of host.iterations.entries()) {
      expect(r.firstOpStartNs).not.toBeNull();
      expect(r.firstKernelStartNs).not.toBeNull();
      expect(r.firstOpToFirstKernelNs).toBe(r.firstKernelStartNs! - r.firstOpStartNs!);
      const byOp = r.gpuTimeByOp.reduce((a, o) => a + o.kernelNs, 0);
      expect(byOp).toBeLessThanOrEqual(analysis.iterations[i].kernelNs);
    }
  });

  it('finds the true clock offset (0: one clock) from a start 300 us off, within its spread', () => {
    const h = openInput(ONLY('trace.json'));
    try {
      const loaded = new LoadedExport(h);
      const a = alignTorchClock(cpuOps(loaded), launchCalls(loaded), 300_000);
      expect(a.matchedLaunches).toBe(a.sampledLaunches);
      expect(a.spreadNs).toBeLessThan(20_000);
      expect(Math.abs(a.offsetNs)).toBeLessThanOrEqual(a.spreadNs / 2);
    } finally {
      h.close();
    }
  });
});

describe('pytorch-torch-trace: dual mode (nsys export + CPU-only Kineto trace)', () => {
  const { analysis, dual } = withExport(DUAL('trace.sqlite'), (h) => {
    const a = analyzeIterations(new LoadedExport(h), { logs: [parseIterationLogFile(DUAL('iteration_log.txt'))] });
    return { analysis: a, dual: attachTorchTrace(new LoadedExport(h), DUAL('trace.json'), a.iterations) };
  });

  it('aligns the clocks: most launch calls fall inside an aten op, offset known to a few us', () => {
    const a = dual.alignment;
    expect(a.sampledLaunches).toBeGreaterThan(700);
    expect(a.matchedLaunches / a.sampledLaunches).toBeGreaterThanOrEqual(0.9);
    expect(a.spreadNs).toBeLessThan(50_000);
    expect(Math.abs(a.refinementNs)).toBeLessThan(1_000_000);
    expect(a.equallyGoodRanges).toBe(0);
    expect(dual.notes[0]).toMatch(/^clocks: Kineto \+ [\d.]+ us = nsys .*spread [\d.]+ us/);
  });

  it('attaches aten-op CPU time to iterations 30..49', () => {
    expect(analysis.iterations.map((r) => r.iter)).toEqual(range(30, 49));
    expect(dual.iterations.map((r) => r.iter)).toEqual(range(30, 49));
    for (const r of dual.iterations) {
      expect(r.opCount, `iteration ${r.iter}`).toBeGreaterThan(0);
      expect(r.cpuOpNs).toBeGreaterThan(0);
      expect(r.topOps[0].selfNs).toBeGreaterThan(0);
    }
  });

  it('attributes at least 90% of the cudaLaunchKernel / cuLaunchKernelEx calls made in iterations (graph launches apart)', () => {
    // The calls in iterations, counted from the export independently.
    const db = openInput(DUAL('trace.sqlite'));
    const windows = analysis.iterations.map((r) => [r.startNs, r.endNs]);
    let kernelLaunches = 0;
    let graphLaunches = 0;
    for (const row of db.sqlite
      .prepare(`SELECT r.start AS start, s.value AS name FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId WHERE s.value LIKE 'cudaLaunchKernel%' OR s.value LIKE 'cuLaunchKernelEx%' OR s.value LIKE 'cudaGraphLaunch%'`)
      .all() as { start: number; name: string }[]) {
      if (!windows.some(([a, b]) => row.start >= a && row.start < b)) continue;
      if (row.name.startsWith('cudaGraphLaunch')) graphLaunches++;
      else kernelLaunches++;
    }
    db.close();
    expect(dual.totals.launchCalls).toBe(kernelLaunches);
    expect(dual.totals.graphLaunches).toBe(graphLaunches);
    expect(dual.totals.attributedLaunchCalls / kernelLaunches).toBeGreaterThanOrEqual(0.9);
    expect(dual.notes.some((n) => /kernel-launch calls in iterations \([\d.]+%\) attributed/.test(n))).toBe(true);
  });

  it('the CLI prints the offset, the spread and the attributed share', () => {
    const r = runCli(['iterations', DUAL('trace.sqlite'), '--log', DUAL('iteration_log.txt'), '--torch-trace', DUAL('trace.json'), '--format', 'csv']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/iterscope: clocks: Kineto \+ [\d.]+ us = nsys .*spread [\d.]+ us/);
    expect(r.stderr).toMatch(/iterscope: \d+ of \d+ kernel-launch calls in iterations \([\d.]+%\) attributed/);
    expect(r.stdout).toMatch(/CPU in aten ops \(ns\)/);
  });
});
