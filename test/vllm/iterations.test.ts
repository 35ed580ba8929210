/**
 * vLLM acceptance (issue 16): iteration windows from `execute_context_...` ranges, numbered by a
 * unique whole-sequence alignment with the log's `Iteration(N)` records; oracles are the export's
 * NVTX rows read with plain SQL, the log lines read with a plain regex, and `nsys stats`.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { IterationError } from '../../src/errors.js';
import { withExport } from '../../src/export/openExport.js';
import { analyzeIterations } from '../../src/iterations/analyzeIterations.js';
import type { IterationAnalysis } from '../../src/iterations/types.js';
import { detectEngine } from '../../src/iterations/sources/index.js';
import { summarizeByPhase } from '../../src/iterations/summary.js';
import { parseIterationLogFile, parseIterationLogText } from '../../src/logs/index.js';
import { runCli } from '../helpers/cli.js';
import { fixture } from '../helpers/fixtures.js';
import { LoadedExport } from '../../src/load/loadedExport.js';

const DENSE = fixture('vllm-dense', 'trace.sqlite');
const DENSE_LOG = fixture('vllm-dense', 'vllm.log');
const FIELD = fixture('fieldguide-vllm', 'trace.sqlite');
const FIELD_LOG = fixture('fieldguide-vllm', 'vllm.log');

interface Counts {
  contextRequests: number;
  contextTokens: number;
  generationRequests: number;
  generationTokens: number;
}

/** The log as plain regex reads it: Iteration(N) -> counts. */
function logOracle(path: string): Map<number, Counts> {
  const out = new Map<number, Counts>();
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const m = /Iteration\((\d+)\): (\d+) context requests, (\d+) context tokens, (\d+) generation requests, (\d+) generation tokens,/.exec(line);
    if (m) out.set(+m[1], { contextRequests: +m[2], contextTokens: +m[3], generationRequests: +m[4], generationTokens: +m[5] });
  }
  return out;
}

/** The export's vLLM step ranges by start, with the counts in their text, read with plain SQL. */
function nvtxOracle(path: string): { start: number; counts: Counts }[] {
  return withExport(path, (h) =>
    (
      h.sqlite
        .prepare(
          `SELECT n.start AS start, coalesce(s.value, n.text) AS text FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId
           WHERE n.eventType = 59 AND coalesce(s.value, n.text) LIKE 'execute_context_%' ORDER BY n.start`,
        )
        .all() as { start: number; text: string }[]
    ).map((r) => {
      const m = /^execute_context_(\d+)\((\d+)\)_generation_(\d+)\((\d+)\)$/.exec(r.text)!;
      return { start: r.start, counts: { contextRequests: +m[1], contextTokens: +m[2], generationRequests: +m[3], generationTokens: +m[4] } };
    }),
  );
}

const countsOf = (r: IterationAnalysis['iterations'][number]) => ({
  contextRequests: r.contextRequests,
  contextTokens: r.contextTokens,
  generationRequests: r.generationRequests,
  generationTokens: r.generationTokens,
});

