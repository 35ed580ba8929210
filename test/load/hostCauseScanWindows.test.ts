/**
 * The iteration ranges found among the host-cause query's rows (`hostCauseScanOf`): an analysis
 * that reads those rows first (the NVTX worker of `iterations`, `gaps` and `trace` reads them before
 * it seeks the windows) finds the ranges in them, with no scan of NVTX_EVENTS of their own. They
 * must equal the query's on every fixture export, and the query must still answer when the rows may
 * miss a range: one without a thread, one with unusable times, or a pattern that takes the GIL holds
 * the rows leave out.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { withExport } from '../../src/export/openExport.js';
import { hostCauseRows } from '../../src/gaps/hostNvtxRanges.js';
import { parseIterationRangeSpec, type IterationRangeSpec } from '../../src/iterations/rangeSpec.js';
import { DEFAULT_ITERATION_SOURCES, findIterationRangesData } from '../../src/iterations/sources/index.js';
import { hostCauseScanOf } from '../../src/load/hostRangeReads.js';
import { LoadedExport } from '../../src/load/loadedExport.js';
import { copyExport, editExport } from '../helpers/hostileExport.js';
import { fixture, fixtureExports } from '../helpers/fixtures.js';

const tmp = mkdtempSync(join(tmpdir(), 'iterscope-scan-windows-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** The ranges found by their own query, and after the host-cause rows were read (with whether those rows could answer). */
function rangesBothWays(file: string, spec?: IterationRangeSpec) {
  return withExport(file, (h) => {
    const byQuery = findIterationRangesData(new LoadedExport(h), spec);
    const loaded = new LoadedExport(h);
    hostCauseRows(loaded);
    const answered = DEFAULT_ITERATION_SOURCES.filter((s) => s.matchesText && hostCauseScanOf(loaded, s.matchesText)).map((s) => s.id);
    return { byQuery, fromScan: findIterationRangesData(loaded, spec), answered };
  });
}

/** An iteration range of pytorch-dense (its first `_forward_step` range), edited by `set`. */
function editFirstRange(name: string, set: string): string {
  return editExport(copyExport(fixture('pytorch-dense', 'trace.sqlite'), join(tmp, name)), (db) => {
    db.exec(`UPDATE NVTX_EVENTS SET ${set} WHERE rowid = (SELECT min(rowid) FROM NVTX_EVENTS WHERE eventType = 59 AND (instr(text, '_forward_step') > 0 OR textId IN (SELECT id FROM StringIds WHERE instr(value, '_forward_step') > 0)))`);
  });
}

describe('iteration ranges from the host-cause rows', () => {
  const exports = fixtureExports().filter((f) => withExport(f, (h) => h.hasTable('NVTX_EVENTS')));

  it.each(exports.map((f) => [f.replace(/^.*fixtures\//, ''), f]))('%s: the same ranges as their own query, by default and with --iteration-range', (_name, file) => {
    for (const spec of [undefined, parseIterationRangeSpec('/_forward_step/'), parseIterationRangeSpec('pytorch')]) {
      const { byQuery, fromScan } = rangesBothWays(file, spec);
      expect(fromScan, JSON.stringify(spec)).toEqual(byQuery);
    }
  });

  it('the rows answered on the GIL-traced exports (the holds left out, every range kept) and found ranges there', () => {
    const answeredWithRanges = exports.filter((f) => {
      const { answered, byQuery } = rangesBothWays(f);
      return answered.length > 0 && byQuery !== null;
    });
    expect(answeredWithRanges.map((f) => f.replace(/^.*fixtures\//, ''))).toEqual(expect.arrayContaining(['pytorch-dense/trace.sqlite', 'pytorch-moe-window/trace.sqlite']));
  });

  it('a range without a thread: the rows cannot say it is one, the query finds the same ranges', () => {
    const file = editFirstRange('threadless.sqlite', 'globalTid = NULL');
    const { byQuery, fromScan, answered } = rangesBothWays(file);
    expect(answered).toEqual([]);
    expect(fromScan).toEqual(byQuery);
  });

  it('a range with unusable times: left out of the rows, so the query answers (and counts it)', () => {
    const file = editFirstRange('bad-times.sqlite', '"end" = start - 1');
    const { byQuery, fromScan, answered } = rangesBothWays(file);
    expect(answered).toEqual([]);
    expect(fromScan).toEqual(byQuery);
  });

  it('a pattern that takes the GIL holds (left out of the rows): the query answers', () => {
    const spec = parseIterationRangeSpec('/Holding GIL/');
    withExport(fixture('pytorch-dense', 'trace.sqlite'), (h) => {
      const loaded = new LoadedExport(h);
      hostCauseRows(loaded);
      expect(hostCauseScanOf(loaded, (t) => /Holding GIL/.test(t))).toBeUndefined();
      expect(hostCauseScanOf(loaded, (t) => t.includes('_forward_step'))).toBeDefined();
    });
    const { byQuery, fromScan } = rangesBothWays(fixture('pytorch-dense', 'trace.sqlite'), spec);
    expect(fromScan).toEqual(byQuery);
  });
});
