import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFindings } from '../../src/cli/commands/findings.js';
import { loadRun } from '../../src/summary/loadRun.js';
import { readMoeRouting } from '../../src/compare/compareRuns.js';
import { withExport } from '../../src/export/openExport.js';
import { findFindings } from '../../src/findings/findFindings.js';
import { reportAnalysis } from '../helpers/pipeline.js';
import { runCli } from '../helpers/cli.js';
import { fixture } from '../helpers/fixtures.js';

const MOE = fixture('pytorch-moe-window', 'trace.sqlite');
const PERFECT = fixture('pytorch-moe-perfect-router', 'trace.sqlite');

describe('iterscope findings (CLI)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'iterscope-findings-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('--format json is the versioned result the library returns', () => {
    const r = runCli(['findings', MOE, '--format', 'json']);
    expect(r.status).toBe(0);
    const json = JSON.parse(r.stdout);
    const lib = findFindings(withExport(MOE, (h) => reportAnalysis(h)));
    expect(json.schema).toBe('iterscope.findings/1');
    expect(json.findings.map((f: { id: string }) => f.id)).toEqual(lib.findings.map((f) => f.id));
    expect(json.findings.map((f: { recoverableNs: number }) => f.recoverableNs)).toEqual(lib.findings.map((f) => f.recoverableNs));
    expect(json.thresholds).toEqual(lib.thresholds);
  });

  it('table and Markdown list the top finding first with its remedy; CSV has raw ns', () => {
    const lib = findFindings(withExport(MOE, (h) => reportAnalysis(h)));
    const table = runCli(['findings', MOE, '--format', 'table']);
    expect(table.status).toBe(0);
    expect(table.stdout).toContain(`1. ${lib.findings[0].title} [${lib.findings[0].id}]`);
    expect(table.stdout).toContain(`   remedy: ${lib.findings[0].remedy}`);
    const md = runCli(['findings', MOE, '--format', 'md']);
    expect(md.stdout.split('\n').find((l) => /^1\. /.test(l))).toContain(`\`${lib.findings[0].id}\``);
    const csv = runCli(['findings', MOE, '--format', 'csv']);
    const line = csv.stdout.split('\n').find((l) => l.startsWith(`1,${lib.findings[0].id},`))!;
    expect(line.split(',')[3]).toBe(String(lib.findings[0].recoverableNs));
  });

  it('--thresholds overrides rule thresholds; unknown names and bad files exit 2 with one line', () => {
    const loose = join(dir, 'strict.json');
    writeFileSync(loose, JSON.stringify({ minIdleShare: 0.5, minGapNs: 1e12 }));
    const r = runCli(['findings', MOE, '--thresholds', loose, '--format', 'json']);
    expect(r.status).toBe(0);
    const ids = JSON.parse(r.stdout).findings.map((f: { id: string }) => f.id);
    expect(ids).not.toContain('gc-pauses');
    expect(JSON.parse(r.stdout).thresholds.minIdleShare).toBe(0.5);
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ gcShare: 1 }));
    const e = runCli(['findings', MOE, '--thresholds', bad]);
    expect(e.status).toBe(2);
    expect(e.stderr).toMatch(/^iterscope: --thresholds .*bad\.json: unknown threshold 'gcShare' \(known: .*\)\n$/);
    const missing = runCli(['findings', MOE, '--thresholds', join(dir, 'none.json')]);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/none\.json: no such file\n$/);
  });

  it('--perfect-router: the MoE reading of the pair; no routing finding when the perfect router is not >10% faster', async () => {
    const result = await runFindings([MOE], { perfectRouter: PERFECT });
    const reading = readMoeRouting(loadRun(MOE), loadRun(PERFECT));
    expect(reading.speedup).toBeLessThan(0.1);
    expect(result.findings.map((f) => f.id)).not.toContain('moe-routing');
    // The rule on a reading that passes the seed's >10% rule.
    const data = withExport(MOE, (h) => reportAnalysis(h));
    const n = data.iterations!.iterations.length;
    const faster = { ...reading, headGpuBusyNs: reading.baseGpuBusyNs * 0.8, speedup: 0.2, significant: true };
    const f = findFindings(data, { moeRouting: faster }).findings.find((x) => x.id === 'moe-routing')!;
    expect(f.recoverableNs).toBe(Math.round((reading.baseGpuBusyNs - reading.baseGpuBusyNs * 0.8) * n));
    expect(f.recoverableNs).toBeLessThanOrEqual(f.restsOnNs);
    expect(f.title).toContain('20.0% faster');
  });
});
