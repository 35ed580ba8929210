/**
 * The NVTX side of the analysis in a worker thread (`nvtxRead`, src/worker/nvtxInBackground.ts):
 * the NVTX columns, the NVTX and kernel summaries and the NVTX GPU projection made there, over
 * shared memory, must give the same analysis as on the calling thread, on every fixture export;
 * and a worker that fails must leave the calling thread to do the work, with the same result.
 */
import { copyFileSync, mkdtempSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openExport, withExport } from '../../src/export/openExport.js';
import { excludedRowNotes } from '../../src/export/excludedRows.js';
import { analyzeExport } from '../../src/pipeline/analyzeExport.js';
import { BACKGROUND_NVTX_ROWS } from '../../src/worker/policy.js';
import { REPORT_PARTS, type AnalysisRequest, type NvtxReadMode } from '../../src/pipeline/request.js';
import type { ExportAnalysis } from '../../src/pipeline/exportAnalysis.js';
import { parseIterationLogFile } from '../../src/logs/parse.js';
import { summarizeRun, summaryRequest } from '../../src/summary/runSummary.js';
import { loadApiCallColumns } from '../../src/load/apiCallColumns.js';
import { loadGpuOpColumns } from '../../src/load/gpuOpColumns.js';
import { loadNvtxColumns } from '../../src/load/nvtxEventColumns.js';
import { copyExport, editExport } from '../helpers/hostileExport.js';
import { fixture, FIXTURES, fixtureExports } from '../helpers/fixtures.js';

/** The analysis without the times it took (they differ run to run). */
function withoutTimings(a: ExportAnalysis): ExportAnalysis {
  return { ...a, timingsMs: {}, metrics: a.metrics && { ...a.metrics, ms: 0 } };
}

/** The analysis (without timings), the export's excluded-row notes, and which steps were timed. */
function analyze(file: string, nvtxRead: NvtxReadMode, request: Omit<AnalysisRequest, 'parts'> = {}): { analysis: ExportAnalysis; notes: string[]; timings: string[] } {
  return withExport(file, (h) => {
    const a = analyzeExport(h, { ...request, parts: REPORT_PARTS, nvtxRead });
    return { analysis: withoutTimings(a), notes: excludedRowNotes(h), timings: Object.keys(a.timingsMs) };
  });
}

/** Only the worker path times `launchIndexes` (what the calling thread builds while it waits). */
const WORKER_STEP = 'launchIndexes';

const tmp = mkdtempSync(join(tmpdir(), 'iterscope-nvtxbg-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe.each(fixtureExports(FIXTURES).map((file) => ({ file, name: file.slice(FIXTURES.length + 1) })))('$name', ({ file }) => {
  it('the NVTX side in a worker thread gives the same analysis as on this thread', () => {
    const hasNvtx = withExport(file, (h) => h.hasTable('NVTX_EVENTS'));
    const inWorker = analyze(file, 'background');
    const here = analyze(file, 'inline');
    expect(inWorker.timings.includes(WORKER_STEP)).toBe(hasNvtx);
    expect(here.timings).not.toContain(WORKER_STEP);
    expect(inWorker.analysis).toEqual(here.analysis);
    expect(inWorker.notes).toEqual(here.notes);
  });
});

describe("the summary's request (kernels with whole-graph launches, iterations required)", () => {
  /** The summary built from the analysis, or the error the analysis stopped with. */
  const summarize = (file: string, nvtxRead: NvtxReadMode) =>
    withExport(file, (h) => {
      try {
        return { summary: summarizeRun(withoutTimings(analyzeExport(h, { ...summaryRequest(), nvtxRead }))) };
      } catch (err) {
        return { error: (err as Error).message };
      }
    });
  it.each(['pytorch-moe-perfect-router', 'pytorch-dense', 'pytorch-tp2', 'external'])('%s: the same summaries (or errors) with the worker', (dir) => {
    const files = fixtureExports(join(FIXTURES, dir));
    let summaries = 0;
    for (const file of files) {
      const inWorker = summarize(file, 'background');
      expect(inWorker).toEqual(summarize(file, 'inline'));
      if (inWorker.summary) summaries++;
    }
    if (dir !== 'external') expect(summaries).toBe(files.length);
  });
});

