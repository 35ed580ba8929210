/**
 * `iterscope engines` on the field guide's three captures: fieldguide-vllm (vLLM markers and its
 * vllm.log), plain-fieldguide (no markers; its benchmark_results.json) and sglang (SGLang's
 * scheduler ranges, CUDA-profiler window of steps 40..119, its sglang.log). Every expected value is
 * read here from the nsys-stats CSVs, the token sources and the export with plain SQL, never
 * through iterscope's own code.
 */
import BetterSqlite3 from 'better-sqlite3';
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { readCsvObjects } from '../helpers/csv.js';
import { fixture } from '../helpers/fixtures.js';

const VLLM = fixture('fieldguide-vllm', 'trace.sqlite');
const VLLM_LOG = fixture('fieldguide-vllm', 'vllm.log');
const PLAIN = fixture('plain-fieldguide', 'trace.sqlite');
const BENCH = fixture('plain-fieldguide', 'benchmark_results.json');
const SGLANG = fixture('sglang', 'trace.sqlite');
const SGLANG_LOG = fixture('sglang', 'sglang.log');

interface Row {
  label: string;
  engine: string;
  file: string;
  status: string;
  boundary: string;
  tokenSource: string;
  generatedTokens: number | null;
  contextTokens: number | null;
  kernelNs: number | null;
  kernels: number | null;
  spanNs: number | null;
  kernelNsPerGeneratedToken: number | null;
  kernelNsPerContextToken: number | null;
  kernelsPerGeneratedToken: number | null;
  kernelNsPerSecond: number | null;
  categoryNsPerGeneratedToken: Record<string, number>;
  measuredThroughputTps: number | null;
  health: { id: string; health: string }[];
  notes: string[];
}

/** nsys stats' kernel total and instances (cuda_gpu_kern_sum). */
function kernelOracle(folder: string): { totalNs: number; instances: number } {
  const { rows } = readCsvObjects(fixture(folder, 'nsys-stats', 'cuda_gpu_kern_sum.csv'));
  return { totalNs: rows.reduce((a, r) => a + Number(r['Total Time (ns)']), 0), instances: rows.reduce((a, r) => a + Number(r['Instances']), 0) };
}

/** Kernels whose launch call (correlationId within the process) started before `t`: start-up. */
function kernelsLaunchedBefore(file: string, t: number): { ns: number; count: number } {
  const db = new BetterSqlite3(file, { readonly: true });
  try {
    const r = db
      .prepare(
        `SELECT count(*) AS count, coalesce(sum(k.end - k.start), 0) AS ns FROM CUPTI_ACTIVITY_KIND_KERNEL k
         JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId AND (r.globalTid >> 24) = (k.globalPid >> 24)
         WHERE r.start < ?`,
      )
      .get(t) as { count: number; ns: number };
    return r;
  } finally {
    db.close();
  }
}

/** Start of the first NVTX range whose text matches `like` (vLLM's execute_..., SGLang's run_batch). */
function firstRangeStart(file: string, like: string): number {
  const db = new BetterSqlite3(file, { readonly: true });
  try {
    return (db.prepare(`SELECT min(n.start) AS t FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId WHERE coalesce(s.value, n.text) LIKE ?`).get(like) as { t: number }).t;
  } finally {
    db.close();
  }
}

const lines = (file: string) => readFileSync(file, 'utf8').split('\n').filter((l) => l.trim() !== '');
const sumOf = (ls: string[], re: RegExp) => ls.reduce((a, l) => a + Number(re.exec(l)?.[1] ?? 0), 0);

