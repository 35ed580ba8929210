/**
 * `info`'s questions of NVTX_EVENTS (is GC traced: a 'Python GC' range; which engine: a range
 * text an iteration source knows) answered from the NVTX columns when they are read, with no
 * second scan of the table: the answers must equal the SQL's on every fixture export, and the
 * SQL must still answer when the columns left rows out (their times unusable).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hasMatchingNvtxRange } from '../../queries/iterationRanges.js';
import { withExport } from '../../src/export/openExport.js';
import { DEFAULT_ITERATION_SOURCES } from '../../src/iterations/sources/index.js';
import { hasNvtxRangeMatching } from '../../src/load/iterationRangeReads.js';
import { hasNvtxRangeWithText } from '../../src/load/infoReads.js';
import { LoadedExport } from '../../src/load/loadedExport.js';
import { hasRangeRowMatching, isNvtxRange } from '../../src/load/nvtxEventColumns.js';
import { copyExport, editExport } from '../helpers/hostileExport.js';
import { fixture, fixtureExports } from '../helpers/fixtures.js';

const tmp = mkdtempSync(join(tmpdir(), 'iterscope-nvtx-answers-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Texts worth asking about in an export: GC, its first range's and first mark-or-other row's text, and one no row has. */
function textsToAsk(loaded: LoadedExport): string[] {
  const cols = loaded.nvtx();
  const firstRange = [...Array(cols.count).keys()].find((i) => isNvtxRange(cols.eventType[i]) && cols.text[i] >= 0);
  const firstOther = [...Array(cols.count).keys()].find((i) => !isNvtxRange(cols.eventType[i]) && cols.text[i] >= 0);
  return ['Python GC', 'no range has this text', ...[firstRange, firstOther].filter((i) => i !== undefined).map((i) => cols.texts[cols.text[i!]])];
}

describe('NVTX questions answered from the columns', () => {
  const exports = fixtureExports().filter((f) => withExport(f, (h) => h.hasTable('NVTX_EVENTS')));

  it.each(exports.map((f) => [f.replace(/^.*fixtures\//, ''), f]))('%s: GC and engine answers equal the SQL', (_name, file) => {
    withExport(file, (h) => {
      const byColumns = new LoadedExport(h);
      const cols = byColumns.nvtx();
      const bySql = new LoadedExport(h);
      expect(bySql.sharedNvtx()).toBeUndefined();
      for (const text of textsToAsk(byColumns)) {
        expect(hasNvtxRangeWithText(byColumns, text), text).toBe(hasNvtxRangeWithText(bySql, text));
      }
      for (const source of DEFAULT_ITERATION_SOURCES) {
        if (!source.matchesText) continue;
        expect(hasNvtxRangeMatching(byColumns, source.matchesText), source.id).toBe(hasMatchingNvtxRange(h, source.matchesText));
      }
      // The columns did answer (no row left out), so this compared them with the SQL.
      expect(cols.invalidRows).toBe(0);
    });
  });

  it('the fixtures hold both answers: GC traced in some exports, not in others; some engine matched', () => {
    const gc = exports.map((f) => withExport(f, (h) => hasNvtxRangeWithText(new LoadedExport(h), 'Python GC')));
    expect(gc).toContain(true);
    expect(gc).toContain(false);
    const engines = exports.filter((f) => withExport(f, (h) => DEFAULT_ITERATION_SOURCES.some((s) => s.matchesText && hasRangeRowMatching(new LoadedExport(h).nvtx(), s.matchesText))));
    expect(engines.length).toBeGreaterThan(0);
  });

  it('a range whose times are unusable still counts, as in SQL: the columns leave it out, so the query answers', () => {
    const file = editExport(copyExport(fixture('pytorch-dense', 'trace.sqlite'), join(tmp, 'gc-times.sqlite')), (db) => {
      // Every GC range but one made unusable (end before start), and that one removed: GC is
      // traced only by rows the columns cannot hold.
      db.exec(`UPDATE NVTX_EVENTS SET "end" = start - 1 WHERE textId IN (SELECT id FROM StringIds WHERE value = 'Python GC') OR text = 'Python GC'`);
    });
    withExport(file, (h) => {
      const loaded = new LoadedExport(h);
      const cols = loaded.nvtx();
      expect(cols.invalidRows).toBeGreaterThan(0);
      expect(hasRangeRowMatching(cols, (t) => t === 'Python GC')).toBe(false);
      expect(hasNvtxRangeWithText(loaded, 'Python GC')).toBe(true);
    });
  });

  it('a mark with the text is not a range', () => {
    const file = editExport(copyExport(fixture('pytorch-dense', 'trace.sqlite'), join(tmp, 'gc-marks.sqlite')), (db) => {
      db.exec(`UPDATE NVTX_EVENTS SET eventType = 34, "end" = NULL WHERE textId IN (SELECT id FROM StringIds WHERE value = 'Python GC') OR text = 'Python GC'`);
    });
    withExport(file, (h) => {
      const loaded = new LoadedExport(h);
      expect(loaded.nvtx().invalidRows).toBe(0);
      expect(hasNvtxRangeWithText(loaded, 'Python GC')).toBe(false);
      expect(hasNvtxRangeWithText(new LoadedExport(h), 'Python GC')).toBe(false);
    });
  });
});