describe('nvtxRead', () => {
  it("'auto' takes the worker on pytorch-dense-long (850k NVTX rows) with its log, and the report's analysis is unchanged", () => {
    const file = fixture('pytorch-dense-long', 'trace.sqlite');
    const logs = [parseIterationLogFile(fixture('pytorch-dense-long', 'iteration_log.txt'))];
    const auto = analyze(file, 'auto', { logs });
    const here = analyze(file, 'inline', { logs });
    expect(auto.timings).toContain(WORKER_STEP);
    expect(auto.analysis.iterations?.iterations.length).toBeGreaterThan(100);
    expect(auto.analysis.projection?.rows.length).toBeGreaterThan(100);
    expect(auto.analysis).toEqual(here.analysis);
  });

  it(`'auto' stays on this thread below ${BACKGROUND_NVTX_ROWS} NVTX rows (pytorch-dense: 123k)`, () => {
    expect(analyze(fixture('pytorch-dense', 'trace.sqlite'), 'auto').timings).not.toContain(WORKER_STEP);
  });

  it('rows the worker leaves out for unusable times are noted for the export, as on this thread', () => {
    const path = editExport(copyExport(fixture('pytorch-dense', 'trace.sqlite'), join(tmp, 'bad-nvtx.sqlite')), (db) => {
      db.exec(`UPDATE NVTX_EVENTS SET "end" = start - 1 WHERE rowid IN (SELECT rowid FROM NVTX_EVENTS WHERE "end" IS NOT NULL LIMIT 3)`);
      db.exec(`UPDATE NVTX_EVENTS SET start = 'x' WHERE rowid IN (SELECT rowid FROM NVTX_EVENTS WHERE "end" IS NOT NULL ORDER BY rowid DESC LIMIT 2)`);
    });
    const inWorker = analyze(path, 'background');
    expect(inWorker.timings).toContain(WORKER_STEP);
    expect(inWorker.notes).toEqual([expect.stringContaining('5 NVTX_EVENTS rows excluded')]);
    expect(inWorker).toEqual({ ...analyze(path, 'inline'), timings: inWorker.timings });
  });

  it('a worker that cannot open the export leaves the work to this thread, with the same result', () => {
    // The file is removed once open here: this connection still reads it, the worker's cannot open it.
    const path = join(tmp, 'gone.sqlite');
    copyFileSync(fixture('pytorch-dense', 'trace.sqlite'), path);
    const h = openExport(path);
    let a: ExportAnalysis;
    try {
      unlinkSync(path);
      a = analyzeExport(h, { parts: REPORT_PARTS, nvtxRead: 'background' });
    } finally {
      h.close();
    }
    expect(a.timingsMs).toHaveProperty(WORKER_STEP);
    const here = analyze(fixture('pytorch-dense', 'trace.sqlite'), 'inline').analysis;
    // The same analysis but for the file it names.
    const named = (x: ExportAnalysis, file: string) =>
      JSON.stringify(withoutTimings(x), (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : typeof v === 'string' ? v.replaceAll(file, 'FILE') : v));
    expect(named(a, path)).toEqual(named(here, fixture('pytorch-dense', 'trace.sqlite')));
  });
});

describe('shared columns (what crosses to the worker without a copy)', () => {
  it('with `shared`, every typed column of the GPU ops, API calls and NVTX is over a SharedArrayBuffer and holds the same values', () => {
    withExport(fixture('pytorch-dense', 'trace.sqlite'), (h) => {
      const pairs = [
        [loadGpuOpColumns(h, { launchIds: true, shared: true }), loadGpuOpColumns(h, { launchIds: true })],
        [loadApiCallColumns(h, { shared: true }), loadApiCallColumns(h)],
        [loadNvtxColumns(h, { shared: true }), loadNvtxColumns(h)],
      ] as const;
      // A column's arrays, one level down too (the API calls' ends as durations); the NVTX rowids'
      // runs are a few numbers a run, copied to the worker, not a column (`NvtxRowIds`).
      const columnsOf = (cols: object) =>
        Object.entries(cols).flatMap(([k, v]) => (ArrayBuffer.isView(v) ? [v] : k !== 'rowIds' && v && typeof v === 'object' && !(v instanceof Map) ? Object.values(v).filter(ArrayBuffer.isView) : []));
      expect(columnsOf(pairs[1][0])).toContain(pairs[1][0].end.duration);
      for (const [shared, plain] of pairs) {
        const arrays = columnsOf(shared);
        expect(arrays.length).toBeGreaterThan(5);
        for (const a of arrays) expect(a.buffer).toBeInstanceOf(SharedArrayBuffer);
        expect(shared).toEqual(plain);
      }
    });
  });
});