describe('vllm-dense with vllm.log', () => {
  const a = withExport(DENSE, (h) => analyzeIterations(new LoadedExport(h), { logs: [parseIterationLogFile(DENSE_LOG)] }));
  const log = logOracle(DENSE_LOG);
  const ranges = nvtxOracle(DENSE);

  it('finds iterations 40..79, one per execute_context_ range, from the vllm source', () => {
    expect(ranges).toHaveLength(40);
    expect(a.iterations.map((r) => r.iter)).toEqual(Array.from({ length: 40 }, (_, i) => 40 + i));
    expect(a.iterations.map((r) => r.startNs)).toEqual(ranges.map((r) => r.start));
    expect(a.coverage.source).toEqual({ id: 'vllm', engine: 'vllm' });
    expect(a.coverage.numbering).toEqual([expect.objectContaining({ source: 'log-alignment' })]);
    expect(a.coverage.numbering[0].detail).toMatch(/unique offset 40 over 40 windows/);
  });

  it('joins all 40 to Iteration(40)..Iteration(79)', () => {
    expect(a.coverage.joined).toBe(40);
    expect(a.iterations.map((r) => r.log?.sources[0].sourceIter)).toEqual(a.iterations.map((r) => r.iter));
    expect(a.iterations.every((r) => r.log?.sources[0].format === 'vllm-iteration-details')).toBe(true);
    expect(a.coverage.recordsOutsideCapture).toEqual(Array.from({ length: 40 }, (_, i) => i));
  });

  it("every window's ctx/gen counts equal the log's line and its own NVTX label", () => {
    a.iterations.forEach((r, i) => {
      expect(countsOf(r), `iteration ${r.iter}`).toEqual(log.get(r.iter));
      expect(ranges[i].counts, `label of iteration ${r.iter}`).toEqual(log.get(r.iter));
      expect(r.labelMatchesLog).toBe(true);
    });
    expect(a.coverage.labelMismatches).toEqual([]);
    expect(new Set(a.iterations.map((r) => r.phase))).toEqual(new Set(['mixed', 'generation']));
  });

  it('--summary gives per-phase GPU ns per generation token from the counts', () => {
    const phases = summarizeByPhase(a.iterations, a.categories);
    expect(phases.map((p) => p.phase)).toEqual(['mixed', 'generation']);
    for (const p of phases) {
      const rs = a.iterations.filter((r) => r.phase === p.phase);
      const kernel = rs.reduce((x, r) => x + r.kernelNs, 0);
      const tokens = rs.reduce((x, r) => x + log.get(r.iter)!.generationTokens, 0);
      expect(p.gpuNsPerGenerationToken).toBeCloseTo(kernel / tokens, 6);
    }
  });

  it('info names the engine', () => {
    expect(withExport(DENSE, (h) => detectEngine(new LoadedExport(h)))).toEqual({ engine: 'vllm', source: 'vllm' });
    expect(withExport(fixture('pytorch-dense', 'trace.sqlite'), (h) => detectEngine(new LoadedExport(h)))).toEqual({ engine: 'tensorrt-llm', source: 'trtllm-pytorch' });
    const r = runCli(['info', DENSE, '--format', 'csv']);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^engine,vllm$/m);
  });
});

describe('vllm-dense numbering without a usable log', () => {
  it('without a log: an IterationError naming --first-iter; with --first-iter 40 the counts come from the labels', () => {
    expect(() => withExport(DENSE, (h) => analyzeIterations(new LoadedExport(h)))).toThrow(IterationError);
    expect(() => withExport(DENSE, (h) => analyzeIterations(new LoadedExport(h)))).toThrow(/--first-iter/);
    const a = withExport(DENSE, (h) => analyzeIterations(new LoadedExport(h), { selection: { firstIter: 40 } }));
    const ranges = nvtxOracle(DENSE);
    expect(a.iterations.map((r) => r.iter)).toEqual(Array.from({ length: 40 }, (_, i) => 40 + i));
    a.iterations.forEach((r, i) => expect(countsOf(r)).toEqual(ranges[i].counts));
    expect(a.coverage.numbering[0].source).toBe('first-iter');
  });

  it('an ambiguous alignment (the log repeats itself) stops with a message naming --first-iter', () => {
    const text = readFileSync(DENSE_LOG, 'utf8').trimEnd().split('\n');
    const doubled = [...text, ...text.map((l) => l.replace(/Iteration\((\d+)\)/, (_, n) => `Iteration(${+n + 80})`))].join('\n');
    const logs = [parseIterationLogText(doubled, 'doubled.log')];
    expect(() => withExport(DENSE, (h) => analyzeIterations(new LoadedExport(h), { logs }))).toThrow(/2 offsets \(40, 120\).*ambiguous.*--first-iter/);
  });

  it('a log from another run: one stderr line that says so, exit 2; with --first-iter the missing records are reported', () => {
    const r = runCli(['iterations', DENSE, '--log', FIELD_LOG, '--format', 'csv']);
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/another run.*--first-iter/);
    const a = withExport(DENSE, (h) => analyzeIterations(new LoadedExport(h), { selection: { firstIter: 40 }, logs: [parseIterationLogFile(FIELD_LOG)] }));
    expect(a.coverage.joined).toBe(20);
    expect(a.coverage.windowsWithoutRecord).toEqual(Array.from({ length: 20 }, (_, i) => 60 + i));
  });

  it('a truncated last line and foreign lines in the log are counted, the alignment still holds', () => {
    const dir = mkdtempSync(join(tmpdir(), 'iterscope-vllm-'));
    const path = join(dir, 'vllm.log');
    const lines = readFileSync(DENSE_LOG, 'utf8').trimEnd().split('\n');
    writeFileSync(path, ['(APIServer pid=600) INFO 11-23 06:18:50 [api_server.py:1] Starting vLLM API server', ...lines, lines[0].replace('Iteration(0)', 'Iteration(80)').slice(0, 110)].join('\n'));
    const a = withExport(DENSE, (h) => analyzeIterations(new LoadedExport(h), { logs: [parseIterationLogFile(path)] }));
    expect(a.coverage.joined).toBe(40);
    expect(a.coverage.logSkippedLines).toBe(2);
    expect(a.coverage.notes).toContain('2 log lines were not iteration records (skipped)');
  });
});

