/**
 * Issue 54 item 6, values of the wrong type: a kernel whose name column holds text or a fraction
 * where nsys writes a StringIds id (an edited export; nsys declares it INTEGER NOT NULL, and SQLite
 * keeps a value that is no integer as it is). Such a kernel was summed under the Int32 its value
 * became (text as id 0, 1.5 as id 1), with no note, when the GPU ops were loaded, and under
 * `<unknown name VALUE>` when the summary queried the table. Now both paths exclude it and count it
 * in one note, as the rows with unusable times. (A number in StringIds.value is refused by the
 * contract, hostileCorpus.test.ts; NVTX text is declared TEXT, so SQLite stores a number there as text.)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import BetterSqlite3 from 'better-sqlite3';
import { analyzeExport, openExport, type AnalysisPart, type ExportAnalysis } from '../../src/index.js';
import { excludedRowNotes } from '../../src/export/excludedRows.js';
import { copyExport, editExport } from '../helpers/hostileExport.js';
import { fixture } from '../helpers/fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'iterscope-wrongtype-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const VLLM = fixture('vllm-dense', 'trace.sqlite');
const K = 'CUPTI_ACTIVITY_KIND_KERNEL';

function analysed(path: string, parts: AnalysisPart[]): { a: ExportAnalysis; notes: string[] } {
  const h = openExport(path);
  try {
    const a = analyzeExport(h, { parts, selection: { firstIter: 40 } });
    return { a, notes: excludedRowNotes(h) };
  } finally {
    h.close();
  }
}

const kernelTotal = (a: ExportAnalysis) => a.kernels!.rows.reduce((n, r) => n + r.count, 0);
const sqlCount = (path: string, where: string) => {
  const db = new BetterSqlite3(path, { readonly: true });
  try {
    return (db.prepare(`SELECT count(*) AS n FROM ${K} WHERE ${where}`).get() as { n: number }).n;
  } finally {
    db.close();
  }
};

describe('kernel names that are not StringIds ids', () => {
  const full = analysed(VLLM, ['kernels', 'iterations']);
  for (const [label, value] of [
    ['text', `'my_kernel'`],
    ['a fraction', '1.5'],
  ] as const) {
    it(`${label}: excluded and counted in one note, on the queried and the loaded path alike`, () => {
      const copy = editExport(copyExport(VLLM, join(dir, `${label}.sqlite`)), (db) => db.exec(`UPDATE ${K} SET demangledName = ${value} WHERE rowid % 100 = 0`));
      const wrong = sqlCount(copy, `typeof(demangledName) NOT IN ('integer', 'null')`);
      expect(wrong).toBe(169);
      const note = `${copy}: ${wrong} ${K} rows excluded: a name that is not an integer StringIds id (text or a fraction where nsys writes an id) (a damaged or edited export; nsys writes none)`;
      // `kernels` alone queries the table; with `iterations` it reads the loaded GPU ops.
      for (const parts of [['kernels'], ['kernels', 'iterations']] as AnalysisPart[][]) {
        const lean = analysed(copy, parts);
        expect(lean.notes, parts.join('+')).toEqual([note]);
        expect(kernelTotal(lean.a), parts.join('+')).toBe(kernelTotal(full.a) - wrong);
        expect(lean.a.kernels!.rows.some((r) => /^<unknown name|^<no name>/.test(r.name)), parts.join('+')).toBe(false);
        expect(lean.a.kernels!.unknownNameKernels).toBe(0);
      }
      // The iterations' kernels: those of the full export less the excluded ones inside them.
      const lean = analysed(copy, ['kernels', 'iterations']);
      const sum = (a: ExportAnalysis) => a.iterations!.iterations.reduce((n, r) => n + r.kernelCount, 0);
      expect(sum(lean.a)).toBeLessThan(sum(full.a));
      expect(sum(full.a) - sum(lean.a)).toBeLessThanOrEqual(wrong);
      expect(full.notes).toEqual([]);
    });
  }
});
