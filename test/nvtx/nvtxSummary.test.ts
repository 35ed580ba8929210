/**
 * `nvtx` against NVIDIA's own `nsys stats -r nvtx_sum --format csv` output (the `nsys-stats/`
 * oracles beside each fixture).
 */
import { readFileSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import { beforeAll, describe, expect, it } from 'vitest';
import { withExport } from '../../src/export/openExport.js';
import { summarizeNvtx, type NvtxSummary } from '../../src/analysis/nvtxSummary.js';
import { fixture } from '../helpers/fixtures.js';
import { parseCsvObjects } from '../helpers/csv.js';
import { runCli } from '../helpers/cli.js';
import { expectStatsMatch, exactInt, STAT_HEADERS } from '../helpers/nsysStats.js';
import { LoadedExport } from '../../src/load/loadedExport.js';

const NVTX_SUM_HEADER = [...STAT_HEADERS, 'Style', 'Range'];

const CASES = [
  { name: 'pytorch-dense', export: fixture('pytorch-dense', 'trace.sqlite'), oracle: fixture('pytorch-dense', 'nsys-stats', 'nvtx_sum.csv') },
  { name: 'pytorch-moe-window', export: fixture('pytorch-moe-window', 'trace.sqlite'), oracle: fixture('pytorch-moe-window', 'nsys-stats', 'nvtx_sum.csv') },
  { name: 'pytorch-gpu-metrics', export: fixture('pytorch-gpu-metrics', 'trace.sqlite'), oracle: fixture('pytorch-gpu-metrics', 'nsys-stats', 'nvtx_sum.csv') },
  { name: 'sglang', export: fixture('sglang', 'trace.sqlite'), oracle: fixture('sglang', 'nsys-stats', 'nvtx_sum.csv') },
  ...[1, 2].map((i) => ({
    name: `cpp-legacy-windows trace.${i}`,
    export: fixture('cpp-legacy-windows', `trace.${i}.sqlite`),
    oracle: fixture('cpp-legacy-windows', 'nsys-stats', `${i}.nvtx_sum.csv`),
  })),
];

describe.each(CASES)('nvtx agrees with nsys nvtx_sum on $name', (c) => {
  let summary: NvtxSummary;
  let oracleText: string;
  let oracle: Record<string, string>[];
  beforeAll(() => {
    summary = withExport(c.export, (h) => summarizeNvtx(new LoadedExport(h)));
    oracleText = readFileSync(c.oracle, 'utf8');
    const parsed = parseCsvObjects(oracleText);
    expect(parsed.header).toEqual(NVTX_SUM_HEADER);
    oracle = parsed.rows;
  });

  it('has the same (Style, Range) rows in the same order, counts and ns totals exact, derived columns within 0.1', () => {
    expect(oracle.length).toBeGreaterThan(3);
    expect(summary.rows.map((r) => `${r.style} ${r.range}`)).toEqual(oracle.map((o) => `${o['Style']} ${o['Range']}`));
    summary.rows.forEach((r, i) => expectStatsMatch(r, oracle[i], `row ${i + 1} ${r.style} ${r.range.slice(0, 60)}`));
  });

  it('counts every NVTX range event of the export once', () => {
    const db = new BetterSqlite3(c.export, { readonly: true, fileMustExist: true });
    try {
      const n = db.prepare('SELECT count(*) FROM NVTX_EVENTS WHERE eventType IN (59, 60, 70, 71)').pluck().get() as number;
      expect(oracle.reduce((a, o) => a + exactInt(o['Instances']), 0)).toBe(n);
      expect(summary.rows.reduce((a, r) => a + r.count, 0)).toBe(n);
      const unclosed = db.prepare('SELECT count(*) FROM NVTX_EVENTS WHERE eventType IN (59, 60, 70, 71) AND "end" IS NULL').pluck().get() as number;
      expect(summary.unclosedRanges).toBe(unclosed);
    } finally {
      db.close();
    }
  });

  it('CLI --format csv is byte-identical to the nsys CSV', () => {
    const r = runCli(['nvtx', c.export, '--format', 'csv']);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(oracleText);
    // Notes (unclosed or cross-thread ranges) may go to stderr, never anything else.
    for (const line of r.stderr.split('\n').filter(Boolean)) expect(line).toMatch(/^iterscope: \d+ (ranges were never closed|start\/end ranges ended on another thread)/);
  });
});

describe('nvtx range labels on pytorch-dense', () => {
  it('prints named domains as Domain:Text and the default domain as :Text', () => {
    const s = withExport(fixture('pytorch-dense', 'trace.sqlite'), (h) => summarizeNvtx(new LoadedExport(h)));
    const labels = new Set(s.rows.map((r) => `${r.style} ${r.range}`));
    expect(labels).toContain('PushPop GIL Trace:Holding GIL');
    expect(labels).toContain('PushPop TensorRT-LLM:_schedule');
    expect(labels).toContain('StartEnd :Python GC');
  });
});
