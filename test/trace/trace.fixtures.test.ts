import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { openExport } from '../../src/export/openExport.js';
import type { ExportHandle } from '../../queries/handle.js';
import { analyzeExport } from '../../src/pipeline/analyzeExport.js';
import type { AnalysisRequest } from '../../src/pipeline/request.js';
import { analyzeIterations } from '../../src/iterations/analyzeIterations.js';
import type { IterationRow } from '../../src/iterations/types.js';
import { analyzeGaps, type GapRow } from '../../src/gaps/analyzeGaps.js';
import { parseIterationLogFile } from '../../src/logs/parse.js';
import type { ParsedIterationLog } from '../../src/logs/logRecords.js';
import { writeTrace, type TraceOptions, type TraceSummary } from '../../src/trace/writeTrace.js';
import { causeColor } from '../../src/trace/colors.js';
import { GPU_PID_BASE } from '../../src/trace/tracks.js';
import { fixture, REPO_ROOT } from '../helpers/fixtures.js';
import { LoadedExport } from '../../src/load/loadedExport.js';

const SAMPLE = join(REPO_ROOT, 'sample-data', 'moe-loops-100-119.sqlite');
const SAMPLE_LOG = join(REPO_ROOT, 'sample-data', 'moe-iteration_log.txt');
const LEGACY = fixture('cpp-legacy-windows', 'trace.2.sqlite');
const LEGACY_LOG = fixture('cpp-legacy-windows', 'executor.log');
const TP2 = fixture('pytorch-tp2', 'trace.rank0.sqlite');

interface TraceEvent {
  ph: string;
  name: string;
  cat?: string;
  pid: number;
  tid?: number;
  ts?: number;
  dur?: number;
  cname?: string;
  args?: Record<string, any>;
}
interface TraceFile {
  otherData: Record<string, unknown>;
  traceEvents: TraceEvent[];
  [k: string]: unknown;
}

/** µs (as written) back to integer ns. */
const ns = (us: number) => Math.round(us * 1000);
const GPU_KINDS = new Set(['kernel', 'memcpy', 'memset', 'graph']);

/** Structural check of a trace file; returns the failures (empty when valid). */
function structuralProblems(t: TraceFile): string[] {
  const bad: string[] = [];
  const add = (m: string) => bad.length < 20 && bad.push(m);
  // Perfetto's tokenizer stops at an unknown top-level key and reads displayTimeUnit:"ns" as the
  // ts unit; events come first so that nothing after them can matter.
  for (const k of Object.keys(t)) if (!['traceEvents', 'otherData'].includes(k)) add(`top-level key ${k}`);
  if (Object.keys(t)[0] !== 'traceEvents') add('traceEvents is not the first key');
  if (!Array.isArray(t.traceEvents)) add('traceEvents is not an array');
  const threadNames = new Map<number, string>();
  const threadPid = new Map<number, number>();
  const processNames = new Map<number, string>();
  for (const e of t.traceEvents) {
    if (e.ph === 'M') {
      if (e.name === 'thread_name') {
        threadNames.set(e.tid!, e.args!.name);
        if (threadPid.has(e.tid!) && threadPid.get(e.tid!) !== e.pid) add(`tid ${e.tid} in two processes`);
        threadPid.set(e.tid!, e.pid);
      }
      if (e.name === 'process_name') processNames.set(e.pid, e.args!.name);
      continue;
    }
    if (typeof e.ts !== 'number' || !Number.isFinite(e.ts) || e.ts < 0) add(`${e.ph} ${e.name}: bad ts ${e.ts}`);
    if (typeof e.pid !== 'number' || typeof e.tid !== 'number') add(`${e.ph} ${e.name}: pid/tid not numbers`);
    if (e.ph === 'X') {
      if (typeof e.dur !== 'number' || !Number.isFinite(e.dur) || e.dur < 0) add(`X ${e.name}: bad dur ${e.dur}`);
      if (typeof e.name !== 'string' || e.name === '') add(`X without a name at ${e.ts}`);
      if (!threadNames.has(e.tid!)) add(`X ${e.name} on tid ${e.tid} without a thread_name before it`);
      if (!processNames.has(e.pid)) add(`X ${e.name} in pid ${e.pid} without a process_name before it`);
    } else if (e.ph === 'C') {
      if (!e.args || Object.values(e.args).some((v) => typeof v !== 'number')) add(`C ${e.name}: non-numeric series`);
    } else add(`unexpected phase ${e.ph}`);
  }
  bad.push(...nestingProblems(t.traceEvents));
  return bad;
}

