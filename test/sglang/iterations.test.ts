/**
 * SGLang acceptance (issue 26): forward steps from `scheduler.run_batch` (nsys) and from the torch
 * trace's `step[...]` spans inside it, numbered and composed from sglang.log. Oracles: the export's
 * NVTX rows and kernel/runtime rows read with plain SQL, the trace JSON read whole, the log lines
 * read with a plain regex (line k, 0-based, is forward step k: the fixtures log every step).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { withExport } from '../../src/export/openExport.js';
import { analyzeIterations } from '../../src/iterations/analyzeIterations.js';
import type { IterationAnalysis, IterationRow } from '../../src/iterations/types.js';
import { detectEngine } from '../../src/iterations/sources/index.js';
import { summarizeByPhase } from '../../src/iterations/summary.js';
import { parseIterationLogFile, parseIterationLogText } from '../../src/logs/index.js';
import { runCli } from '../helpers/cli.js';
import { fixture } from '../helpers/fixtures.js';
import { LoadedExport } from '../../src/load/loadedExport.js';

const NSYS = fixture('sglang', 'trace.sqlite');
const NSYS_LOG = fixture('sglang', 'sglang.log');
const TORCH = fixture('sglang-torch', '1795618314.781211-TP-0.trace.json.gz');
const TORCH_LOG = fixture('sglang-torch', 'sglang.log');

interface Step {
  phase: 'context' | 'generation';
  contextRequests: number;
  contextTokens: number;
  generationRequests: number;
}

/** The log as a plain regex reads it: line k (0-based) -> the batch of forward step k. */
function logOracle(path: string): Step[] {
  return readFileSync(path, 'utf8')
    .trimEnd()
    .split('\n')
    .map((line) => {
      const p = /Prefill batch, #new-seq: (\d+), #new-token: (\d+),/.exec(line);
      if (p) return { phase: 'context', contextRequests: +p[1], contextTokens: +p[2], generationRequests: 0 };
      const d = /Decode batch, #running-req: (\d+),/.exec(line)!;
      return { phase: 'generation', contextRequests: 0, contextTokens: 0, generationRequests: +d[1] };
    });
}

/** The export's run_batch range starts, and per step the kernel ns launched from its start to the next one's (plain SQL). */
function nsysOracle(): { starts: number[]; kernelNs: number[]; kernelCount: number[]; totalKernelNs: number } {
  return withExport(NSYS, (h) => {
    const starts = (
      h.sqlite
        .prepare(
          `SELECT n.start AS start FROM NVTX_EVENTS n JOIN StringIds s ON s.id = n.textId
           WHERE n.eventType = 59 AND s.value = 'scheduler.run_batch' ORDER BY n.start`,
        )
        .all() as { start: number }[]
    ).map((r) => r.start);
    const launches = h.sqlite
      .prepare(
        `SELECT r.start AS launch, k.end - k.start AS dur FROM CUPTI_ACTIVITY_KIND_KERNEL k
         JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId AND (r.globalTid >> 24) = (k.globalPid >> 24)`,
      )
      .all() as { launch: number; dur: number }[];
    const kernelNs = starts.map(() => 0);
    const kernelCount = starts.map(() => 0);
    for (const l of launches) {
      let k = -1;
      while (k + 1 < starts.length && starts[k + 1] <= l.launch) k++;
      if (k < 0) continue;
      kernelNs[k] += l.dur;
      kernelCount[k]++;
    }
    const totalKernelNs = (h.sqlite.prepare('SELECT sum(end - start) AS t FROM CUPTI_ACTIVITY_KIND_KERNEL').get() as { t: number }).t;
    return { starts, kernelNs, kernelCount, totalKernelNs };
  });
}

const composition = (r: Pick<IterationRow, 'phase' | 'contextRequests' | 'contextTokens' | 'generationRequests'>) => ({
  phase: r.phase,
  contextRequests: r.contextRequests,
  contextTokens: r.contextTokens,
  generationRequests: r.generationRequests,
});

const range = (first: number, n: number) => Array.from({ length: n }, (_, i) => first + i);

