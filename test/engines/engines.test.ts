/**
 * `iterscope engines` beyond the acceptance: captures that hold no GPU work, token sources and
 * their checks, captures without markers (per second; start-up told apart by CUDA-graph capture),
 * the engine named without markers, the options' forms and errors, the output formats. Expected
 * values are read from the fixtures with plain SQL and file reads.
 */
import BetterSqlite3 from 'better-sqlite3';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { parseCsv } from '../helpers/csv.js';
import { fixture } from '../helpers/fixtures.js';
import { withExport } from '../../src/export/openExport.js';
import { analyzeExport } from '../../src/pipeline/analyzeExport.js';
import { parseIterationSelection } from '../../src/iterations/selection.js';
import { servingEngineOf } from '../../src/summary/engineCapture.js';

const VLLM = fixture('fieldguide-vllm', 'trace.sqlite');
const VLLM_LOG = fixture('fieldguide-vllm', 'vllm.log');
const PLAIN = fixture('plain-fieldguide', 'trace.sqlite');
const BENCH = fixture('plain-fieldguide', 'benchmark_results.json');
const SGLANG = fixture('sglang', 'trace.sqlite');
const CRASHED = fixture('health-crashed-client', 'trace.sqlite');
const CLIENT = fixture('health-client-only', 'trace.sqlite');
const CPP = fixture('cpp-legacy-windows', 'trace.2.sqlite');
const DENSE = fixture('pytorch-dense', 'trace.sqlite');

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Row = Record<string, any>;

function rowsOf(args: string[]): { rows: Row[]; stderr: string } {
  const r = runCli(['engines', ...args, '--format', 'json']);
  expect(r.status, r.stderr).toBe(0);
  return { rows: JSON.parse(r.stdout).rows, stderr: r.stderr };
}

function sql<T>(file: string, query: string, ...params: unknown[]): T {
  const db = new BetterSqlite3(file, { readonly: true });
  try {
    return db.prepare(query).get(...params) as T;
  } finally {
    db.close();
  }
}

let tmp: string;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'iterscope-engines-'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('captures without GPU work (the health fixtures)', () => {
  it('are shown as such: status no-gpu-work with the reason, every figure null (not zero), the no-gpu-work finding', () => {
    const { rows } = rowsOf([VLLM, CRASHED, CLIENT, '--log', VLLM_LOG]);
    expect(rows[0].status).toBe('ok');
    for (const r of rows.slice(1)) {
      expect(r.status).toBe('no-gpu-work');
      expect(r.statusText).toMatch(/^no GPU work: /);
      for (const k of ['kernelNs', 'kernels', 'spanNs', 'kernelNsPerGeneratedToken', 'kernelsPerGeneratedToken', 'kernelNsPerSecond', 'busyShare', 'h2dBytes']) expect(r[k], k).toBeNull();
      expect(r.health.map((h: Row) => h.id)).toContain('no-gpu-work');
    }
    // The crashed client's reason is its error line (the last line of its stderr).
    expect(rows[1].statusText).toMatch(/requests\.exceptions\.ConnectionError/);
  });

  it('the Markdown table says so in the capture column instead of printing 0 ns per token', () => {
    const r = runCli(['engines', CLIENT, VLLM, '--log', VLLM_LOG, '--format', 'md']);
    expect(r.status).toBe(0);
    const line = r.stdout.split('\n').find((l) => l.startsWith('| health-client-only |'))!;
    expect(line).toMatch(/no GPU work: /);
    expect(line).not.toMatch(/\b0 ns\b/);
  });
});