/**
 * Perfetto's rule: `X` events on one (pid, tid) track must nest. Sweep each track in ts order
 * (longer first on ties) with a stack of open ends, on integer ns as Perfetto imports them.
 */
function nestingProblems(events: TraceEvent[]): string[] {
  const byTrack = new Map<string, [number, number, string][]>();
  for (const e of events) {
    if (e.ph !== 'X') continue;
    const k = `${e.pid}:${e.tid}`;
    let l = byTrack.get(k);
    if (!l) byTrack.set(k, (l = []));
    l.push([ns(e.ts!), ns(e.ts!) + ns(e.dur!), e.name]);
  }
  const bad: string[] = [];
  for (const [k, l] of byTrack) {
    l.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
    const stack: number[] = [];
    for (const [s, e, name] of l) {
      while (stack.length && stack[stack.length - 1] <= s) stack.pop();
      if (stack.length && e > stack[stack.length - 1]) {
        if (bad.length < 10) bad.push(`track ${k}: ${name} [${s}, ${e}) crosses the end ${stack[stack.length - 1]} of an enclosing slice`);
      }
      stack.push(e);
    }
  }
  return bad;
}

function gpuOpEvents(t: TraceFile): TraceEvent[] {
  return t.traceEvents.filter((e) => e.ph === 'X' && GPU_KINDS.has(e.cat!));
}

/** Plain SQL: every kernel, memcpy, memset and graph row (optionally overlapping a window). */
function sqlOps(path: string, window?: { startNs: number; endNs: number }): { start: number; end: number }[] {
  const db = new BetterSqlite3(path, { readonly: true });
  try {
    const tables = ['CUPTI_ACTIVITY_KIND_KERNEL', 'CUPTI_ACTIVITY_KIND_MEMCPY', 'CUPTI_ACTIVITY_KIND_MEMSET', 'CUPTI_ACTIVITY_KIND_GRAPH_TRACE'].filter(
      (t) => db.prepare(`SELECT 1 FROM sqlite_master WHERE name = ?`).get(t) !== undefined,
    );
    const where = window ? `WHERE start < ${window.endNs} AND (end > ${window.startNs} OR start >= ${window.startNs})` : '';
    return db.prepare(tables.map((t) => `SELECT start, end FROM ${t} ${where}`).join(' UNION ALL ')).all() as { start: number; end: number }[];
  } finally {
    db.close();
  }
}

const sortedKeys = (xs: { start: number; end: number }[]) => xs.map((x) => `${x.start}-${x.end}`).sort();

interface Built {
  path: string;
  summary: TraceSummary;
  trace: TraceFile;
  rows: IterationRow[];
  gaps: GapRow[];
}

/** What `iterscope trace` asks of the pipeline. */
function traceAnalysis(h: ExportHandle, request: Omit<AnalysisRequest, 'parts'> = {}) {
  return analyzeExport(h, { ...request, parts: ['iterations', 'gaps', 'timeline'] });
}

function build(dir: string, name: string, file: string, logs: ParsedIterationLog[], extra: Partial<TraceOptions & { minGapNs: number }> = {}): Built {
  const path = join(dir, name);
  const h = openExport(file);
  try {
    const { minGapNs, ...opts } = extra;
    const summary = writeTrace(path, traceAnalysis(h, { logs, minGapNs, requireIterations: !!opts.iters }), opts);
    const rows = analyzeIterations(new LoadedExport(h), { logs }).iterations;
    const gaps = analyzeGaps(new LoadedExport(h), { iterations: rows }).gaps;
    return { path, summary, trace: JSON.parse(readFileSync(path, 'utf8')) as TraceFile, rows, gaps };
  } finally {
    h.close();
  }
}

