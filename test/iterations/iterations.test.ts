import { describe, expect, it } from 'vitest';
import { openExport, withExport } from '../../src/export/openExport.js';
import { analyzeIterations } from '../../src/iterations/analyzeIterations.js';
import type { IterationAnalysis } from '../../src/iterations/types.js';
import { parseIterationLogFile } from '../../src/logs/parse.js';
import { METRIC_KEYS } from '../../src/logs/logRecords.js';
import { fixture } from '../helpers/fixtures.js';
import { LoadedExport } from '../../src/load/loadedExport.js';

function analyze(file: string, logs: string[] = [], opts: Parameters<typeof analyzeIterations>[1] = {}): IterationAnalysis {
  return withExport(file, (h) => analyzeIterations(new LoadedExport(h), { logs: logs.map(parseIterationLogFile), ...opts }));
}

const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => a + i);

describe('pytorch-dense: iterations 0..119 joined to both logs', () => {
  const file = fixture('pytorch-dense', 'trace.sqlite');
  const a = analyze(file, [fixture('pytorch-dense', 'iteration_log.txt'), fixture('pytorch-dense', 'executor.log')]);

  it('finds iterations 0..119 from the NVTX labels', () => {
    expect(a.iterations.map((r) => r.iter)).toEqual(range(0, 119));
    expect(a.coverage.numbering[0].source).toBe('label');
  });

  it('joins every iteration to its iteration_log.txt record and, where one exists, its executor.log line', () => {
    const log = parseIterationLogFile(fixture('pytorch-dense', 'executor.log'));
    const textIters = new Set(log.records.map((r) => r.iter));
    for (const r of a.iterations) {
      expect(r.matched).toBe(true);
      const files = r.log!.sources.map((s) => s.file);
      expect(files.some((f) => f.endsWith('iteration_log.txt'))).toBe(true);
      // executor.log's `iter = K` line describes loop K-1.
      const textSource = r.log!.sources.find((s) => s.file.endsWith('executor.log'));
      expect(!!textSource).toBe(textIters.has(r.iter));
      if (textSource) expect(textSource.sourceIter).toBe(r.iter + 1);
    }
  });

  it('each joined log holds `sources`, then every metric in METRIC_KEYS order, equal to its iteration_log.txt record', () => {
    const byIter = new Map(parseIterationLogFile(fixture('pytorch-dense', 'iteration_log.txt')).records.map((r) => [r.iter, r]));
    for (const r of a.iterations) {
      expect(Object.keys(r.log!)).toEqual(['sources', ...METRIC_KEYS]);
      const rec = byIter.get(r.iter)!;
      // The JSON record's fields (the text line adds only what the JSON lacks).
      for (const k of METRIC_KEYS) if (rec[k] != null) expect([k, r.log![k]]).toEqual([k, rec[k]]);
    }
    expect(a.iterations.filter((r) => r.log!.gpuMemBytes != null).length).toBeGreaterThan(100);
  });

  it("the label's ctx/gen counts equal the log's for all 120", () => {
    expect(a.iterations.every((r) => r.labelMatchesLog === true)).toBe(true);
    expect(a.coverage.labelMismatches).toEqual([]);
  });

  it('per iteration, category ns sum to kernel ns and busy + idle = wall', () => {
    for (const r of a.iterations) {
      const sum = Object.values(r.categoryNs).reduce((x, y) => x + y, 0);
      expect(sum).toBe(r.kernelNs);
      expect(r.gpuBusyNs + r.gpuIdleNs).toBe(r.wallNs);
      expect(r.gpuBusyNs).toBeGreaterThan(0);
      expect(r.gpuBusyNs).toBeLessThanOrEqual(r.wallNs);
    }
  });

  it("an iteration's kernel ns and count equal a plain SQL join of kernels to their API calls in its window", () => {
    const h = openExport(file);
    try {
      for (const iter of [5, 60, 118]) {
        const r = a.iterations.find((x) => x.iter === iter)!;
        const row = h.sqlite
          .prepare(
            `SELECT count(*) AS n, sum(k.end - k.start) AS ns FROM CUPTI_ACTIVITY_KIND_KERNEL k
             JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId
               AND ((r.globalTid >> 24) & 16777215) = ((k.globalPid >> 24) & 16777215)
             WHERE r.start >= ? AND r.start < ?`,
          )
          .get(r.startNs, r.endNs) as { n: number; ns: number };
        expect(r.kernelCount).toBe(row.n);
        expect(r.kernelNs).toBe(row.ns);
      }
    } finally {
      h.close();
    }
  });

  it('iteration windows tile the executor thread: each ends where the next starts', () => {
    for (let i = 0; i + 1 < a.iterations.length; i++) expect(a.iterations[i].endNs).toBe(a.iterations[i + 1].startNs);
  });

  it('puts the prefill of iteration 0 in the context phase and pure decode in generation', () => {
    expect(a.iterations[0].phase).toBe('context');
    expect(a.iterations.some((r) => r.phase === 'mixed')).toBe(true);
    expect(a.iterations.some((r) => r.phase === 'generation')).toBe(true);
  });
});

