/**
 * Issue 29, item 3: several exports at once (the two pytorch-tp2 ranks, rank 1 a damaged copy).
 * `findings` and `report` name each rank's own findings (the same as that export's alone), then
 * the findings across ranks; the damaged rank's excluded rows are noted once, naming its file,
 * whether it is read on the main thread or in a worker thread (`ranks`, `kernels`).
 */
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FindingsResult } from '../../src/findings/finding.js';
import { UNUSABLE_TIMES } from '../../src/export/excludedRows.js';
import { copyExport, editExport } from '../helpers/hostileExport.js';
import { fixture } from '../helpers/fixtures.js';
import { runCli } from '../helpers/cli.js';

const K = 'CUPTI_ACTIVITY_KIND_KERNEL';
const tmp = mkdtempSync(join(tmpdir(), 'iterscope-rankfindings-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const RANK0 = join(tmp, 'trace.rank0.sqlite');
const RANK1 = join(tmp, 'trace.rank1.sqlite');
let damaged = 0;
let noteLine = '';

beforeAll(() => {
  copyFileSync(fixture('pytorch-tp2', 'trace.rank0.sqlite'), RANK0);
  editExport(copyExport(fixture('pytorch-tp2', 'trace.rank1.sqlite'), RANK1), (db) => {
    db.exec(`UPDATE ${K} SET "end" = start - 1000 WHERE rowid % 50 = 0`);
    damaged = (db.prepare('SELECT changes() AS n').get() as { n: number }).n;
  });
  noteLine = `iterscope: ${RANK1}: ${damaged} ${K} rows excluded: ${UNUSABLE_TIMES} (a damaged or edited export; nsys writes none)\n`;
});

/** How many times stderr says the damaged rank's rows were excluded. */
const timesNoted = (stderr: string) => stderr.split(noteLine).length - 1;

describe('findings over one export per rank, one of them damaged', () => {
  let both: FindingsResult;
  beforeAll(() => {
    const r = runCli(['findings', RANK0, RANK1, '--format', 'json']);
    expect(r.status, r.stderr).toBe(0);
    expect(timesNoted(r.stderr)).toBe(1);
    both = JSON.parse(r.stdout) as FindingsResult;
  });

  it("names each rank's own findings: those of that export alone", () => {
    expect(damaged).toBeGreaterThan(300);
    expect(both.ranks!.map((r) => [r.file, r.ranks])).toEqual([
      [RANK0, [0]],
      [RANK1, [1]],
    ]);
    for (const [i, file] of [RANK0, RANK1].entries()) {
      const alone = runCli(['findings', file, '--format', 'json']);
      expect(alone.status).toBe(0);
      const own = JSON.parse(alone.stdout) as FindingsResult;
      expect(both.ranks![i].findings, file).toEqual(own.findings);
      expect(both.ranks![i].basis, file).toEqual(own.basis);
      expect(own.findings.length, file).toBeGreaterThan(2);
    }
  });

  it('keeps the top level (the first export with the findings across ranks), and the findings across ranks are there', () => {
    expect(Object.keys(both)).toEqual(['schema', 'file', 'engine', 'basis', 'thresholds', 'findings', 'ranks']);
    expect(both.file).toBe(RANK0);
    const across = both.findings.filter((f) => f.section === 'ranks').map((f) => f.id);
    expect(across).toEqual(['stragglers']);
    expect(both.findings.filter((f) => f.section !== 'ranks')).toEqual(both.ranks![0].findings);
  });

  it('Markdown: one part per rank, then across ranks', () => {
    const r = runCli(['findings', RANK0, RANK1, '--format', 'md']);
    expect(r.status).toBe(0);
    const headings = r.stdout.split('\n').filter((l) => l.startsWith('## '));
    expect(headings).toEqual([`## Findings of rank 0: ${RANK0}`, `## Findings of rank 1: ${RANK1}`, '## Findings across ranks (2 exports)']);
    expect(timesNoted(r.stderr)).toBe(1);
  });
});

describe('report over one export per rank, one of them damaged', () => {
  it("names each rank's findings and notes the damaged rank's excluded rows once", () => {
    const md = runCli(['report', RANK0, RANK1]);
    expect(md.status, md.stderr).toBe(0);
    expect(timesNoted(md.stderr)).toBe(1);
    for (const title of [`**Findings of rank 0: ${RANK0}**`, `**Findings of rank 1: ${RANK1}**`, '**Findings across ranks (2 exports)**']) expect(md.stdout).toContain(title);
    const html = runCli(['report', RANK0, RANK1, '--format', 'html']);
    expect(html.status).toBe(0);
    const ids = [...html.stdout.matchAll(/<article [^>]*id="([^"]+)"/g)].map((m) => m[1]);
    expect(ids.length).toBeGreaterThan(8);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toContain('finding-rank1-launch-bound');
  });
});

describe('exports read in worker threads', () => {
  it.each([['ranks'], ['kernels']])('%s: the worker\'s excluded-row notes reach stderr once, naming the file', (command) => {
    const r = runCli([command, RANK0, RANK1, '--format', 'csv']);
    expect(r.status, r.stderr).toBe(0);
    expect(timesNoted(r.stderr)).toBe(1);
  });
});