describe('the structural check itself', () => {
  const x = (tid: number, ts: number, dur: number): TraceEvent => ({ ph: 'X', name: `s${ts}`, pid: 1, tid, ts, dur });
  it('accepts nested and sequential slices, rejects crossing ones', () => {
    expect(nestingProblems([x(1, 0, 10), x(1, 2, 3), x(1, 10, 5), x(2, 1, 100)])).toEqual([]);
    expect(nestingProblems([x(1, 0, 10), x(1, 9.999, 1)])).toHaveLength(1);
    expect(nestingProblems([x(1, 0, 10), x(1, 2, 3), x(1, 4, 7)])).toHaveLength(1);
  });
  it('flags unknown top-level keys, bad numbers and unnamed tracks', () => {
    const meta: TraceEvent[] = [
      { ph: 'M', name: 'process_name', pid: 1, args: { name: 'p' } },
      { ph: 'M', name: 'thread_name', pid: 1, tid: 1, args: { name: 't' } },
    ];
    expect(structuralProblems({ traceEvents: [...meta, x(1, 0, 1)], otherData: {} })).toEqual([]);
    expect(structuralProblems({ traceEvents: meta, displayTimeUnit: 'ns', otherData: {} })).toEqual(['top-level key displayTimeUnit']);
    expect(structuralProblems({ traceEvents: [...meta, x(1, 0, -1)], otherData: {} })).toHaveLength(1);
    expect(structuralProblems({ traceEvents: [...meta, x(2, 0, 1)], otherData: {} })).toHaveLength(1);
    expect(structuralProblems({ otherData: {}, traceEvents: meta })).toEqual(['traceEvents is not the first key']);
  });
});