describe('token sources', () => {
  it('--tokens is the user\'s word and wins over the log (which is named in a note)', () => {
    const { rows } = rowsOf([VLLM, '--log', VLLM_LOG, '--tokens', '1000']);
    expect(rows[0].tokenSource).toBe('user');
    expect(rows[0].generatedTokens).toBe(1000);
    expect(rows[0].kernelNsPerGeneratedToken).toBe(rows[0].kernelNs / 1000);
    expect(rows[0].notes.some((n: string) => /captured steps count 915 generated tokens/.test(n))).toBe(true);
  });

  it('without a log, vLLM\'s step markers give the counts (`markers`)', () => {
    const { rows } = rowsOf([VLLM]);
    expect(rows[0].tokenSource).toBe('markers');
    expect(rows[0].generatedTokens).toBe(915);
  });

  it('markers that nothing numbers (vLLM without its log, or with another run\'s) still give the span, counted and never numbered', () => {
    const DENSE_VLLM = fixture('vllm-dense', 'trace.sqlite');
    const own = rowsOf([DENSE_VLLM, '--log', fixture('vllm-dense', 'vllm.log')]).rows[0];
    const other = rowsOf([DENSE_VLLM, '--log', `${DENSE_VLLM}=${VLLM_LOG}`]).rows[0];
    expect(own.tokenSource).toBe('log');
    expect(own.notes[0]).toMatch(/captured steps \(40\.\.79, vllm markers\)/);
    // The other run's log joins no step: the markers' own counts, and the same span.
    expect(other.tokenSource).toBe('markers');
    expect(other.notes[0]).toMatch(/captured steps \(40 steps, unnumbered, vllm markers\)/);
    expect(other.notes.some((n: string) => /vllm\.log \(60 records\): no captured step joined to it/.test(n))).toBe(true);
    expect([other.steps, other.kernelNs, other.generatedTokens]).toEqual([own.steps, own.kernelNs, own.generatedTokens]);
  });

  it('a benchmark file the capture cannot hold is not counted: longest request longer than the serving span, or a run after the capture', () => {
    const bench = JSON.parse(readFileSync(BENCH, 'utf8'));
    const long = join(tmp, 'long.json');
    writeFileSync(long, JSON.stringify({ ...bench, results: [...bench.results, { max_tokens: 10, actual_tokens: 10, latency_s: 60, throughput_tps: 0.17 }] }));
    const later = join(tmp, 'later.json');
    writeFileSync(later, JSON.stringify({ ...bench, timestamp: '2026-11-25T16:15:54+00:00' }));
    for (const [file, why] of [[long, /longer than the .* serving span/], [later, /finished .* after the capture ended/]] as const) {
      const { rows } = rowsOf([PLAIN, '--benchmark', `${PLAIN}=${file}`]);
      expect(rows[0].tokenSource).toBe('none');
      expect(rows[0].generatedTokens).toBeNull();
      expect(rows[0].kernelNsPerGeneratedToken).toBeNull();
      expect(rows[0].notes.some((n: string) => why.test(n) && /not counted/.test(n))).toBe(true);
    }
  });

  it('benchmark entries without a whole actual_tokens are left out and counted; without latencies or a timestamp the tokens are used with a warning', () => {
    const file = join(tmp, 'partial.json');
    writeFileSync(file, JSON.stringify({ results: [{ actual_tokens: 7 }, { actual_tokens: 5 }, { actual_tokens: 'x' }, { latency_s: 1 }, null] }));
    const { rows } = rowsOf([PLAIN, '--benchmark', `${PLAIN}=${file}`]);
    expect(rows[0].tokenSource).toBe('benchmark');
    expect(rows[0].generatedTokens).toBe(12);
    expect(rows[0].notes.some((n: string) => /3 of 5 results have no whole, non-negative actual_tokens and were left out/.test(n))).toBe(true);
    expect(rows[0].notes.some((n: string) => /cannot be checked/.test(n))).toBe(true);
  });

  it('without any source: per second of the serving span, said so', () => {
    const { rows, stderr } = rowsOf([PLAIN]);
    const r = rows[0];
    expect(r.tokenSource).toBe('none');
    expect(r.kernelNsPerSecond).toBe((r.kernelNs * 1e9) / r.spanNs);
    expect(r.kernelsPerSecond).toBe((r.kernels * 1e9) / r.spanNs);
    expect(stderr).toMatch(/no generated-token count \(pass --log, --benchmark or --tokens\)/);
    // The span runs from the process's first to its last GPU op (no start-up told apart here).
    const span = sql<{ a: number; b: number }>(PLAIN, `SELECT min(s) AS a, max(e) AS b FROM (SELECT start AS s, end AS e FROM CUPTI_ACTIVITY_KIND_KERNEL UNION ALL SELECT start, end FROM CUPTI_ACTIVITY_KIND_MEMCPY UNION ALL SELECT start, end FROM CUPTI_ACTIVITY_KIND_MEMSET)`);
    expect(r.spanNs).toBe(span.b - span.a);
  });
});

