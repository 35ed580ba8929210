import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Comparison } from '../../src/compare/compareRuns.js';
import { compareChangesChart, comparisonDocument, MAX_CHART_METRICS } from '../../reports/compareReport.js';
import { runCli } from '../helpers/cli.js';
import { captured, hasCaptured } from '../helpers/captured.js';

/** Issue 57 item 5: `compare --format html` opens with its chart of the metrics' changes, then the tables. */
const GATE = hasCaptured('gate', 'plain-a/trace.sqlite');
const at = (run: string, file: string) => captured('gate', run, file);
const args = () => ['compare', at('plain-a', 'trace.sqlite'), at('plain-slow', 'trace.sqlite'), '--base-benchmark', at('plain-a', 'benchmark_results.json'), '--head-benchmark', at('plain-slow', 'benchmark_results.json')];

describe.skipIf(!GATE)('compare as one HTML page (plain a vs slow, the gate captures)', () => {
  it('-o x.html writes the page, exit 1 as the gate; the chart first, a row per metric coloured by verdict, the regressions first; nothing fetched', () => {
    const out = join(mkdtempSync(join(tmpdir(), 'iterscope-compare-html-')), 'compare.html');
    const r = runCli([...args(), '-o', out]);
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/regression: kernels per generated token \[span\]/);
    const html = readFileSync(out, 'utf8');
    const json = JSON.parse(runCli([...args(), '--format', 'json']).stdout) as Comparison;
    expect(html).toContain("default-src 'none'");
    expect(html).not.toMatch(/(src|href)="https?:/);
    // The chart comes before the first table.
    expect(html.indexOf('id="chart-compare-metric-changes"')).toBeGreaterThan(0);
    expect(html.indexOf('id="chart-compare-metric-changes"')).toBeLessThan(html.indexOf('<table'));
    const verdicts = [...html.matchAll(/<g class="metric-row" data-verdict="([a-z]+)">/g)].map((m) => m[1]);
    expect(verdicts.length).toBe(Math.min(MAX_CHART_METRICS, json.metrics.filter((m) => m.relative != null).length));
    expect(verdicts.slice(0, json.regressions.length)).toEqual(json.regressions.map(() => 'regressed'));
    expect(verdicts.filter((v) => v === 'inconclusive').length).toBe(json.metrics.filter((m) => m.verdict === 'inconclusive').length);
    // Each regression's hover text names its values and interval as the JSON has them.
    const norm = json.metrics.find((m) => m.metric === 'norm time per generated token' && m.scope === 'span')!;
    expect(html).toContain(`interval +${(norm.interval!.lo * 100).toFixed(1)}%..+${(norm.interval!.hi * 100).toFixed(1)}%`);
    expect(html).toContain('Not drawn: 13 more metrics (smaller changes) in the table below.');
  });

  it('renders whatever metric rows a comparison has (a row of a new kind needs no more work)', () => {
    const json = JSON.parse(runCli([...args(), '--format', 'json']).stdout) as Comparison;
    const extra = { ...json.metrics[0], metric: 'layer 3 attention per iteration', scope: 'generation' as const, relative: 0.5, interval: { lo: 0.4, hi: 0.6 }, verdict: 'regressed' as const, gated: true, regressed: true };
    const chart = compareChangesChart({ ...json, metrics: [...json.metrics, extra], regressions: [...json.regressions, extra] });
    expect(chart.data.map((d) => d.label)).toContain('layer 3 attention per iteration [generation]');
    expect(comparisonDocument(json).sections.map((s) => s.blocks[0].kind)).toEqual(['chart', 'table']);
  });

  it('--format md and json print as before (the page is only written when asked for)', () => {
    const md = runCli([...args(), '--format', 'md']);
    expect(md.stdout).not.toContain('<svg');
    expect(md.stdout).toContain('| Verdict |');
  });
});