describe('iterscope trace on real exports', () => {
  let dir: string;
  let sample: Built;
  let window: Built;
  let legacy: Built;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'iterscope-trace-'));
    const sampleLog = [parseIterationLogFile(SAMPLE_LOG)];
    sample = build(dir, 'sample.json', SAMPLE, sampleLog);
    window = build(dir, 'sample-105-107.json', SAMPLE, sampleLog, { iters: { first: 105, last: 107 } });
    legacy = build(dir, 'legacy.json', LEGACY, [parseIterationLogFile(LEGACY_LOG)]);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('writes the object form, structurally valid: numeric ts/dur >= 0, named tracks, every track nests', () => {
    for (const b of [sample, window, legacy]) {
      expect(structuralProblems(b.trace), b.path).toEqual([]);
      expect(b.trace.otherData).toMatchObject({ generator: 'iterscope trace', gpuOpSlices: b.summary.gpuOps.ops, gapSlices: b.summary.gaps });
      expect(b.trace.traceEvents.length).toBe(b.summary.events);
      expect(readFileSync(b.path).length).toBe(b.summary.bytes);
    }
  });

  it('GPU stream tracks are strictly sequential (no slice inside another) and named GPU d stream s', () => {
    for (const b of [sample, legacy]) {
      const names = new Map(b.trace.traceEvents.filter((e) => e.name === 'thread_name').map((e) => [e.tid, e.args!.name as string]));
      const byTid = new Map<number, TraceEvent[]>();
      for (const e of gpuOpEvents(b.trace)) {
        let l = byTid.get(e.tid!);
        if (!l) byTid.set(e.tid!, (l = []));
        l.push(e);
      }
      for (const [tid, evs] of byTid) {
        expect(names.get(tid)).toMatch(/^GPU \d+ stream \d+$/);
        evs.sort((a, c) => a.ts! - c.ts!);
        for (let i = 1; i < evs.length; i++) expect(ns(evs[i].ts!)).toBeGreaterThanOrEqual(ns(evs[i - 1].ts!) + ns(evs[i - 1].dur!));
      }
    }
  });

  it('one GPU op slice per kernel, memcpy, memset and graph row, with the exact ns times', () => {
    for (const [b, file] of [
      [sample, SAMPLE],
      [legacy, LEGACY],
    ] as const) {
      const ops = gpuOpEvents(b.trace);
      const rows = sqlOps(file);
      expect(ops.length).toBe(rows.length);
      expect(b.summary.gpuOps.ops).toBe(rows.length);
      expect(sortedKeys(ops.map((e) => ({ start: ns(e.ts!), end: ns(e.ts!) + ns(e.dur!) })))).toEqual(sortedKeys(rows));
    }
    expect(sample.summary.gpuOps.byKind).toEqual({ kernel: 19099, memcpy: 712, memset: 18, graph: 0 });
    expect(legacy.summary.gpuOps.byKind).toEqual({ kernel: 0, memcpy: 198, memset: 0, graph: 6 });
  });

  it('kernel slices carry correlationId and category; memcpy/memset their bytes; graphs their ids', () => {
    const ops = gpuOpEvents(sample.trace);
    const k = ops.find((e) => e.cat === 'kernel' && e.name.startsWith('nvjet'))!;
    expect(k.args).toMatchObject({ category: 'gemm' });
    expect(typeof k.args!.correlationId).toBe('number');
    const m = ops.find((e) => e.cat === 'memcpy')!;
    expect(m.name).toMatch(/^\[CUDA memcpy (Host-to-Device|Device-to-Host|Device-to-Device)\]$/);
    expect(m.args).toMatchObject({ category: 'memcpy' });
    expect(typeof m.args!.bytes).toBe('number');
    expect(ops.find((e) => e.cat === 'memset')!.name).toBe('[CUDA memset]');
    const g = gpuOpEvents(legacy.trace).find((e) => e.cat === 'graph')!;
    expect(g.name).toMatch(/^\[CUDA graph \d+\]$/);
    expect(g.args).toMatchObject({ category: 'cuda_graph' });
    expect(typeof g.args!.graphExecId).toBe('number');
  });

  it('20 iteration slices on "Iterations (pid N)", named by batch composition, with their numbers', () => {
    const its = sample.trace.traceEvents.filter((e) => e.cat === 'iteration');
    expect(its).toHaveLength(20);
    for (const e of its) expect(e.name).toMatch(/^iter \d+: \d+ ctx( \(\d+ tok\))?, \d+ gen$/);
    expect(its.map((e) => e.name)).toContain('iter 103: 1 ctx (768 tok), 15 gen');
    expect(its.map((e) => e.name)).toContain('iter 100: 0 ctx, 16 gen');
    const pname = sample.trace.traceEvents.find((e) => e.name === 'process_name' && e.pid === its[0].pid)!;
    expect(pname.args!.name).toBe(`Iterations (pid ${its[0].pid})`);
    for (const r of sample.rows) {
      const e = its.find((x) => x.args!.iter === r.iter)!;
      expect([ns(e.ts!), ns(e.ts!) + ns(e.dur!)]).toEqual([r.startNs, r.endNs]);
      expect(e.args).toMatchObject({ wallNs: r.wallNs, gpuBusyNs: r.gpuBusyNs, kernelNs: r.kernelNs, phase: r.phase });
      expect(Object.values(e.args!.categoryNs as Record<string, number>).reduce((a, b) => a + b, 0)).toBe(r.kernelNs);
      expect(e.args!.log.activeRequests).toBe(r.log!.activeRequests);
    }
    // cpp-legacy: numbered from the profile range, joined to the legacy log (K = loop + 1).
    expect(legacy.trace.traceEvents.filter((e) => e.cat === 'iteration').map((e) => e.name)).toEqual(
      [40, 41, 42, 43, 44, 45].map((i) => `iter ${i}: 0 ctx, 16 gen`),
    );
  });

  it('gap slices are exactly analyzeGaps\' gaps, named and coloured by primary cause', () => {
    for (const b of [sample, legacy]) {
      const gs = b.trace.traceEvents.filter((e) => e.cat === 'gap');
      expect(gs.length).toBe(b.gaps.length);
      expect(b.gaps.length).toBeGreaterThan(0);
      const got = gs.map((e) => `${e.pid - GPU_PID_BASE}/${ns(e.ts!)}/${ns(e.ts!) + ns(e.dur!)}/${e.name}/${e.cname}`).sort();
      const want = b.gaps.map((g) => `${g.deviceId}/${g.startNs}/${g.endNs}/${g.cause}/${causeColor(g.cause)}`).sort();
      expect(got).toEqual(want);
      for (const e of gs) expect(Object.values(e.args!.causes as Record<string, number>).reduce((a, c) => a + c, 0)).toBe(e.args!.durationNs);
      const names = new Set(b.trace.traceEvents.filter((e) => e.name === 'thread_name' && gs.some((g) => g.tid === e.tid)).map((e) => e.args!.name));
      expect([...names]).toEqual(['GPU 0 idle gaps']);
    }
  });

  it('counter tracks "context tokens" and "active requests": one sample per iteration', () => {
    const cs = sample.trace.traceEvents.filter((e) => e.ph === 'C');
    const tokens = cs.filter((e) => e.name === 'context tokens');
    const active = cs.filter((e) => e.name === 'active requests');
    expect(tokens).toHaveLength(20);
    expect(active).toHaveLength(20);
    const r103 = sample.rows.find((r) => r.iter === 103)!;
    expect(tokens.find((e) => ns(e.ts!) === r103.startNs)!.args).toEqual({ value: 768 });
    expect(active.map((e) => e.args!.value)).toEqual(sample.rows.map((r) => r.log!.activeRequests));
    expect(sample.summary.counterSamples).toBe(40);
  });

  it('--iters 105-107 keeps those iterations and only the ops and gaps overlapping their windows', () => {
    const t = window.trace;
    const its = t.traceEvents.filter((e) => e.cat === 'iteration');
    expect(its.map((e) => e.args!.iter)).toEqual([105, 106, 107]);
    const rs = sample.rows.filter((r) => r.iter >= 105 && r.iter <= 107);
    const w = { startNs: Math.min(...rs.map((r) => r.startNs)), endNs: Math.max(...rs.map((r) => r.endNs)) };
    expect(window.summary.window).toEqual({ first: 105, last: 107, ...w });
    const ops = gpuOpEvents(t);
    const rows = sqlOps(SAMPLE, w);
    expect(ops.length).toBe(rows.length);
    expect(ops.length).toBeGreaterThan(0);
    expect(ops.length).toBeLessThan(gpuOpEvents(sample.trace).length);
    expect(sortedKeys(ops.map((e) => ({ start: ns(e.ts!), end: ns(e.ts!) + ns(e.dur!) })))).toEqual(sortedKeys(rows));
    for (const e of ops) {
      expect(ns(e.ts!)).toBeLessThan(w.endNs);
      expect(ns(e.ts!) + ns(e.dur!)).toBeGreaterThan(w.startNs);
    }
    const gs = t.traceEvents.filter((e) => e.cat === 'gap');
    expect(gs.length).toBe(window.gaps.filter((g) => g.startNs < w.endNs && g.endNs > w.startNs).length);
    expect(t.traceEvents.filter((e) => e.ph === 'C')).toHaveLength(6);
  });

  it('an op overlapping the previous one on its stream goes to an overflow track, times unchanged (pytorch-tp2)', () => {
    const path = join(dir, 'tp2.json');
    const h = openExport(TP2);
    let summary: TraceSummary;
    try {
      summary = writeTrace(path, traceAnalysis(h));
    } finally {
      h.close();
    }
    const t = JSON.parse(readFileSync(path, 'utf8')) as TraceFile;
    expect(structuralProblems(t)).toEqual([]);
    expect(summary.gpuOps.overflowOps).toBeGreaterThan(0);
    const names = new Map(t.traceEvents.filter((e) => e.name === 'thread_name').map((e) => [e.tid, e.args!.name as string]));
    const ops = gpuOpEvents(t);
    expect(ops.filter((e) => / \(overlap \d+\)$/.test(names.get(e.tid!)!))).toHaveLength(summary.gpuOps.overflowOps);
    expect(sortedKeys(ops.map((e) => ({ start: ns(e.ts!), end: ns(e.ts!) + ns(e.dur!) })))).toEqual(sortedKeys(sqlOps(TP2)));
  });

  // A second, independent parser: Python's json module, refusing NaN/Infinity, re-checks the phases and numbers.
  const python = spawnSync('python3', ['--version']).status === 0;
  it.skipIf(!python)('Python json.load accepts the files (no NaN/Infinity) and sees the same events', () => {
    const script = [
      'import json, sys',
      'def bad(c): raise ValueError("non-finite number " + c)',
      'for p in sys.argv[1:]:',
      '    t = json.load(open(p, encoding="utf-8"), parse_constant=bad)',
      '    ev = t["traceEvents"]',
      '    xs = [e for e in ev if e["ph"] == "X"]',
      '    assert all(isinstance(e["ts"], (int, float)) and isinstance(e["dur"], (int, float)) and e["dur"] >= 0 for e in xs)',
      '    print(len(ev), len(xs), sum(1 for e in ev if e["ph"] == "C"))',
    ].join('\n');
    const r = spawnSync('python3', ['-c', script, sample.path, legacy.path], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    const lines = r.stdout.trim().split('\n').map((l) => l.split(' ').map(Number));
    for (const [b, [n, x, c]] of [
      [sample, lines[0]],
      [legacy, lines[1]],
    ] as const) {
      expect(n).toBe(b.trace.traceEvents.length);
      expect(x).toBe(b.trace.traceEvents.filter((e) => e.ph === 'X').length);
      expect(c).toBe(b.trace.traceEvents.filter((e) => e.ph === 'C').length);
    }
  });
});