describe('copies and allocations in the serving span', () => {
  it('fieldguide-vllm: H2D/D2H copies and bytes, allocation calls and --cuda-memory-usage allocations inside the span, per generated token', () => {
    const r = rowsOf([VLLM, '--log', VLLM_LOG]).rows[0];
    const [a, b] = [r.spanStartNs, r.spanEndNs];
    const copies = (kind: number) => sql<{ n: number; bytes: number }>(VLLM, `SELECT count(*) AS n, coalesce(sum(bytes), 0) AS bytes FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = ? AND start >= ? AND start < ?`, kind, a, b);
    const h2d = copies(1);
    const d2h = copies(2);
    expect([r.h2dCopies, r.h2dBytes, r.d2hCopies, r.d2hBytes]).toEqual([h2d.n, h2d.bytes, d2h.n, d2h.bytes]);
    expect(r.h2dBytesPerGeneratedToken).toBe(h2d.bytes / r.generatedTokens);
    expect(r.d2hCopiesPerGeneratedToken).toBe(d2h.n / r.generatedTokens);
    const calls = sql<{ n: number }>(VLLM, `SELECT count(*) AS n FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId WHERE (s.value LIKE 'cudaMalloc%' OR s.value LIKE 'cuMemAlloc%') AND r.start >= ? AND r.start < ?`, a, b);
    expect(r.allocationCalls).toBe(calls.n);
    // Allocations of non-static memory (memKind 5/6 are module statics, loaded with the code).
    const allocs = sql<{ n: number; bytes: number }>(VLLM, `SELECT count(*) AS n, sum(bytes) AS bytes FROM CUDA_GPU_MEMORY_USAGE_EVENTS WHERE memoryOperationType = 0 AND memKind NOT IN (5, 6) AND start >= ? AND start < ?`, a, b);
    expect([r.allocations, r.allocationBytes]).toEqual([allocs.n, allocs.bytes]);
    expect(r.allocations).toBeGreaterThan(0);
  });

  it('busy and idle shares: the union of the GPU work (every stream, kernels, copies, memsets) inside the span', () => {
    for (const [file, args] of [[PLAIN, []], [VLLM, ['--log', VLLM_LOG]]] as const) {
      const r = rowsOf([file, ...args]).rows[0];
      const db = new BetterSqlite3(file, { readonly: true });
      const ops = db.prepare(`SELECT start, end FROM CUPTI_ACTIVITY_KIND_KERNEL UNION ALL SELECT start, end FROM CUPTI_ACTIVITY_KIND_MEMCPY UNION ALL SELECT start, end FROM CUPTI_ACTIVITY_KIND_MEMSET ORDER BY start`).all() as { start: number; end: number }[];
      db.close();
      let busy = 0;
      let [curA, curB] = [-Infinity, -Infinity];
      const clip = (x: number, y: number) => Math.max(0, Math.min(y, r.spanEndNs) - Math.max(x, r.spanStartNs));
      for (const o of ops) {
        if (o.start > curB) {
          busy += clip(curA, curB);
          [curA, curB] = [o.start, o.end];
        } else curB = Math.max(curB, o.end);
      }
      busy += clip(curA, curB);
      expect(r.busyShare).toBeCloseTo(busy / r.spanNs, 12);
      expect(r.idleShare).toBeCloseTo(1 - busy / r.spanNs, 12);
    }
  });

  it('sglang (no --cuda-memory-usage): allocations are null, not 0', () => {
    const r = rowsOf([SGLANG]).rows[0];
    expect(r.allocations).toBeNull();
    expect(r.allocationBytes).toBeNull();
    expect(r.allocationCalls).toBe(0);
  });
});

describe('the serving span without markers', () => {
  it('starts after CUDA-graph capture (pytorch-dense with its markers ignored): the kernels launched after the last capture call', () => {
    const a = withExport(DENSE, (h) => analyzeExport(h, { parts: ['servingSpan'], selection: parseIterationSelection({ iterationRange: 'no such range' }) }));
    expect(a.iterations).toBeNull();
    const s = a.servingSpan!;
    expect(s.boundary).toBe('graph-capture');
    const captureEnd = sql<{ t: number }>(DENSE, `SELECT max(r.end) AS t FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId WHERE s.value LIKE 'cudaStreamBeginCapture%' OR s.value LIKE 'cudaStreamEndCapture%' OR s.value LIKE 'cudaGraphInstantiate%'`).t;
    const after = sql<{ n: number; ns: number }>(
      DENSE,
      `SELECT count(*) AS n, sum(k.end - k.start) AS ns FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId AND (r.globalTid >> 24) = (k.globalPid >> 24) WHERE r.start >= ?`,
      captureEnd,
    );
    expect(s.kernels).toBe(after.n);
    expect(s.kernelNs).toBe(after.ns);
    expect(s.steps).toBeNull();
    expect(s.boundaryText).toMatch(/after CUDA-graph capture ended/);
  });

  it('names the engine from the serving process\'s thread names when no marker says it (sglang::scheduler)', () => {
    const a = withExport(SGLANG, (h) => analyzeExport(h, { parts: ['info', 'servingSpan'], selection: parseIterationSelection({ iterationRange: 'no such range' }) }));
    expect(servingEngineOf({ ...a.info!, engine: null }, null, a.capture.command, a.servingSpan!.processes.map((p) => p.pid))).toEqual({ engine: 'sglang', from: 'process-name' });
    expect(servingEngineOf({ ...a.info!, engine: null, processes: [] }, null, 'python3 -m sglang.launch_server --model-path m', [])).toEqual({ engine: 'sglang', from: 'command' });
    expect(servingEngineOf({ ...a.info!, engine: null, processes: [] }, null, 'text-generation-launcher --model-id m', [])).toEqual({ engine: 'tgi', from: 'command' });
  });

  it('a graph-level trace (cpp-legacy-windows): whole-graph launches count as kernel time, the caveat finding is on the row', () => {
    const { rows } = rowsOf([CPP, '--log', fixture('cpp-legacy-windows', 'executor.log')]);
    const r = rows[0];
    expect(r.engine).toBe('tensorrt-llm');
    expect(r.graphLaunches).toBeGreaterThan(0);
    expect(r.health.map((h: Row) => h.id)).toContain('graph-level-trace');
    expect(r.notes.some((n: string) => /whole-graph launches/.test(n))).toBe(true);
  });
});