describe('vLLM logs of several DP ranks', () => {
  it('says that one log holds several engine cores (Iteration(N) is per core)', () => {
    const text = readFileSync(DENSE_LOG, 'utf8');
    const logs = [parseIterationLogText(text + text.replaceAll('EngineCore_DP0', 'EngineCore_DP1'), 'two-ranks.log')];
    expect(new Set(logs[0].records.map((r) => r.rank))).toEqual(new Set([0, 1]));
    const a = withExport(DENSE, (h) => analyzeIterations(new LoadedExport(h), { logs }));
    expect(a.coverage.notes.some((n) => n.startsWith('the vLLM log lines come from DP ranks 0, 1'))).toBe(true);
    const one = withExport(DENSE, (h) => analyzeIterations(new LoadedExport(h), { logs: [parseIterationLogFile(DENSE_LOG)] }));
    expect(one.coverage.notes.some((n) => n.includes('DP ranks'))).toBe(false);
  });
});

describe('vllm-dense kernels and NVTX still equal nsys stats', () => {
  it.each([
    [['kernels'], 'cuda_gpu_kern_sum.csv'],
    [['nvtx'], 'nvtx_sum.csv'],
    [['nvtx', '--gpu'], 'nvtx_gpu_proj_sum.csv'],
  ])('%s is byte-identical to %s', (args, csv) => {
    const r = runCli([...args, DENSE, '--format', 'csv']);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(readFileSync(fixture('vllm-dense', 'nsys-stats', csv), 'utf8'));
  });
});

describe('fieldguide-vllm (whole run, the field guide command line)', () => {
  it('numbers iterations 0..N-1 from the log alone and joins every one', () => {
    const log = logOracle(FIELD_LOG);
    const ranges = nvtxOracle(FIELD);
    const a = withExport(FIELD, (h) => analyzeIterations(new LoadedExport(h), { logs: [parseIterationLogFile(FIELD_LOG)] }));
    expect(ranges.length).toBe(log.size);
    expect(a.iterations.map((r) => r.iter)).toEqual(ranges.map((_, i) => i));
    expect(a.coverage.joined).toBe(ranges.length);
    a.iterations.forEach((r) => expect(countsOf(r)).toEqual(log.get(r.iter)));
  });

  it('report runs; info shows the memory-usage table and the engine', () => {
    const rep = runCli(['report', FIELD, '--log', FIELD_LOG]);
    expect(rep.status).toBe(0);
    expect(rep.stdout.length).toBeGreaterThan(1000);
    const info = runCli(['info', FIELD, '--format', 'csv']);
    const rows = withExport(FIELD, (h) => (h.sqlite.prepare('SELECT count(*) AS n FROM CUDA_GPU_MEMORY_USAGE_EVENTS').get() as { n: number }).n);
    expect(info.stdout).toContain(`CUDA_GPU_MEMORY_USAGE_EVENTS,${rows}`);
    expect(info.stdout).toMatch(/^engine,vllm$/m);
  });

  it.each([
    [['kernels'], 'cuda_gpu_kern_sum.csv'],
    [['nvtx'], 'nvtx_sum.csv'],
  ])('%s is byte-identical to %s', (args, csv) => {
    const r = runCli([...args, FIELD, '--format', 'csv']);
    expect(r.stdout).toBe(readFileSync(fixture('fieldguide-vllm', 'nsys-stats', csv), 'utf8'));
  });
});
