/**
 * The rows the gaps' host causes read (`hostCauseRows`), taken from the NVTX columns before a large
 * export lets them go (`hostCauseRowsOf`), or by the NVTX worker's query when the analysis loads no
 * NVTX columns (`hostCauseRowsByQuery`): the gaps from them must be the gaps from the whole columns
 * and from the gaps' own query over NVTX_EVENTS, on exports with GIL tracing (millions of holds
 * left out), unclosed and cross-thread ranges, and without NVTX.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { withExport } from '../../src/export/openExport.js';
import { analyzeGaps } from '../../src/gaps/analyzeGaps.js';
import { hostCauseRows } from '../../src/gaps/hostNvtxRanges.js';
import { LoadedExport } from '../../src/load/loadedExport.js';
import { nvtxRowId, type NvtxColumns } from '../../src/load/nvtxEventColumns.js';
import { copyExport, editExport } from '../helpers/hostileExport.js';
import { fixture, FIXTURES } from '../helpers/fixtures.js';

/**
 * Gaps by the gaps' query (no NVTX columns), from the whole columns, from the extract and from the
 * extract by query; with both extracts and the columns' row counts.
 */
function fourWays(file: string) {
  return withExport(file, (h) => {
    const bySql = analyzeGaps(new LoadedExport(h));
    const queried = hostCauseRows(new LoadedExport(h));
    const byQueriedRows = analyzeGaps(new LoadedExport(h), { causeRows: queried });
    const loaded = new LoadedExport(h);
    const columns = loaded.nvtx();
    const byColumns = analyzeGaps(loaded);
    const causeRows = hostCauseRows(loaded);
    const byRows = analyzeGaps(loaded, { causeRows });
    return { bySql, byColumns, byRows, byQueriedRows, rows: causeRows.rows.count, queriedRows: queried.rows.count, columnRows: columns.count };
  });
}

describe('gaps from the host-cause rows', () => {
  it('pytorch-dense (GIL traced): the extract leaves out the GIL holds, and the gaps are the same four ways', () => {
    const r = fourWays(fixture('pytorch-dense', 'trace.sqlite'));
    expect(r.rows).toBeGreaterThan(0);
    expect(r.rows * 10).toBeLessThan(r.columnRows);
    expect(r.queriedRows).toBe(r.rows);
    expect(r.byRows.gaps.length).toBeGreaterThan(50);
    expect(r.byRows.idleByCauseNs.gil_wait).toBeGreaterThan(0);
    expect(r.byColumns).toEqual(r.bySql);
    expect(r.byRows).toEqual(r.byColumns);
    expect(r.byQueriedRows).toEqual(r.byColumns);
  });

  it.each([
    ['vllm-dense', 'trace.sqlite'],
    ['sglang', 'trace.sqlite'],
    ['pytorch-gpu-metrics', 'trace.sqlite'],
    ['external', 'nsys2024.6_nvfuser_matmul.sqlite'],
  ])('%s/%s: the same gaps four ways', (...parts) => {
    const file = parts[0] === 'external' ? join(FIXTURES, ...parts) : fixture(...parts);
    const r = fourWays(file);
    expect(r.byColumns).toEqual(r.bySql);
    expect(r.byRows).toEqual(r.byColumns);
    expect(r.queriedRows).toBe(r.rows);
    expect(r.byQueriedRows).toEqual(r.byColumns);
  });
});

/** Each row of `c` with its text resolved (the texts' order is the reader's own). */
function rowsOf(c: NvtxColumns) {
  return Array.from({ length: c.count }, (_, i) => [nvtxRowId(c, i), c.start[i], c.end[i], c.eventType[i], c.pid[i], c.tid[i], c.domainId[i], c.text[i] >= 0 ? c.texts[c.text[i]] : null, c.endTid[i]]);
}

describe('host-cause rows by query', () => {
  it('pytorch-dense, GIL holds written every way nsys can (inline text, a text id with no StringIds row, both): the rows the whole columns give', () => {
    const dir = mkdtempSync(join(tmpdir(), 'iterscope-causerows-'));
    try {
      const file = copyExport(fixture('pytorch-dense', 'trace.sqlite'), join(dir, 'trace.sqlite'));
      editExport(file, (db) => {
        const hold = (db.prepare(`SELECT id FROM StringIds WHERE value = 'Holding GIL'`).get() as { id: number }).id;
        const wait = (db.prepare(`SELECT id FROM StringIds WHERE value = 'Waiting for GIL'`).get() as { id: number }).id;
        const holds = (db.prepare('SELECT rowid AS r FROM NVTX_EVENTS WHERE textId = ? AND domainId = 1 ORDER BY rowid LIMIT 400').all(hold) as { r: number }[]).map((x) => x.r);
        const set = (sql: string, rows: number[]) => rows.forEach((r) => db.prepare(`UPDATE NVTX_EVENTS SET ${sql} WHERE rowid = ?`).run(r));
        // An inline hold (left out by the query), a dangling id over an inline hold (coalesce: a
        // hold, which only the reader's rule sees), a dangling id alone (no text: kept), and a
        // wait's id over an inline hold (coalesce: a wait, kept).
        set(`textId = NULL, text = 'Holding GIL'`, holds.slice(0, 100));
        set(`textId = 99999999, text = 'Holding GIL'`, holds.slice(100, 200));
        set('textId = 99999999, text = NULL', holds.slice(200, 300));
        set(`textId = ${wait}, text = 'Holding GIL'`, holds.slice(300, 400));
      });
      withExport(file, (h) => {
        const loaded = new LoadedExport(h);
        loaded.nvtx();
        const whole = hostCauseRows(loaded);
        const queried = hostCauseRows(new LoadedExport(h));
        expect(queried.gilDomainKeys).toEqual(whole.gilDomainKeys);
        expect(whole.rows.count).toBeGreaterThan(200);
        expect(rowsOf(queried.rows)).toEqual(rowsOf(whole.rows));
        const texts = rowsOf(whole.rows).map((r) => r[7]);
        expect(texts.filter((t) => t === 'Holding GIL' || t === null).length).toBeGreaterThanOrEqual(100);
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
