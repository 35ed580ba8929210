import { beforeAll, describe, expect, it } from 'vitest';
import { runReport } from '../../src/cli/commands/report.js';
import type { ReportData } from '../../src/pipeline/exportAnalysis.js';
import { formatNs } from '../../reports/units.js';
import { runCli } from '../helpers/cli.js';
import { fixture } from '../helpers/fixtures.js';
import { mdCells, mdFact, mdTable, mdTableLines } from './markdownTables.js';
import { reportDocument } from '../../reports/document/document.js';
import { reportToMarkdown } from '../../reports/reportMarkdown.js';

const DENSE = fixture('pytorch-dense', 'trace.sqlite');
const LOGS = [fixture('pytorch-dense', 'iteration_log.txt'), fixture('pytorch-dense', 'executor.log')];
const LOG_ARGS = LOGS.flatMap((l) => ['--log', l]);

interface IterationsJson {
  iterations: { iter: number; wallNs: number; kernelNs: number; categoryNs: Record<string, number> }[];
}

describe('iterscope report (Markdown) on pytorch-dense with both logs', () => {
  let md: string;
  let data: ReportData;
  let iterationsJson: IterationsJson;
  let iterationsMd: string;
  let iterationsStderr: string;
  let summaryMd: string;
  let gapsMd: string;
  let kernelsMd: string;

  beforeAll(async () => {
    const r = await runReport(DENSE, { log: LOGS });
    md = r.text;
    data = r.data;
    // What the single-analysis commands print for the same file and logs.
    const it = runCli(['iterations', DENSE, ...LOG_ARGS, '--format', 'json']);
    expect(it.status).toBe(0);
    iterationsJson = JSON.parse(it.stdout);
    iterationsStderr = it.stderr;
    iterationsMd = runCli(['iterations', DENSE, ...LOG_ARGS, '--format', 'md']).stdout;
    summaryMd = runCli(['iterations', DENSE, ...LOG_ARGS, '--summary', '--format', 'md']).stdout;
    gapsMd = runCli(['gaps', DENSE, ...LOG_ARGS, '--top', '10', '--format', 'md']).stdout;
    kernelsMd = runCli(['kernels', DENSE, '--format', 'md']).stdout;
  });

  it('has every section, in order, with a table of contents', () => {
    const headings = md.split('\n').filter((l) => l.startsWith('## '));
    expect(headings).toEqual([
      '## Findings',
      '## Run',
      '## Top kernels',
      '## GPU time by kernel category',
      '## Iterations',
      '## GPU idle time and its causes',
      '## NVTX ranges (CPU time and GPU projection)',
      '## Python GC and GIL',
      '## Coverage and notes',
    ]);
    expect(md).toContain('[Python GC and GIL](#python-gc-and-gil)');
    expect(md.startsWith('# iterscope report: trace.sqlite\n')).toBe(true);
  });

  it('run info: nsys version, GPU, capture window, iterations found and joined as `iterations` says', () => {
    expect(mdFact(md, 'Run', 'nsys version')).toBe('2025.3.2.0 (export schema 3.20.3)');
    expect(mdFact(md, 'Run', 'GPUs')).toBe('0: NVIDIA H100 80GB HBM3 (132 SMs)');
    expect(mdFact(md, 'Run', 'Capture window (CUDA/NVTX activity)')).toMatch(/ \.\. .*\(/);
    const joined = /(\d+) of (\d+) iterations joined/.exec(iterationsStderr)!;
    expect(joined).not.toBeNull();
    expect(mdFact(md, 'Run', 'Iterations joined to a log record')).toBe(`${joined[1]} of ${joined[2]}`);
    expect(mdFact(md, 'Coverage and notes', 'Iterations joined to a log record')).toBe(`${joined[1]} of ${joined[2]}`);
    expect(mdFact(md, 'Run', 'Iterations found')).toMatch(new RegExp(`^${iterationsJson.iterations.length} \\(0\\.\\.119\\)`));
  });

  it('top kernels: the rows `kernels` prints, the top one first', () => {
    const reportRows = mdTableLines(md, 'CUDA GPU kernel summary').slice(2);
    const kernelRows = mdTableLines(kernelsMd, 'CUDA GPU kernel summary').slice(2);
    expect(reportRows).toHaveLength(10);
    expect(reportRows).toEqual(kernelRows.slice(0, 10));
    const top = mdCells(reportRows[0]);
    expect(top[1]).toBe('26.28 ms'); // Total Time of the top kernel
    expect(top[1]).toBe(formatNs(data.kernels.rows[0].total));
  });

  it('kernel time by category: totals equal the sums of `iterations` per-category columns', () => {
    const rows = mdTable(md, 'Kernel time by category');
    const byCat = new Map(rows.map((r) => [r.Category, r]));
    const sums = new Map<string, number>();
    for (const r of iterationsJson.iterations) for (const [c, ns] of Object.entries(r.categoryNs)) sums.set(c, (sums.get(c) ?? 0) + ns);
    for (const [c, ns] of sums) {
      if (ns === 0) continue;
      expect(byCat.get(c)?.['In iterations'], c).toBe(formatNs(ns));
    }
    const kernelTotal = iterationsJson.iterations.reduce((a, r) => a + r.kernelNs, 0);
    expect(byCat.get('total')?.['In iterations']).toBe(formatNs(kernelTotal));
    expect(byCat.get('gemm')?.['In iterations']).toBe('68.11 ms');
    // Per phase: columns for the three phases; each row's phases add up to its total (ns exact).
    expect(Object.keys(rows[0])).toEqual(expect.arrayContaining(['context-only, 1 iters', 'mixed, 18 iters', 'generation-only, 101 iters']));
    for (const r of data.categories.rows) expect(Object.values(r.phaseNs).reduce((a, b) => a + (b ?? 0), 0)).toBe(r.iterationNs);
    // Whole capture: the `kernels` table's rows, classified; sums to the kernel summary total.
    const captureTotal = data.kernels.rows.reduce((a, k) => a + k.total, 0);
    expect(byCat.get('total')?.['Whole capture']).toBe(formatNs(captureTotal));
  });

  it('iterations: the phase table equals `iterations --summary`; 120 > 40 rows collapse to the 20 slowest, rows as `iterations` prints them', () => {
    expect(mdTableLines(md, 'Iterations by phase')).toEqual(mdTableLines(summaryMd, 'Iterations by phase'));
    const slow = mdTableLines(md, 'Slowest 20 of 120 iterations');
    expect(slow).toHaveLength(22);
    const all = mdTableLines(iterationsMd, 'Iterations (');
    expect(slow[0]).toBe(all[0]);
    const byIter = new Map(all.slice(2).map((l) => [mdCells(l)[0], l]));
    for (const row of slow.slice(2)) expect(row).toBe(byIter.get(mdCells(row)[0]));
    // Slowest first.
    const walls = slow.slice(2).map((l) => Number(mdCells(l)[0])).map((i) => iterationsJson.iterations.find((r) => r.iter === i)!.wallNs);
    expect(walls).toEqual([...walls].sort((a, b) => b - a));
    expect(mdCells(slow[2])[0]).toBe('0');
  });

  it('idle: device, cause, top-gap and phase tables equal `gaps` output (top gap duration and cause included)', () => {
    for (const title of ['GPU busy and idle per device', 'GPU idle time by cause per device', 'Top 10 of 954 GPU idle gaps', 'GPU idle time by cause per iteration phase']) {
      expect(mdTableLines(md, title), title).toEqual(mdTableLines(gapsMd, title));
    }
    const top = mdTable(md, 'Top 10 of 954 GPU idle gaps')[0];
    expect(top['Duration']).toBe('97.12 ms');
    expect(top.Cause).toBe('unattributed');
    const gc = mdTable(md, 'Top 10 of 954 GPU idle gaps').find((r) => r.Cause === 'gc')!;
    expect(gc).toMatchObject({ Duration: '74.54 ms', Iter: '108' });
    const causes = mdTable(md, 'GPU idle time by cause per device');
    expect(causes.find((r) => r.Cause === 'gil_wait')?.['Idle']).toBe('530.90 ms');
  });

  it('GC and GIL: collections and GIL waits from NVTX, idle per cause from the same gap analysis', () => {
    const nvtxGc = data.nvtx.rows.find((r) => r.range === ':Python GC')!;
    expect(mdFact(md, 'Python GC and GIL', 'GC collections (Python GC ranges)')).toBe(String(nvtxGc.count));
    expect(mdFact(md, 'Python GC and GIL', 'GC time (sum of collections)')).toBe(formatNs(nvtxGc.total));
    expect(mdFact(md, 'Python GC and GIL', 'GPU idle in gaps attributed to gc')).toMatch(/^83\.48 ms \(4 gaps/);
    expect(mdFact(md, 'Python GC and GIL', 'GPU idle in gaps attributed to gil_wait')).toMatch(/^530\.90 ms \(337 gaps/);
    const gil = data.host.gil.executorThreads[0];
    expect(gil).toMatchObject({ pid: 477, tid: 477 });
    expect(gil.waits).toBeGreaterThan(0);
    // The executor thread waits no longer than all threads together (nvtx_sum's Waiting for GIL row).
    expect(gil.totalNs).toBeLessThanOrEqual(data.nvtx.rows.find((r) => r.range === 'GIL Trace:Waiting for GIL')!.total);
    expect(gil.inIterationsNs!).toBeLessThanOrEqual(gil.totalNs);
  });

  it('NVTX: CPU summary and the GPU projection', () => {
    expect(mdTableLines(md, 'NVTX range summary (nvtx_sum)').length).toBe(12);
    expect(mdTable(md, 'NVTX ranges projected onto the GPU')[0].Range).toContain('[Executor] _forward_step 0');
  });

  it('coverage: share placed in iterations, categories, unmatched log records, notes of every analysis', () => {
    expect(mdFact(md, 'Coverage and notes', 'GPU op time placed in iterations')).toMatch(/^96\.6% \(/);
    expect(iterationsStderr).toContain('(96.6% of GPU op time) placed in iterations');
    expect(mdFact(md, 'Coverage and notes', 'Log records not matched (outside the capture)')).toBe('none');
    expect(mdFact(md, 'Coverage and notes', 'Log lines skipped (not iteration records)')).toBe('1');
    expect(md).toContain('- gaps: 954 gaps >= 100.00 us');
    expect(md).toContain('- iterations: no GPU metrics in this export');
  });

  it('makes no chart for Markdown, which draws none: the document with its charts writes the same text', () => {
    const charts = (doc: ReturnType<typeof reportDocument>) => doc.sections.flatMap((s) => s.blocks).filter((b) => b.kind === 'chart');
    const withCharts = reportDocument(data);
    // GPU time by category, idle by cause, idle by iteration.
    expect(charts(withCharts).map((b) => (b.kind === 'chart' ? b.chart.id : ''))).toEqual(['gpu-time-by-category', 'idle-by-cause', 'idle-by-iteration']);
    expect(charts(reportDocument(data, { charts: false }))).toEqual([]);
    expect(reportToMarkdown(withCharts)).toBe(md);
  });

  it('runs each analysis once (one timing per analysis)', () => {
    expect(Object.keys(data.timingsMs).sort()).toEqual(['apiCalls', 'findings', 'gapScan', 'gaps', 'gilHolders', 'gpuOps', 'health', 'healthLaunches', 'host', 'hostCauseRows', 'hostRanges', 'info', 'iterationWindows', 'iterations', 'kernels', 'memory', 'metrics', 'nvtx', 'nvtxColumns', 'nvtxGpu']);
  });
});

describe('iterscope report: other exports and options', () => {
  it('an export without iteration ranges still gets kernels, idle, NVTX and coverage, and says why', async () => {
    const { text, data } = await runReport(fixture('external', 'nsys2026.2_h100_2gpu_1s_nsysai.sqlite'));
    expect(data.iterations).toBeNull();
    expect(text).not.toContain('## Iterations');
    expect(text).toContain('## Top kernels');
    expect(text).toContain('- report: no iterations: no iteration ranges found');
    expect(mdTable(text, 'Kernel time by category')[0]).not.toHaveProperty('In iterations (ns)');
    expect(mdTable(text, 'GPU busy and idle per device').map((r) => r.Device)).toEqual(['0', '1']);
  });

  it('GPU metrics: a metrics-by-phase table when sampled; short runs list every iteration', async () => {
    const dir = 'pytorch-gpu-metrics';
    const { text } = await runReport(fixture(dir, 'trace.sqlite'), { log: [fixture(dir, 'iteration_log.txt')], iterationRows: 60 });
    expect(text).toContain('## GPU metrics');
    const m = mdTable(text, 'GPU metrics by phase');
    expect(m.map((r) => r.Phase)).toEqual(expect.arrayContaining(['context', 'mixed', 'generation']));
    expect(m[0]).toHaveProperty('SMs Active (%)');
    expect(mdTableLines(text, 'All 60 iterations')).toHaveLength(62);
    expect(mdFact(text, 'Python GC and GIL', 'GIL')).toMatch(/^not traced/);
  });

  it('bad options are UsageErrors before the export is read', async () => {
    await expect(runReport('/nonexistent.sqlite', { format: 'pdf' })).rejects.toThrow(/--format must be one of md, html/);
    await expect(runReport('/nonexistent.sqlite', { iterationRange: '/(unclosed/' })).rejects.toThrow();
  });
});
