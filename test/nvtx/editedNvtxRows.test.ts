/**
 * Issue 29, item 2: NVTX rows an edited export holds that no nsys writes, on a copy of
 * pytorch-dense, read with the NVTX side on this thread and in the worker thread: a NULL
 * `eventType` and a REAL (fractional) `start` are left out with one note each, so the NVTX summary,
 * the GPU projection and the iterations equal those of the copy without the rows; negative string
 * ids are ids (the analysis equals that of the untouched export, with no note).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { withExport } from '../../src/export/openExport.js';
import { excludedRowNotes, UNUSABLE_TIMES } from '../../src/export/excludedRows.js';
import { analyzeExport } from '../../src/pipeline/analyzeExport.js';
import type { NvtxReadMode } from '../../src/pipeline/request.js';
import { copyExport, editExport, retypeColumn } from '../helpers/hostileExport.js';
import { fixture } from '../helpers/fixtures.js';
import { runCli } from '../helpers/cli.js';

const DENSE = fixture('pytorch-dense', 'trace.sqlite');
const N = 'NVTX_EVENTS';
const tmp = mkdtempSync(join(tmpdir(), 'iterscope-nvtxrows-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

type Db = Parameters<Parameters<typeof editExport>[1]>[0];
const edited = (name: string, edit: (db: Db) => void) => editExport(copyExport(DENSE, join(tmp, `${name}.sqlite`)), edit);
const count = (path: string, where: string) => withExport(path, (h) => (h.sqlite.prepare(`SELECT count(*) AS n FROM ${N} WHERE ${where}`).get() as { n: number }).n);

/** What the NVTX side gives (no file names in it), with the export's excluded-row notes. */
function analyze(path: string, nvtxRead: NvtxReadMode) {
  return withExport(path, (h) => {
    const a = analyzeExport(h, { parts: ['nvtx', 'nvtxGpu', 'kernels', 'iterations'], nvtxRead });
    expect('launchIndexes' in a.timingsMs, nvtxRead).toBe(nvtxRead === 'background');
    return {
      nvtx: a.nvtx,
      projection: a.projection,
      kernels: a.kernels,
      iterations: a.iterations!.iterations.map(({ iter, label, startNs, endNs, kernelNs, categoryNs }) => ({ iter, label, startNs, endNs, kernelNs, categoryNs })),
      notes: excludedRowNotes(h),
    };
  });
}

/** The forward-step ranges of iterations 1, 10..19 and 100..119 (31 rows): the rows the first case edits. */
const FORWARD_STEP_1X = `rowid IN (SELECT n.rowid FROM ${N} n JOIN StringIds s ON s.id = n.textId WHERE s.value LIKE '[Executor] _forward_step 1%')`;

describe.each(['inline', 'background'] as const)('NVTX read %s', (nvtxRead) => {
  it('rows with a NULL eventType: left out with one note; the analysis is that of the export without them', () => {
    const path = edited(`null-eventType-${nvtxRead}`, (db) => {
      retypeColumn(db, N, 'eventType', 'INTEGER');
      db.exec(`UPDATE ${N} SET eventType = NULL WHERE ${FORWARD_STEP_1X}`);
    });
    const without = edited(`without-forward-1x-${nvtxRead}`, (db) => db.exec(`DELETE FROM ${N} WHERE ${FORWARD_STEP_1X}`));
    const got = analyze(path, nvtxRead);
    expect(got.notes).toEqual([`${path}: 31 ${N} rows excluded: NULL eventType (neither a range nor a mark) (a damaged or edited export; nsys writes none)`]);
    expect(got.iterations.length).toBe(120 - 31);
    expect({ ...got, notes: [] }).toEqual({ ...analyze(without, nvtxRead), notes: [] });
  });

  it('rows with a REAL start (fractional ns): left out with one note; the analysis is that of the export without them', () => {
    const where = 'rowid % 100 = 0';
    const path = edited(`real-start-${nvtxRead}`, (db) => db.exec(`UPDATE ${N} SET start = start + 0.75 WHERE ${where}`));
    const rows = count(path, where);
    const without = edited(`without-real-${nvtxRead}`, (db) => db.exec(`DELETE FROM ${N} WHERE ${where}`));
    const got = analyze(path, nvtxRead);
    expect(got.notes).toEqual([`${path}: ${rows} ${N} rows excluded: ${UNUSABLE_TIMES} (a damaged or edited export; nsys writes none)`]);
    expect({ ...got, notes: [] }).toEqual({ ...analyze(without, nvtxRead), notes: [] });
    // No fraction of a nanosecond anywhere in the NVTX tables.
    for (const r of got.nvtx!.rows) for (const v of [r.total, r.min, r.max]) expect(Number.isInteger(v)).toBe(true);
  });

  it('negative string ids (StringIds and every reference negated): the same analysis as the untouched export, no note', () => {
    const path = edited(`negative-ids-${nvtxRead}`, (db) =>
      db.exec(`UPDATE StringIds SET id = -id - 1;
        UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET demangledName = -demangledName - 1, shortName = -shortName - 1, mangledName = -mangledName - 1;
        UPDATE ${N} SET textId = -textId - 1 WHERE textId IS NOT NULL;
        UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET nameId = -nameId - 1;
        UPDATE ThreadNames SET nameId = -nameId - 1`),
    );
    const got = analyze(path, nvtxRead);
    expect(got.notes).toEqual([]);
    expect(got.nvtx!.rows.length).toBeGreaterThan(100);
    expect(got).toEqual(analyze(DENSE, nvtxRead));
  });
});

describe('the CLI', () => {
  it('nvtx and nvtx --gpu say once that rows with a NULL eventType were left out', () => {
    const path = edited('cli-null-eventType', (db) => {
      retypeColumn(db, N, 'eventType', 'INTEGER');
      db.exec(`UPDATE ${N} SET eventType = NULL WHERE ${FORWARD_STEP_1X}`);
    });
    const line = `iterscope: ${path}: 31 ${N} rows excluded: NULL eventType (neither a range nor a mark) (a damaged or edited export; nsys writes none)\n`;
    for (const args of [['nvtx', path], ['nvtx', path, '--gpu'], ['iterations', path]]) {
      const r = runCli([...args, '--format', 'csv']);
      expect(r.status, args.join(' ')).toBe(0);
      expect(r.stderr.split(line).length, args.join(' ')).toBe(2);
    }
  });
});
