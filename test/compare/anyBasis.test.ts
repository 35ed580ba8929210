import { copyFileSync, chmodSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { beforeAll, describe, expect, it } from 'vitest';
import { defaultCategoryClassifier } from '../../src/categories/rules.js';
import type { Comparison, MetricDelta } from '../../src/compare/compareRuns.js';
import { runCli, runEntry } from '../helpers/cli.js';
import { CLI_BUNDLE, fixture } from '../helpers/fixtures.js';

const before = fixture('external', 'nsys2026.2_mfu_2gpu_before_nsysai.sqlite');
const after = fixture('external', 'nsys2026.2_mfu_2gpu_after_nsysai.sqlite');
const plain = fixture('plain-fieldguide', 'trace.sqlite');
const plainBench = fixture('plain-fieldguide', 'benchmark_results.json');

/**
 * A copy of plain-fieldguide with one more instance of every `norm` kernel, right after it (as
 * `--extra-work`'s extra RMS norm per layer): more norm kernels and norm time per token, nothing
 * else changed.
 */
function withExtraNorm(): string {
  const copy = join(mkdtempSync(join(tmpdir(), 'iterscope-anybasis-')), 'slow.sqlite');
  copyFileSync(plain, copy);
  chmodSync(copy, 0o644);
  const db = new BetterSqlite3(copy);
  const cls = defaultCategoryClassifier();
  const ids = (db.prepare('SELECT DISTINCT k.demangledName AS id, s.value AS name FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName').all() as { id: number; name: string }[])
    .filter((r) => cls.categories[cls.classify(r.name)] === 'norm')
    .map((r) => r.id);
  expect(ids.length).toBeGreaterThan(0);
  const cols = (db.prepare("SELECT name FROM pragma_table_info('CUPTI_ACTIVITY_KIND_KERNEL')").all() as { name: string }[]).map((c) => `"${c.name}"`);
  const shifted = cols.map((c) => (c === '"start"' ? '"end" + 1' : c === '"end"' ? '"end" + 1 + ("end" - start)' : c));
  db.prepare(`INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (${cols.join(', ')}) SELECT ${shifted.join(', ')} FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE demangledName IN (SELECT value FROM json_each(?))`).run(JSON.stringify(ids));
  db.close();
  return copy;
}

const find = (c: Comparison, metric: string) => c.metrics.find((m) => m.metric === metric) as MetricDelta;

describe('compare without iteration markers (kernel instances)', () => {
  it('the nsys-ai before/after pair: exit 0 or 1, basis kernel instances, per-kernel deltas with intervals, comparability notes', () => {
    const r = runCli(['compare', before, after, '--format', 'json']);
    expect([0, 1]).toContain(r.status);
    const c = JSON.parse(r.stdout) as Comparison;
    expect(c.basis).toBe('kernel instances');
    expect(c.comparability).toContain('no GPU names in either file: the GPU model is not checked');
    expect(c.comparability.some((n) => /^time-trimmed window in base \(31 GPU ops\) and head \(16 GPU ops\)/.test(n))).toBe(true);
    const perKernel = c.metrics.filter((m) => m.metric.endsWith(' per instance'));
    expect(perKernel.length).toBeGreaterThan(10);
    for (const m of perKernel) {
      expect(m.interval).not.toBeNull();
      expect(m.interval!.lo).toBeLessThanOrEqual(m.relative!);
      expect(m.interval!.hi).toBeGreaterThanOrEqual(m.relative!);
    }
    // The layer norm kernel runs 102 times in the before window, 90 in the after one, 0.3% slower.
    const ln = perKernel.find((m) => m.metric.includes('vectorized_layer_norm_kernel'))!;
    expect(ln.samples).toEqual({ base: 102, head: 90 });
    expect(ln.verdict).toBe('unchanged');
    // Window cuts differ: 3986 vs 3577 kernels, an exact count per second of span (no interval width).
    const k = find(c, 'kernels per second');
    expect(k.samples).toEqual({ base: 3986, head: 3577 });
    expect(k.interval!.lo).toBe(k.interval!.hi);
    const md = runCli(['compare', before, after, '--format', 'md']);
    // Deterministic: the same inputs give byte-identical output (fixed bootstrap seeds).
    expect(runCli(['compare', before, after, '--format', 'md']).stdout).toBe(md.stdout);
    expect(md.stdout).toMatch(/\| Verdict \| Scope \| Metric \| Unit \| Base \| Head \| Change \(%\) \| Interval \| Samples \(base\/head\) \|/);
  });

  it('plain-fieldguide against itself: exit 0, no regression, every inconclusive metric named with its sample counts', () => {
    const r = runCli(['compare', plain, plain, '--base-benchmark', plainBench, '--head-benchmark', plainBench, '--format', 'json']);
    expect(r.status).toBe(0);
    const c = JSON.parse(r.stdout) as Comparison;
    expect(c.regressions).toEqual([]);
    expect(find(c, 'gemm time per generated token').verdict).toBe('unchanged');
    expect(c.inconclusive.length).toBeGreaterThan(0);
    for (const m of c.inconclusive) expect(r.stderr).toContain(`inconclusive: ${m.metric} [span]: `);
    expect(r.stderr).toMatch(/inconclusive: sampling time per generated token \[span\]: interval -\d+\.\d%\.\.\+\d+\.\d% crosses -5\.0% \(base 274, head 274 samples\)/);
    // --fail-on-inconclusive: the same run exits 3, naming the metrics and their samples.
    const strict = runCli(['compare', plain, plain, '--base-benchmark', plainBench, '--head-benchmark', plainBench, '--fail-on-inconclusive']);
    expect(strict.status).toBe(3);
    expect(strict.stderr).toMatch(/iterscope: inconclusive: \d+ gated metrics cannot tell noise from change: .*sampling time per generated token \[span\] \(274 vs 274 samples\)/);
  });

  describe('one more norm kernel per norm kernel (a known regression)', () => {
    let slow: string;
    let direct: Comparison;
    beforeAll(() => {
      slow = withExtraNorm();
      const r = runCli(['compare', plain, slow, '--base-benchmark', plainBench, '--head-benchmark', plainBench, '--format', 'json']);
      expect(r.status).toBe(1);
      expect(r.stderr).toContain('iterscope: comparability: no iterations in either capture: no iteration ranges found (`iterscope iterations` says how to find them)\n');
      expect(r.stderr).toMatch(/^iterscope: regression: norm time per generated token \[span\] \+100\.0% \(\+99\.\d%\.\.\+100\.\d%\)\n$/m);
      direct = JSON.parse(r.stdout) as Comparison;
    });

    it('regressed on norm time per token, interval excluding zero; kernels per token exact and under the threshold; the other categories unchanged', () => {
      const norm = find(direct, 'norm time per generated token');
      expect(norm.verdict).toBe('regressed');
      expect(norm.samples).toEqual({ base: 2304, head: 4608 });
      expect(norm.relative).toBeCloseTo(1, 2);
      expect(norm.interval!.lo).toBeGreaterThan(0.9);
      // 2,304 more of 48,035 kernels: +4.8%, exactly (a count has no sampling noise), so under the 5% threshold.
      const kernels = find(direct, 'kernels per generated token');
      expect(kernels.relative).toBeCloseTo(2304 / 48035, 12);
      expect(kernels.interval).toEqual({ lo: kernels.relative, hi: kernels.relative });
      expect(kernels.verdict).toBe('unchanged');
      const strict = runCli(['compare', plain, slow, '--base-benchmark', plainBench, '--head-benchmark', plainBench, '--threshold', '4%', '--format', 'json']);
      expect(find(JSON.parse(strict.stdout) as Comparison, 'kernels per generated token').verdict).toBe('regressed');
      for (const c of ['gemm', 'attention', 'rope', 'reduce', 'elementwise']) expect(find(direct, `${c} time per generated token`).verdict, c).toBe('unchanged');
    });

    it('a baseline from summarize gives the same verdicts and intervals as the export itself', () => {
      const dir = mkdtempSync(join(tmpdir(), 'iterscope-baseline-'));
      const baseline = join(dir, 'baseline.json');
      expect(runCli(['summarize', plain, '--benchmark', plainBench, '-o', baseline]).status).toBe(0);
      const r = runCli(['compare', baseline, slow, '--head-benchmark', plainBench, '--format', 'json']);
      expect(r.status).toBe(1);
      const fromBaseline = JSON.parse(r.stdout) as Comparison;
      const view = (c: Comparison) => c.metrics.map((m) => [m.scope, m.metric, m.verdict, m.interval, m.samples]);
      expect(view(fromBaseline)).toEqual(view(direct));
      expect(JSON.parse(readFileSync(baseline, 'utf8')).basis).toBe('kernel instances');
    });
  });
});

describe('the job summary', () => {
  it('shows the comparability notes and each delta with its interval and sample counts', () => {
    const summary = join(mkdtempSync(join(tmpdir(), 'iterscope-job-')), 'summary.md');
    writeFileSync(summary, '');
    const r = runEntry(CLI_BUNDLE, ['compare', before, after, '--format', 'md'], { GITHUB_STEP_SUMMARY: summary });
    expect([0, 1]).toContain(r.status);
    const md = readFileSync(summary, 'utf8');
    expect(md).toContain('### Comparability (basis: kernel instances of the serving span)');
    expect(md).toContain('| no GPU names in either file: the GPU model is not checked |');
    expect(md).toMatch(/\| unchanged \| span \| at::native::\\<…>::vectorized_layer_norm_kernel\\<…> per instance \| ns \| [\d.]+ us \| [\d.]+ us \| 0\.3% \| \+0\.\d%\.\.\+0\.\d% \| 102\/90 \|/);
  });
});

describe('summary versions', () => {
  const write = (schema: string) => {
    const p = join(mkdtempSync(join(tmpdir(), 'iterscope-schema-')), 'old.json');
    writeFileSync(p, JSON.stringify({ schema, run: {} }));
    return p;
  };
  it('an older summary: exit 2, one line saying to summarize the baseline again', () => {
    const r = runCli(['compare', write('iterscope.summary/1'), plain]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/summary schema iterscope\.summary\/1 was written by an older iterscope and holds no samples for the gate's statistics; summarize the baseline again with this iterscope \(it writes iterscope\.summary\/2\)\n$/);
  });
  it('a newer summary: exit 2, one line saying to upgrade', () => {
    const r = runCli(['compare', write('iterscope.summary/3'), plain]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('summary schema iterscope.summary/3 was written by a newer iterscope; this one reads iterscope.summary/2: upgrade iterscope');
  });
});

describe('baseline size', () => {
  it.skipIf(process.env.ITERSCOPE_LONG !== '1')('pytorch-dense-long (ITERSCOPE_LONG=1: 130 MB export): a baseline under 200 kB giving the verdicts of the export itself', () => {
    const long = fixture('pytorch-dense-long', 'trace.sqlite');
    const out = join(mkdtempSync(join(tmpdir(), 'iterscope-long-')), 'baseline.json');
    expect(runCli(['summarize', long, '-o', out]).status).toBe(0);
    expect(statSync(out).size).toBeLessThan(200_000);
    const view = (r: { stdout: string }) => (JSON.parse(r.stdout) as Comparison).metrics.map((m) => [m.scope, m.metric, m.verdict, m.interval, m.samples]);
    expect(view(runCli(['compare', out, long, '--format', 'json']))).toEqual(view(runCli(['compare', long, long, '--format', 'json'])));
  });
});

describe('iteration options given by name', () => {
  it('summarize with an --iteration-range that matches nothing: exit 2, never a silent other basis', () => {
    const r = runCli(['summarize', plain, '--iteration-range', 'no such range']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("no NVTX ranges match --iteration-range no such range");
  });
});