describe('pytorch-moe-window: a cudaProfilerApi window', () => {
  const a = analyze(fixture('pytorch-moe-window', 'trace.sqlite'), [fixture('pytorch-moe-window', 'iteration_log.txt')]);
  it('holds exactly iterations 100..149, and reports log records 0..99 as outside the capture', () => {
    expect(a.iterations.map((r) => r.iter)).toEqual(range(100, 149));
    expect(a.coverage.recordsOutsideCapture).toEqual(range(0, 99));
    expect(a.iterations.every((r) => r.matched)).toBe(true);
    expect(a.coverage.notes.some((n) => n.includes('outside the capture: 0..99'))).toBe(true);
  });
  it('files the router top-k kernels under moe_routing', () => {
    expect(a.iterations.every((r) => r.categoryNs.moe_routing > 0)).toBe(true);
  });
});

describe('cpp-legacy-windows: unnumbered C++ ranges, graph-level trace', () => {
  const log = fixture('cpp-legacy-windows', 'executor.log');
  it('trace.1 is iteration 20, joined to "Iteration Counter":21', () => {
    const a = analyze(fixture('cpp-legacy-windows', 'trace.1.sqlite'), [log]);
    expect(a.iterations.map((r) => r.iter)).toEqual([20]);
    expect(a.iterations[0].log!.sources[0].sourceIter).toBe(21);
    expect(a.coverage.numbering[0].source).toBe('capture-env');
    // The whole-graph launch is the iteration's kernel time.
    expect(a.iterations[0].graphLaunches).toBe(1);
    expect(a.iterations[0].categoryNs.cuda_graph).toBe(a.iterations[0].kernelNs);
  });
  it('trace.2 is iterations 40..45', () => {
    const a = analyze(fixture('cpp-legacy-windows', 'trace.2.sqlite'), [log]);
    expect(a.iterations.map((r) => r.iter)).toEqual(range(40, 45));
    expect(a.iterations.every((r) => r.matched)).toBe(true);
  });
  it('--first-iter and --profile-range override the numbering', () => {
    expect(analyze(fixture('cpp-legacy-windows', 'trace.2.sqlite'), [], { selection: { firstIter: 7 } }).iterations.map((r) => r.iter)).toEqual(range(7, 12));
    const b = analyze(fixture('cpp-legacy-windows', 'trace.2.sqlite'), [], { selection: { profileRanges: [{ first: 40, last: 45 }] } });
    expect(b.iterations.map((r) => r.iter)).toEqual(range(40, 45));
    expect(b.coverage.numbering[0].source).toBe('profile-range');
  });
});

describe('pytorch-tp2: one export per rank', () => {
  for (const rank of [0, 1]) {
    it(`rank ${rank} yields its own iterations 30..69`, () => {
      const a = analyze(fixture('pytorch-tp2', `trace.rank${rank}.sqlite`), [fixture('pytorch-tp2', `iteration_log.rank${rank}.txt`)]);
      expect(a.iterations.map((r) => r.iter)).toEqual(range(30, 69));
      expect(a.iterations.every((r) => r.categoryNs.communication > 0)).toBe(true);
    });
  }
});