describe('options', () => {
  it('EXPORT=FILE pairs, folders as EXPORT, --label and the folder match give the same figures', () => {
    const plain = rowsOf([VLLM, PLAIN, '--log', VLLM_LOG, '--benchmark', BENCH]).rows;
    const paired = rowsOf([VLLM, PLAIN, '--label', `fg=${dirname(VLLM)}`, '--log', `fg=${VLLM_LOG}`, '--benchmark', `${dirname(PLAIN)}=${BENCH}`]).rows;
    expect(paired.map((r) => r.label)).toEqual(['fg', 'plain-fieldguide']);
    expect(paired.map((r) => [r.generatedTokens, r.kernelNs, r.tokenSource])).toEqual(plain.map((r) => [r.generatedTokens, r.kernelNs, r.tokenSource]));
  });

  it('the worker pool gives the rows one export at a time gives', () => {
    const args = [VLLM, PLAIN, SGLANG, '--log', VLLM_LOG, '--benchmark', BENCH];
    expect(rowsOf([...args, '--jobs', '2']).rows).toEqual(rowsOf([...args, '--jobs', '1']).rows);
  });

  it('bad usage: one line, exit 2, before any export is read', () => {
    for (const [args, msg] of [
      [[VLLM, PLAIN, '--tokens', '12'], /--tokens 12: 2 exports given; write EXPORT=N/],
      [[VLLM, '--tokens', `${VLLM}=many`], /--tokens expects a non-negative integer/],
      [[VLLM, '--benchmark', join(tmp, 'x.json')], /no export given is in its folder; write EXPORT=FILE/],
      [[VLLM, '--label', 'x=nowhere.sqlite'], /--label expects NAME=EXPORT/],
      [[VLLM, PLAIN, '--label', `a=${VLLM}`, '--label', `a=${PLAIN}`], /'a' names two exports/],
      [[VLLM, '--format', 'pdf'], /--format must be one of/],
    ] as const) {
      const r = runCli(['engines', ...args]);
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(msg);
    }
  });

  it('a benchmark file that is not one: exit 2 naming the file', () => {
    const file = join(tmp, 'not-bench.json');
    writeFileSync(file, '{"rows": []}');
    const r = runCli(['engines', PLAIN, '--benchmark', `${PLAIN}=${file}`]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: not a benchmark results file`));
  });
});

describe('formats', () => {
  const args = [VLLM, PLAIN, CLIENT, '--log', VLLM_LOG, '--benchmark', BENCH];
  it('CSV: the tables with raw numbers (the per-token table first)', () => {
    const r = runCli(['engines', ...args, '--format', 'csv']);
    expect(r.status).toBe(0);
    const first = r.stdout.split('\n\n')[0].split('\n').slice(1).join('\n');
    const [header, ...rows] = parseCsv(first);
    expect(header.slice(0, 4)).toEqual(['Capture', 'Engine', 'Tokens from', 'Generated tokens']);
    expect(rows.map((x) => x[0])).toEqual(['vllm', 'plain-fieldguide', 'health-client-only']);
    const json = rowsOf(args).rows;
    const col = (name: string) => header.indexOf(name);
    expect(Number(rows[0][col('Kernel time (ns)')])).toBe(json[0].kernelNs);
    expect(Number(rows[1][col('Generated tokens')])).toBe(json[1].generatedTokens);
    expect(rows[2][col('Kernel / gen token (ns)')]).toBe('');
  });

  it('HTML: one self-contained page with the two charts and the tables', () => {
    const out = join(tmp, 'engines.html');
    const r = runCli(['engines', ...args, '-o', out]);
    expect(r.status, r.stderr).toBe(0);
    const html = readFileSync(out, 'utf8');
    expect(html).toMatch(/Content-Security-Policy/);
    expect(html.match(/<svg/g)).toHaveLength(2);
    expect(html).toMatch(/Kernel time per generated token, by kernel category/);
    expect(html).toMatch(/Not drawn \(no GPU work or no token count\): health-client-only/);
    expect(html).toMatch(/<caption>Engines side by side/);
  });
});
