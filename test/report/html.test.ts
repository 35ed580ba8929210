import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerReport, runReport } from '../../src/cli/commands/report.js';
import { gpuTimeByCategoryChart, idleByCauseChart, idleByIterationChart } from '../../reports/document/charts.js';
import { fragmentedLabel } from '../../reports/document/document.js';
import type { ReportData } from '../../src/pipeline/exportAnalysis.js';
import { binIterations, iterationTicks } from '../../reports/html/chartSpecs.js';
import { fixture } from '../helpers/fixtures.js';
import Database from 'better-sqlite3';
import { isBlockingSyncApi } from '../../src/gaps/hostCauses.js';

const DENSE = fixture('pytorch-dense', 'trace.sqlite');
const LOGS = [fixture('pytorch-dense', 'iteration_log.txt'), fixture('pytorch-dense', 'executor.log')];

/** Attribute values that would make the page fetch something. */
function externalRefs(html: string): string[] {
  const refs = [...html.matchAll(/\b(?:src|href|xlink:href|action|poster|data)\s*=\s*["']?([^"'\s>]+)/gi)].map((m) => m[1]);
  const cssUrls = [...html.matchAll(/url\(\s*["']?([^"')]+)/gi)].map((m) => m[1]);
  return [...refs, ...cssUrls].filter((u) => !u.startsWith('#') && !u.startsWith('data:'));
}

describe('iterscope report --format html', () => {
  let html: string;
  let md: string;
  let data: ReportData;
  let mdData: ReportData;
  beforeAll(async () => {
    const r = await runReport(DENSE, { log: LOGS, format: 'html' });
    html = r.text;
    data = r.data;
    const m = await runReport(DENSE, { log: LOGS });
    md = m.text;
    mdData = m.data;
  });

  it('is one self-contained page: one inline script allowed by its hash, no external src/href/url(), a CSP that forbids fetching', () => {
    expect(html.startsWith('<!DOCTYPE html>')).toBe(true);
    expect(html).not.toMatch(/<link|<iframe|<img|@import/i);
    expect(externalRefs(html)).toEqual([]);
    // The only absolute URLs are SVG namespace declarations.
    const urls = [...html.matchAll(/https?:\/\/[^\s"'<>]+/g)].map((m) => m[0]);
    expect(urls).toContain('http://www.w3.org/2000/svg');
    expect(urls.filter((u) => u !== 'http://www.w3.org/2000/svg' && u !== 'http://www.w3.org/1999/xlink')).toEqual([]);
    // Scripts: the timeline's JSON data (never run) and the page script, which the CSP allows by its
    // sha256 and nothing else (no 'unsafe-inline' for scripts, no source to fetch from).
    const scripts = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.map((m) => m[1])).toEqual([' type="application/json" id="timeline-data"', '']);
    expect((html.match(/<script/g) ?? []).length).toBe(2);
    const hash = createHash('sha256').update(scripts[1][2], 'utf8').digest('base64');
    expect(html).toContain(`content="default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-${hash}'"`);
  });

  it('has the charts as inline SVG with drawn marks', () => {
    const figures = [...html.matchAll(/<figure class="chart" id="chart-([a-z-]+)"[\s\S]*?<\/figure>/g)];
    expect(figures.map((f) => f[1])).toEqual(['gpu-time-by-category', 'idle-by-cause', 'idle-by-iteration']);
    for (const f of figures) {
      expect(f[0]).toMatch(/<svg[^>]*viewBox=/);
      expect((f[0].match(/<path /g) ?? []).length).toBeGreaterThan(20);
      expect(f[0]).toContain('<figcaption>');
    }
    // Clip-path and gradient ids stay unique across the inline SVGs.
    const ids = [...html.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('holds the same sections and tables as the Markdown', () => {
    const mdSections = md.split('\n').filter((l) => l.startsWith('## ')).map((l) => l.slice(3));
    const htmlSections = [...html.matchAll(/<h2>([^<]*)<\/h2>/g)].map((m) => m[1]);
    // The page leads with the iterations chart, the findings and the step timeline, then the sections
    // with charts, then the rest (document order within each group).
    expect(htmlSections).toEqual([
      'Iterations at a glance',
      'Findings',
      'Step timeline',
      'GPU time by kernel category',
      'GPU idle time and its causes',
      'Run',
      'Top kernels',
      'Iterations',
      'NVTX ranges (CPU time and GPU projection)',
      'Python GC and GIL',
      'Coverage and notes',
    ]);
    // The two picture sections are the HTML's own; every other section is the Markdown's.
    expect(htmlSections.filter((t) => t !== 'Iterations at a glance' && t !== 'Step timeline').sort()).toEqual([...mdSections].sort());
    const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
    for (const title of md.split('\n').filter((l) => l.startsWith('### ')).map((l) => l.slice(4))) expect(html).toContain(`<caption>${escape(title)}</caption>`);
    expect(html).toContain('<td class="num">97.12 ms</td>');
    expect(html).toContain('<td class="num">68.11 ms</td>');
  });

  it('opens with the iterations chart: one column per iteration, hover text with its batch, slow and cited ones marked', () => {
    const rows = data.iterations!.iterations;
    const fig = /<figure class="overview" id="overview-chart" data-bars="(\d+)">[\s\S]*?<\/figure>/.exec(html)!;
    expect(/<section id="([^"]+)">/.exec(html)![1]).toBe('overview');
    expect(Number(fig[1])).toBe(120);
    const cols = [...fig[0].matchAll(/<g class="it" data-i="\d+" data-iter="(\d+)"(?: data-open-step="\d+")? data-tip="([^"]*)">([\s\S]*?)<\/g>/g)];
    expect(cols.map((c) => Number(c[1]))).toEqual(rows.map((r) => r.iter));
    const unescape = (t: string) => t.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
    for (const [i, r] of rows.entries()) {
      // The batch as the iterations table has it (ctx/gen requests and tokens), written out here.
      const gen = `gen ${r.generationRequests} req${r.generationTokens == null ? '' : ` / ${r.generationTokens} tok`}`;
      expect(unescape(cols[i][2]).split('\n')[1], `iteration ${r.iter}`).toBe(`ctx ${r.contextRequests} req / ${r.contextTokens} tok · ${gen}`);
    }
    const walls = rows.map((r) => r.wallNs).sort((a, b) => b - a);
    const slow = rows.filter((r) => r.wallNs >= walls[5]).map((r) => r.iter);
    expect(cols.filter((c) => c[3].includes('mark-slow')).map((c) => Number(c[1]))).toEqual(slow);
    const cited = new Set(data.findings.findings.flatMap((f) => f.evidence.flatMap((e) => (e.iter === undefined ? [] : [e.iter]))));
    expect(cited.size).toBeGreaterThan(0);
    expect(cols.filter((c) => c[3].includes('mark-cited')).map((c) => Number(c[1]))).toEqual(rows.filter((r) => cited.has(r.iter)).map((r) => r.iter));
  });

  it('has the step timeline: the slowest, the median and cited steps (at most 8), each with every op it launched', () => {
    expect(html).toMatch(/<div class="timeline" data-timeline /);
    const payload = JSON.parse(/<script type="application\/json" id="timeline-data">([\s\S]*?)<\/script>/.exec(html)![1]) as {
      categories: string[];
      steps: { iter: number; reasons: string[]; ops: number[]; window: number[] }[];
    };
    const rows = data.iterations!.iterations;
    const byWall = [...rows].sort((a, b) => b.wallNs - a.wallNs);
    expect(payload.steps.length).toBeLessThanOrEqual(8);
    expect(payload.steps[0].iter).toBe(byWall[0].iter);
    expect(payload.steps[0].reasons[0]).toBe('slowest');
    const median = payload.steps.find((s) => s.reasons.includes('median'))!;
    expect(median.iter).toBe(byWall[Math.floor((rows.length - 1) / 2)].iter);
    for (const s of payload.steps) {
      const row = rows.find((r) => r.iter === s.iter)!;
      expect(s.window[1] - s.window[0]).toBe(row.wallNs);
      expect(s.ops.length / 8, `iteration ${s.iter}`).toBe(row.kernelCount + row.memcpyCount + row.memsetCount);
      // Kernel time by category over the step's ops: the iterations table's per-category columns.
      const byCat: Record<string, number> = {};
      for (let i = 0; i < s.ops.length; i += 8) {
        const cat = payload.categories[s.ops[i + 4]];
        if (cat !== 'memcpy' && cat !== 'memset') byCat[cat] = (byCat[cat] ?? 0) + (s.ops[i + 1] - s.ops[i]);
      }
      for (const [cat, ns] of Object.entries(row.categoryNs)) if (ns > 0) expect(byCat[cat], `${s.iter} ${cat}`).toBeCloseTo(ns, -1);
    }
    // Every finding card that cites iterations links each to its timeline (or to the chart).
    const links = [...html.matchAll(/<a href="#timeline" data-open-step="(\d+)">/g)].map((m) => Number(m[1]));
    expect(links.length).toBeGreaterThan(0);
    for (const it of links) expect(payload.steps.map((s) => s.iter)).toContain(it);
  });

  it("each step's blocking CUDA calls are those of its process overlapping its view, as SQL reads them from the export", () => {
    const payload = JSON.parse(/<script type="application\/json" id="timeline-data">([\s\S]*?)<\/script>/.exec(html)![1]) as {
      names: string[];
      hostKinds: string[];
      steps: { pid: number; t0: number; span: number; host: number[][]; droppedHostRanges: number }[];
    };
    const db = new Database(DENSE, { readonly: true });
    try {
      const calls = db
        .prepare('SELECT r.start AS start, r."end" AS "end", (r.globalTid >> 24) & 16777215 AS pid, s.value AS name FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId')
        .all() as { start: number; end: number; pid: number; name: string }[];
      const blocking = calls.filter((c) => isBlockingSyncApi(c.name));
      let seen = 0;
      for (const s of payload.steps.filter((x) => x.droppedHostRanges === 0)) {
        const sync = payload.hostKinds.indexOf('sync');
        const drawn = s.host.filter((h) => h[1] === sync).map((h) => `${payload.names[h[2]]}@${h[3]}..${h[4]}`);
        const expected = blocking.filter((c) => c.pid === s.pid && c.end >= s.t0 && c.start <= s.t0 + s.span).map((c) => `${c.name}@${Math.round(c.start - s.t0)}..${Math.round(c.end - s.t0)}`);
        expect(drawn.sort()).toEqual(expected.sort());
        seen += drawn.length;
      }
      expect(seen).toBeGreaterThan(0);
    } finally {
      db.close();
    }
  });

  it('Markdown neither asks for nor holds the step timeline', () => {
    expect(data.stepTimeline?.steps.length).toBeGreaterThan(0);
    expect(mdData.parts).not.toContain('stepTimeline');
    expect('stepTimeline' in mdData).toBe(false);
    expect(md).not.toMatch(/Iterations at a glance|Step timeline/);
  });

  it("chart data are the tables' numbers", () => {
    const it = data.iterations!;
    const gpu = gpuTimeByCategoryChart(it);
    const sum = (xs: { ns?: unknown }[]) => xs.reduce((a, d) => a + Number(d.ns), 0);
    for (const c of data.categories.rows) expect(sum(gpu.data.filter((d) => d.series === c.category)), c.category).toBe(c.iterationNs);
    expect(sum(gpu.data.filter((d) => d.series === 'memcpy'))).toBe(it.iterations.reduce((a, r) => a + r.memcpyNs, 0));
    expect(sum(gpu.data.filter((d) => d.series === 'memset'))).toBe(it.iterations.reduce((a, r) => a + r.memsetNs, 0));
    expect(gpu.series.slice(-2)).toEqual(['memcpy', 'memset']);
    const idle = idleByCauseChart(data.gaps, fragmentedLabel(data.gaps.minGapNs));
    for (const [cause, ns] of Object.entries(data.gaps.devices[0].idleByCauseNs)) expect(idle.data.find((d) => d.series === cause)?.ns).toBe(ns);
    expect(sum(idle.data)).toBe(data.gaps.devices[0].idleNs);
    const perIter = idleByIterationChart(it)!;
    expect(perIter.series[0]).toBe('gc');
    expect(perIter.series).toContain('fragmented');
  });
});

describe('per-iteration chart binning (long runs)', () => {
  const chart = (iters: number[]) => ({
    id: 'gpu-time-by-category' as const,
    title: 't',
    caption: 'c',
    series: ['a', 'b'],
    iterations: iters,
    data: iters.flatMap((i) => [
      { iter: i, series: 'a', ns: 1000 + i },
      ...(i % 2 ? [{ iter: i, series: 'b', ns: 10 }] : []),
    ]),
  });

  it('keeps the data as is up to the bar limit', () => {
    const c = chart([0, 1, 2, 3]);
    expect(binIterations(c, 'ns', 'perIteration', 4)).toEqual({ binSize: 1, data: c.data, xs: [0, 1, 2, 3] });
  });

  it('bins to at most the limit, as means per iteration that keep the totals', () => {
    const iters = Array.from({ length: 1500 }, (_, i) => i);
    const c = chart(iters);
    const b = binIterations(c, 'ns', 'perIteration', 300);
    expect(b.binSize).toBe(5);
    expect(b.xs).toHaveLength(300);
    const total = (rows: Record<string, string | number>[], s: string) => rows.filter((d) => d.series === s).reduce((a, d) => a + Number(d.ns), 0);
    for (const s of ['a', 'b']) expect(total(b.data, s) * 5).toBeCloseTo(total(c.data, s), 6);
    // Series b exists in 2 or 3 of a bin's 5 iterations; its mean still divides by 5.
    expect(b.data.find((d) => d.iter === 0 && d.series === 'b')!.ns).toBe(4);
  });

  it('labels round iteration numbers that fall on bins', () => {
    expect(iterationTicks([0, 1, 2], 1)).toEqual([0, 1, 2]);
    const xs = Array.from({ length: 300 }, (_, i) => i * 5);
    expect(iterationTicks(xs, 5)).toEqual(Array.from({ length: 15 }, (_, i) => i * 100));
    const thirds = Array.from({ length: 300 }, (_, i) => 7 + i * 3);
    const t = iterationTicks(thirds, 3);
    expect(t.length).toBeLessThanOrEqual(17);
    for (const x of t) expect((x - 7) % 3).toBe(0);
  });
});

describe('iterscope report (commander program with registerReport)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'iterscope-report-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function run(args: string[]): Promise<void> {
    const p = new Command('iterscope').exitOverride();
    registerReport(p);
    for (const c of p.commands) c.exitOverride();
    await p.parseAsync(['node', 'iterscope', 'report', ...args]);
  }

  it('-o report.html picks HTML from the extension; --format md overrides it', async () => {
    const html = join(dir, 'r.html');
    await run([DENSE, '--log', LOGS[0], '-o', html, '--top', '3']);
    expect(readFileSync(html, 'utf8')).toMatch(/^<!DOCTYPE html>/);
    const md = join(dir, 'r2.html');
    await run([DENSE, '-o', md, '--format', 'md', '--iteration-rows', '200']);
    const text = readFileSync(md, 'utf8');
    expect(text).toMatch(/^# iterscope report/);
    expect(text).toContain('### All 120 iterations');
  });

  it('rejects bad option values before reading the export', async () => {
    await expect(run(['/nonexistent.sqlite', '--format', 'pdf'])).rejects.toThrow(/--format/);
    await expect(run(['/nonexistent.sqlite', '--top', 'x'])).rejects.toThrow(/--top/);
    await expect(run(['/nonexistent.sqlite', '--min-gap', 'soon'])).rejects.toThrow(/--min-gap/);
  });
});