describe('sglang/ (nsys, SGLANG_ENABLE_NVTX_SCHEDULER=1) with sglang.log', () => {
  const a = withExport(NSYS, (h) => analyzeIterations(new LoadedExport(h), { logs: [parseIterationLogFile(NSYS_LOG)] }));
  const log = logOracle(NSYS_LOG);
  const truth = nsysOracle();

  it('80 iterations numbered 40..119, one per scheduler.run_batch range, from the sglang source', () => {
    expect(truth.starts).toHaveLength(80);
    expect(a.iterations.map((r) => r.iter)).toEqual(range(40, 80));
    expect(a.iterations.map((r) => r.startNs)).toEqual(truth.starts);
    expect(a.coverage.source).toEqual({ id: 'sglang', engine: 'sglang' });
    expect(a.coverage.numbering).toEqual([expect.objectContaining({ source: 'log-alignment' })]);
    expect(a.coverage.numbering[0].detail).toMatch(/by a line per step \(80 of 80 steps have a line; the only fit\): unique offset 40; numbers are the lines' positions/);
  });

  it("each iteration has the context requests, context tokens and generation requests of its log line", () => {
    for (const r of a.iterations) {
      expect(composition(r), `iteration ${r.iter}`).toEqual(log[r.iter]);
      expect(r.log!.sources[0]).toMatchObject({ line: r.iter + 1, format: 'sglang-batch' });
    }
    expect(a.coverage.joined).toBe(80);
    expect(a.coverage.recordsOutsideCapture).toEqual([...range(0, 40), ...range(120, 80)]);
    expect(a.iterations.filter((r) => r.phase === 'context')).toHaveLength(12);
  });

  it('places every kernel by its launch: per step, the kernel ns launched from its run_batch to the next', () => {
    a.iterations.forEach((r, i) => {
      expect(r.kernelNs, `iteration ${r.iter}`).toBe(truth.kernelNs[i]);
      expect(r.kernelCount).toBe(truth.kernelCount[i]);
    });
    expect(a.iterations.reduce((x, r) => x + r.kernelNs, 0)).toBe(truth.totalKernelNs);
  });

  it('info names the engine sglang', () => {
    expect(withExport(NSYS, (h) => detectEngine(new LoadedExport(h)))).toEqual({ engine: 'sglang', source: 'sglang' });
    const r = runCli(['info', NSYS, '--format', 'csv']);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^engine,sglang$/m);
  });

  it('the CLI prints the same 80 rows', () => {
    const r = runCli(['iterations', NSYS, '--log', NSYS_LOG, '--format', 'json']);
    expect(r.status).toBe(0);
    const rows = JSON.parse(r.stdout).iterations as IterationRow[];
    expect(rows.map((x) => [x.iter, x.contextRequests, x.contextTokens, x.generationRequests])).toEqual(
      a.iterations.map((x) => [x.iter, log[x.iter].contextRequests, log[x.iter].contextTokens, log[x.iter].generationRequests]),
    );
  });
});

/** The dense log with every 40th decode line kept (SGLang's default --decode-log-interval 40) and, optionally, forward numbers. */
function sparseLog(path: string, forwardNumbers: boolean): string {
  let decodes = 0;
  return readFileSync(path, 'utf8')
    .trimEnd()
    .split('\n')
    .flatMap((line, step) => {
      if (line.includes('Decode batch') && ++decodes % 40 !== 0) return [];
      return [forwardNumbers ? line.replace(/(Prefill|Decode) batch,/, `$1 batch [${step}],`) : line];
    })
    .join('\n');
}

/** No row says a number or a count the dense log contradicts; phases equal the dense log's. */
function expectNothingWrong(a: IterationAnalysis, log: Step[], firstStep: number) {
  a.iterations.forEach((r, k) => {
    const truth = log[firstStep + k];
    expect(r.phase, `step ${k}`).toBe(truth.phase);
    for (const key of ['contextRequests', 'contextTokens', 'generationRequests'] as const) {
      if (r[key] !== null) expect(r[key], `step ${k} ${key}`).toBe(truth[key]);
    }
    if (r.log) expect(r.log.sources[0].sourceIter).toBeGreaterThanOrEqual(0);
  });
}