describe('engines on fieldguide-vllm, plain-fieldguide and sglang', () => {
  let rows: Row[];
  const byFile = (f: string) => rows.find((r) => r.file === f)!;
  beforeAll(() => {
    const r = runCli(['engines', VLLM, PLAIN, SGLANG, '--log', VLLM_LOG, '--benchmark', BENCH, '--log', SGLANG_LOG, '--format', 'json']);
    expect(r.status, r.stderr).toBe(0);
    rows = JSON.parse(r.stdout).rows;
  });

  it('one row per capture, in order, each labelled by its engine (plain-fieldguide by its folder)', () => {
    expect(rows.map((r) => r.file)).toEqual([VLLM, PLAIN, SGLANG]);
    expect(rows.map((r) => [r.engine, r.label])).toEqual([['vllm', 'vllm'], ['unknown', 'plain-fieldguide'], ['sglang', 'sglang']]);
    expect(rows.every((r) => r.status === 'ok')).toBe(true);
  });

  it('fieldguide-vllm: generated tokens are the log\'s generation tokens; kernel time is the total less the kernels launched before the first step', () => {
    const r = byFile(VLLM);
    const log = lines(VLLM_LOG).filter((l) => /Iteration\(\d+\)/.test(l));
    expect(log).toHaveLength(60); // every step 0..59 is in the capture (the whole run)
    expect(r.tokenSource).toBe('log');
    expect(r.generatedTokens).toBe(sumOf(log, /(\d+) generation tokens/));
    expect(r.contextTokens).toBe(sumOf(log, /(\d+) context tokens/));
    const oracle = kernelOracle('fieldguide-vllm');
    const startup = kernelsLaunchedBefore(VLLM, firstRangeStart(VLLM, 'execute_context_%'));
    expect(startup.count).toBeGreaterThan(0); // model init and the warm-up prefills
    expect(r.boundary).toBe('iterations');
    expect(r.kernelNs).toBe(oracle.totalNs - startup.ns);
    expect(r.kernelNs!).toBeLessThanOrEqual(oracle.totalNs);
    expect(r.kernels).toBe(oracle.instances - startup.count);
    expect(r.kernelNsPerGeneratedToken).toBe(r.kernelNs! / r.generatedTokens!);
    expect(r.kernelNsPerContextToken).toBe(r.kernelNs! / r.contextTokens!);
    expect(r.kernelsPerGeneratedToken).toBe(r.kernels! / r.generatedTokens!);
  });

  it('plain-fieldguide: generated tokens are the benchmark\'s actual_tokens summed; no start-up can be told apart, so kernel time is the nsys total', () => {
    const r = byFile(PLAIN);
    const bench = JSON.parse(readFileSync(BENCH, 'utf8')) as { results: { actual_tokens: number; throughput_tps: number }[] };
    expect(r.tokenSource).toBe('benchmark');
    expect(r.generatedTokens).toBe(bench.results.reduce((a, x) => a + x.actual_tokens, 0));
    expect(r.measuredThroughputTps).toBeCloseTo(bench.results.reduce((a, x) => a + x.throughput_tps, 0) / bench.results.length, 9);
    const oracle = kernelOracle('plain-fieldguide');
    expect(r.boundary).toBe('none');
    expect(r.kernelNs).toBe(oracle.totalNs);
    expect(r.kernels).toBe(oracle.instances);
    expect(r.kernelNsPerGeneratedToken).toBe(r.kernelNs! / r.generatedTokens!);
    expect(r.kernelsPerGeneratedToken).toBe(r.kernels! / r.generatedTokens!);
    expect(r.contextTokens).toBeNull();
    // No markers: whole-capture figures, and the switch that would give per-iteration ones.
    expect(r.notes.some((n) => /per-iteration figures need markers/.test(n))).toBe(true);
    expect(r.notes.some((n) => /start-up could not be told apart/.test(n))).toBe(true);
    expect(r.notes.some((n) => /benchmark_results\.json fits this capture/.test(n))).toBe(true);
  });

  it('sglang: generated tokens are the decode lines\' running requests of steps 40..119; every kernel of the window is serving', () => {
    const r = byFile(SGLANG);
    const window = lines(SGLANG_LOG).slice(40, 120); // one line per forward step 0..199 (--decode-log-interval 1)
    expect(r.tokenSource).toBe('log');
    expect(r.generatedTokens).toBe(sumOf(window.filter((l) => l.includes('Decode batch')), /#running-req: (\d+)/));
    expect(r.contextTokens).toBe(sumOf(window.filter((l) => l.includes('Prefill batch')), /#new-token: (\d+)/));
    const oracle = kernelOracle('sglang');
    expect(kernelsLaunchedBefore(SGLANG, firstRangeStart(SGLANG, 'scheduler.run_batch')).count).toBe(0);
    expect(r.boundary).toBe('iterations');
    expect(r.kernelNs).toBe(oracle.totalNs);
    expect(r.kernels).toBe(oracle.instances);
    expect(r.kernelNsPerGeneratedToken).toBe(r.kernelNs! / r.generatedTokens!);
    expect(r.kernelNsPerContextToken).toBe(r.kernelNs! / r.contextTokens!);
    expect(r.kernelsPerGeneratedToken).toBe(r.kernels! / r.generatedTokens!);
  });

  it('kernel time by category per generated token adds up to the kernel time per generated token', () => {
    for (const r of rows) {
      const sum = Object.values(r.categoryNsPerGeneratedToken).reduce((a, x) => a + x, 0);
      expect(Math.abs(sum - r.kernelNsPerGeneratedToken!)).toBeLessThan(1e-6 * r.kernelNsPerGeneratedToken!);
    }
  });
});
