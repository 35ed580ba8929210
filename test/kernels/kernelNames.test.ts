/**
 * Issue 29, item 2: kernels whose name id an edited export left NULL, or pointed at no StringIds
 * row, are summed in rows that say so, with one note each, by every path the kernel summary is
 * made on: its own query (`kernels`), the pipeline's GPU-op columns on this thread, and those
 * columns in the NVTX worker thread. No kernel time is lost: the total is the untouched export's.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { withExport } from '../../src/export/openExport.js';
import { analyzeExport } from '../../src/pipeline/analyzeExport.js';
import { kernelSummaryNotes, summarizeKernels, type KernelSummary } from '../../src/analysis/kernelSummary.js';
import { copyExport, editExport, retypeColumn } from '../helpers/hostileExport.js';
import { fixture } from '../helpers/fixtures.js';
import { runCli } from '../helpers/cli.js';
import { LoadedExport } from '../../src/load/loadedExport.js';

const DENSE = fixture('pytorch-dense', 'trace.sqlite');
const K = 'CUPTI_ACTIVITY_KIND_KERNEL';
/** 565 kernels. */
const ROWS = 'rowid % 100 = 0';
const tmp = mkdtempSync(join(tmpdir(), 'iterscope-kernelnames-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** The kernel summary by each path. */
function summaries(path: string): Record<'query' | 'inline' | 'background', KernelSummary> {
  return withExport(path, (h) => {
    const byPipeline = (nvtxRead: 'inline' | 'background') => {
      const a = analyzeExport(h, { parts: ['kernels', 'nvtx', 'iterations'], nvtxRead });
      expect('launchIndexes' in a.timingsMs, nvtxRead).toBe(nvtxRead === 'background');
      return a.kernels!;
    };
    return { query: summarizeKernels(new LoadedExport(h)), inline: byPipeline('inline'), background: byPipeline('background') };
  });
}

const total = (s: KernelSummary) => s.rows.reduce((a, r) => a + r.total, 0);
const instances = (s: KernelSummary) => s.rows.reduce((a, r) => a + r.count, 0);
const untouched = withExport(DENSE, (h) => summarizeKernels(new LoadedExport(h)));

describe('kernel names an edited export lost', () => {
  it('NULL demangledName: one <no name> row and one note, on every path; no kernel time lost', () => {
    const path = editExport(copyExport(DENSE, join(tmp, 'null-name.sqlite')), (db) => {
      retypeColumn(db, K, 'demangledName', 'INTEGER');
      db.exec(`UPDATE ${K} SET demangledName = NULL WHERE ${ROWS}`);
    });
    for (const [how, s] of Object.entries(summaries(path))) {
      const row = s.rows.find((r) => r.name === '<no name>');
      expect(row?.count, how).toBe(565);
      expect(s.nullNameKernels, how).toBe(565);
      expect(kernelSummaryNotes(s), how).toEqual(['565 kernels have a NULL name id: summed in the row <no name>']);
      expect(total(s), how).toBe(total(untouched));
      expect(instances(s), how).toBe(instances(untouched));
    }
  });

  it('a name id with no StringIds row (negative here): its own <unknown name ID> row and one note, on every path', () => {
    const path = editExport(copyExport(DENSE, join(tmp, 'dangling-name.sqlite')), (db) => db.exec(`UPDATE ${K} SET demangledName = -5 WHERE ${ROWS}`));
    for (const [how, s] of Object.entries(summaries(path))) {
      expect(s.rows.find((r) => r.name === '<unknown name -5>')?.count, how).toBe(565);
      expect(kernelSummaryNotes(s), how).toEqual(['565 kernels have a name id with no StringIds row: summed per id in rows <unknown name ID>']);
      expect(total(s), how).toBe(total(untouched));
    }
  });

  it('the kernels command prints the note once, on stderr', () => {
    const path = editExport(copyExport(DENSE, join(tmp, 'cli-null-name.sqlite')), (db) => {
      retypeColumn(db, K, 'demangledName', 'INTEGER');
      db.exec(`UPDATE ${K} SET demangledName = NULL WHERE ${ROWS}`);
    });
    const r = runCli(['kernels', path, '--format', 'csv']);
    expect(r.status).toBe(0);
    expect(r.stderr.split('iterscope: 565 kernels have a NULL name id: summed in the row <no name>\n').length).toBe(2);
    expect(r.stdout).toMatch(/,565,[\d.,]+,<no name>\n/);
  });
});