describe('a sparse decode log (every 40th decode line, no forward numbers)', () => {
  const dense = logOracle(NSYS_LOG);

  it('nsys: no number that is not SGLang\'s (capture order, said in a note and in numbering.source), no wrong count, phases from the launches', () => {
    const logs = [parseIterationLogText(sparseLog(NSYS_LOG, false), 'sparse.log')];
    const a = withExport(NSYS, (h) => analyzeIterations(new LoadedExport(h), { logs }));
    expect(a.iterations.map((r) => r.iter)).toEqual(range(0, 80));
    expect(a.coverage.numbering[0].source).toBe('capture-order');
    expect(a.coverage.numbering[0].detail).toMatch(/capture order \(not SGLang's forward iterations/);
    expectNothingWrong(a, dense, 40);
    expect(a.iterations.every((r) => r.phaseBasis === 'launches' || r.log)).toBe(true);
    expect(a.coverage.phaseRule).toMatchObject({ confidence: 'medium', steps: a.iterations.filter((r) => !r.log).length });
    expect(a.coverage.notes.some((n) => /phase from what run_batch launched: a CUDA-graph launch = decode; eager kernel launches only = prefill/.test(n))).toBe(true);
    // The table says what its numbers and phases are; the JSON rows carry it too.
    const dir = mkdtempSync(join(tmpdir(), 'iterscope-sglang-sparse-'));
    writeFileSync(join(dir, 'sparse.log'), sparseLog(NSYS_LOG, false));
    const csv = runCli(['iterations', NSYS, '--log', join(dir, 'sparse.log'), '--format', 'csv']);
    expect(csv.stdout.split('\n')[0]).toMatch(/^Capture step,Phase,Phase from,Ctx reqs,/);
    expect(csv.stdout.split('\n')[1]).toMatch(/^0,generation,launches,,,,/);
    const json = JSON.parse(runCli(['iterations', NSYS, '--log', join(dir, 'sparse.log'), '--format', 'json']).stdout);
    expect(json.iterations[0]).toMatchObject({ iter: 0, captureOrder: true, phaseBasis: 'launches' });
    expect(json.coverage.numbering[0].source).toBe('capture-order');
  });

  it('torch: the prefill sequence joins each EXTEND step to its Prefill line; decode steps keep their span counts', () => {
    const logs = [parseIterationLogText(sparseLog(TORCH_LOG, false), 'sparse.log')];
    const a = withExport(TORCH, (h) => analyzeIterations(new LoadedExport(h), { logs }));
    const log = logOracle(TORCH_LOG);
    expect(a.iterations.map((r) => r.iter)).toEqual(range(0, 20));
    expect(a.coverage.numbering[0].source).toBe('capture-order');
    expect(a.coverage.numbering[0].detail).toMatch(/by the prefill sequence/);
    expectNothingWrong(a, log, 40);
    const prefills = a.iterations.filter((r) => r.phase === 'context');
    expect(prefills).toHaveLength(4);
    const sparse = sparseLog(TORCH_LOG, false).split('\n');
    const denseLines = readFileSync(TORCH_LOG, 'utf8').split('\n');
    for (const r of prefills) expect(sparse[r.log!.sources[0].line - 1], `step ${r.iter}`).toBe(denseLines[40 + r.iter]);
    expect(a.iterations.every((r) => r.contextRequests !== null && r.generationRequests !== null)).toBe(true);
  });

  it('with forward numbers [N]: numbered 40..119 by them, each line joined to its own step', () => {
    const logs = [parseIterationLogText(sparseLog(NSYS_LOG, true), 'sparse-numbered.log')];
    const a = withExport(NSYS, (h) => analyzeIterations(new LoadedExport(h), { logs }));
    expect(a.iterations.map((r) => r.iter)).toEqual(range(40, 80));
    expect(a.coverage.numbering[0].detail).toMatch(/forward-iteration numbers \[N\]/);
    expectNothingWrong(a, dense, 40);
    for (const r of a.iterations) if (r.log) expect(r.log.sources[0].sourceIter).toBe(r.iter);
    const logged = new Set(sparseLog(NSYS_LOG, true).split('\n').map((l) => Number(/batch \[(\d+)\]/.exec(l)![1])));
    expect(a.iterations.filter((r) => r.log).map((r) => r.iter)).toEqual(range(40, 80).filter((s) => logged.has(s)));
    // --summary: a per-request figure only over a phase whose every step has its count.
    const phases = summarizeByPhase(a.iterations, a.categories);
    expect(phases.find((p) => p.phase === 'context')!.gpuNsPerContextToken).toBeGreaterThan(0);
    expect(phases.find((p) => p.phase === 'generation')!.gpuNsPerGenerationRequest).toBeNull();
  });
});

describe('sglang/ numbering without a usable log', () => {
  const dense = logOracle(NSYS_LOG);

  it('no log: capture order 0..79, phases from the launches equal the log\'s, no counts', () => {
    const a = withExport(NSYS, (h) => analyzeIterations(new LoadedExport(h)));
    expect(a.iterations.map((r) => r.iter)).toEqual(range(0, 80));
    expect(a.coverage.numbering[0]).toMatchObject({ source: 'capture-order' });
    a.iterations.forEach((r, k) => {
      expect(r.phase).toBe(dense[40 + k].phase);
      expect([r.contextRequests, r.generationRequests]).toEqual([null, null]);
    });
  });

  it('--first-iter 40: those numbers, joined by the alignment', () => {
    const a = withExport(NSYS, (h) => analyzeIterations(new LoadedExport(h), { selection: { firstIter: 40 }, logs: [parseIterationLogFile(NSYS_LOG)] }));
    expect(a.iterations.map((r) => r.iter)).toEqual(range(40, 80));
    expect(a.coverage.numbering[0].source).toBe('first-iter');
    for (const r of a.iterations) expect(composition(r)).toEqual(dense[r.iter]);
  });

  it('a log that repeats itself fits at two places: capture order, no joins, a note that says why', () => {
    const text = readFileSync(NSYS_LOG, 'utf8').trimEnd();
    const a = withExport(NSYS, (h) => analyzeIterations(new LoadedExport(h), { logs: [parseIterationLogText(`${text}\n${text}`, 'twice.log')] }));
    expect(a.coverage.numbering[0].source).toBe('capture-order');
    expect(a.coverage.numbering[0].detail).toMatch(/more than one place/);
    expect(a.coverage.joined).toBe(0);
  });

  it('a log from another run fits nowhere: capture order, no joins', () => {
    const a = withExport(NSYS, (h) => analyzeIterations(new LoadedExport(h), { logs: [parseIterationLogFile(TORCH_LOG)] }));
    expect(a.coverage.numbering[0].source).toBe('capture-order');
    expect(a.coverage.numbering[0].detail).toMatch(/fit the 80 steps nowhere/);
    expect(a.coverage.joined).toBe(0);
  });
});

interface TraceEvent {
  ph?: string;
  cat?: string;
  name?: string;
  ts?: number;
  dur?: number;
  args?: { correlation?: number };
}

describe('sglang-torch/ (PyTorch profiler, gzipped) with sglang.log', () => {
  const a = withExport(TORCH, (h) => analyzeIterations(new LoadedExport(h), { logs: [parseIterationLogFile(TORCH_LOG)] }));
  const log = logOracle(TORCH_LOG);
  const events = (JSON.parse(gunzipSync(readFileSync(TORCH)).toString('utf8')) as { traceEvents: TraceEvent[] }).traceEvents;

  it('20 iterations numbered 40..59, each composed as its step[...] span and its log line say', () => {
    expect(a.iterations.map((r) => r.iter)).toEqual(range(40, 20));
    const spans = events.filter((e) => e.cat === 'user_annotation' && e.name!.startsWith('step[')).sort((x, y) => x.ts! - y.ts!);
    expect(spans).toHaveLength(20);
    a.iterations.forEach((r, i) => {
      expect(composition(r), `iteration ${r.iter}`).toEqual(log[r.iter]);
      const m = /^step\[(EXTEND|DECODE) bs=(\d+)(?: toks=(\d+))?\]$/.exec(spans[i].name!)!;
      expect(r.labelCounts).toEqual(m[1] === 'EXTEND' ? { iter: null, contextRequests: +m[2], contextTokens: +m[3], generationRequests: 0, generationTokens: null } : { iter: null, contextRequests: 0, contextTokens: 0, generationRequests: +m[2], generationTokens: null });
      expect(r.labelMatchesLog).toBe(true);
      expect(r.label).toBe('scheduler.run_batch');
    });
  });

  it('kernels placed by launch: per step, the JSON kernels whose runtime call starts in its run_batch .. next run_batch', () => {
    const runs = events.filter((e) => e.cat === 'user_annotation' && e.name === 'scheduler.run_batch').map((e) => e.ts!).sort((x, y) => x - y);
    const launchAt = new Map<number, number>();
    for (const e of events) if ((e.cat === 'cuda_runtime' || e.cat === 'cuda_driver') && e.args?.correlation != null) launchAt.set(e.args.correlation, e.ts!);
    const perStep = runs.map(() => 0);
    for (const e of events) {
      if (e.cat !== 'kernel') continue;
      const t = launchAt.get(e.args!.correlation!)!;
      let k = -1;
      while (k + 1 < runs.length && runs[k + 1] <= t) k++;
      if (k >= 0) perStep[k] += Math.round(e.dur! * 1000);
    }
    a.iterations.forEach((r, i) => expect(r.kernelNs, `iteration ${r.iter}`).toBe(perStep[i]));
  });
});
