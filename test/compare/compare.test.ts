import { copyFileSync, chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { defaultCategoryClassifier } from '../../src/categories/rules.js';
import { compareRuns } from '../../src/compare/compareRuns.js';
import { parseThreshold } from '../../src/compare/threshold.js';
import { withExport } from '../../src/export/openExport.js';
import { summarizeExport } from '../../src/summary/runSummary.js';
import { runCli } from '../helpers/cli.js';
import { fixture } from '../helpers/fixtures.js';

const dense = fixture('pytorch-dense', 'trace.sqlite');
const denseLog = fixture('pytorch-dense', 'iteration_log.txt');

/** A copy of pytorch-dense whose kernels of one category run 20% longer. */
function lengthenCategory(category: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'iterscope-compare-'));
  const copy = join(dir, 'slower.sqlite');
  copyFileSync(dense, copy);
  chmodSync(copy, 0o644);
  const db = new BetterSqlite3(copy);
  const cls = defaultCategoryClassifier();
  const ids = (db.prepare('SELECT DISTINCT k.demangledName AS id, s.value AS name FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName').all() as { id: number; name: string }[])
    .filter((r) => cls.categories[cls.classify(r.name)] === category)
    .map((r) => r.id);
  expect(ids.length).toBeGreaterThan(0);
  db.prepare(`UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET "end" = start + CAST(("end" - start) * 1.2 AS INTEGER) WHERE demangledName IN (SELECT value FROM json_each(?))`).run(JSON.stringify(ids));
  db.close();
  return copy;
}

describe('compare', () => {
  it('a fixture compared with itself: no regression, exit 0', () => {
    const dir = mkdtempSync(join(tmpdir(), 'iterscope-summary-'));
    const summary = join(dir, 'base.json');
    const s = runCli(['summarize', dense, '--log', denseLog, '-o', summary]);
    expect(s.status).toBe(0);
    const r = runCli(['compare', summary, dense, '--head-log', denseLog, '--format', 'json']);
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.regressions).toEqual([]);
    for (const m of out.metrics) expect(m.delta).toBe(0);
  });

  it('attention kernels lengthened by 20%: exit 1, the attention category is named, no other category is flagged', () => {
    const slower = lengthenCategory('attention');
    const r = runCli(['compare', dense, slower, '--format', 'md']);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^iterscope: regression: .*attention per iteration/);
    const base = withExport(dense, (h) => summarizeExport(h));
    const head = withExport(slower, (h) => summarizeExport(h));
    const c = compareRuns(base, head);
    const flaggedCategories = new Set(c.regressions.filter((m) => m.metric.endsWith(' per iteration') && !m.metric.startsWith('GPU busy')).map((m) => m.metric));
    expect([...flaggedCategories]).toEqual(['attention per iteration']);
    const att = c.metrics.find((m) => m.scope === 'all' && m.metric === 'attention per iteration')!;
    // Integer truncation of each lengthened kernel keeps the change a hair under 20%.
    expect(att.relative).toBeGreaterThan(0.199);
    expect(att.relative).toBeLessThanOrEqual(0.2);
    expect(r.stdout).toContain('REGRESSED');
  });

  it('pytorch-moe-window vs pytorch-moe-perfect-router prints the MoE routing reading with its numbers', () => {
    const r = runCli(['compare', fixture('pytorch-moe-window', 'trace.sqlite'), fixture('pytorch-moe-perfect-router', 'trace.sqlite'), '--format', 'json']);
    const out = JSON.parse(r.stdout);
    expect(out.moeRouting).not.toBeNull();
    expect(out.base.perfectRouter).toBe(false);
    expect(out.head.perfectRouter).toBe(true);
    const m = out.moeRouting;
    expect(m.speedup).toBeCloseTo((m.baseGpuBusyNs - m.headGpuBusyNs) / m.baseGpuBusyNs, 12);
    expect(m.reading).toMatch(m.significant ? /routing imbalance is significant/ : /not the bottleneck/);
    expect(r.stderr).toContain('MoE routing check:');
  });

  it('parses thresholds and refuses ambiguous ones', () => {
    expect(parseThreshold('5%')).toBe(0.05);
    expect(parseThreshold('0.1')).toBe(0.1);
    expect(() => parseThreshold('5')).toThrow(/ambiguous/);
    expect(() => parseThreshold('five')).toThrow(/percentage/);
    const bad = runCli(['compare', dense, dense, '--min-delta', '10']);
    expect(bad.status).toBe(2);
  });

  it('refuses a JSON file that is not an iterscope summary', () => {
    const dir = mkdtempSync(join(tmpdir(), 'iterscope-bad-summary-'));
    const p = join(dir, 'x.json');
    writeFileSync(p, '{"hello": 1}');
    const r = runCli(['compare', p, p]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(p);
  });
});
