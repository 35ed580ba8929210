/**
 * The rows the gaps' host causes read, taken from the NVTX columns before a large export lets them
 * go (`HostNvtxRanges.causeRows`, `hostCauseRowsOf`): the gaps from them must be the gaps from the
 * whole columns and from the query over NVTX_EVENTS, on exports with GIL tracing (millions of
 * holds left out), unclosed and cross-thread ranges, and without NVTX.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { withExport } from '../../src/export/openExport.js';
import { analyzeGaps } from '../../src/gaps/analyzeGaps.js';
import { hostNvtxRanges } from '../../src/gaps/hostNvtxRanges.js';
import { LoadedExport } from '../../src/load/loadedExport.js';
import { fixture, FIXTURES } from '../helpers/fixtures.js';

/** Gaps by query (no NVTX columns), from the whole columns, and from the extract; with the extract's and the columns' row counts. */
function threeWays(file: string) {
  return withExport(file, (h) => {
    const bySql = analyzeGaps(new LoadedExport(h));
    const loaded = new LoadedExport(h);
    const columns = loaded.nvtx();
    const byColumns = analyzeGaps(loaded);
    const { causeRows } = hostNvtxRanges(loaded);
    const byRows = analyzeGaps(loaded, { causeRows });
    return { bySql, byColumns, byRows, rows: causeRows.count, columnRows: columns.count };
  });
}

describe('gaps from the host-cause rows', () => {
  it('pytorch-dense (GIL traced): the extract leaves out the GIL holds, and the gaps are the same three ways', () => {
    const r = threeWays(fixture('pytorch-dense', 'trace.sqlite'));
    expect(r.rows).toBeGreaterThan(0);
    expect(r.rows * 10).toBeLessThan(r.columnRows);
    expect(r.byRows.gaps.length).toBeGreaterThan(50);
    expect(r.byRows.idleByCauseNs.gil_wait).toBeGreaterThan(0);
    expect(r.byColumns).toEqual(r.bySql);
    expect(r.byRows).toEqual(r.byColumns);
  });

  it.each([
    ['vllm-dense', 'trace.sqlite'],
    ['sglang', 'trace.sqlite'],
    ['pytorch-gpu-metrics', 'trace.sqlite'],
    ['external', 'nsys2024.6_nvfuser_matmul.sqlite'],
  ])('%s/%s: the same gaps three ways', (...parts) => {
    const file = parts[0] === 'external' ? join(FIXTURES, ...parts) : fixture(...parts);
    const r = threeWays(file);
    expect(r.byColumns).toEqual(r.bySql);
    expect(r.byRows).toEqual(r.byColumns);
  });
});
