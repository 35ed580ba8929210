/**
 * Reads on a second core (src/worker/readInBackground.ts): the NVTX GPU projection's launches folded
 * while the calling thread reads the NVTX columns, the API calls while it reads the GPU ops. What
 * crosses back must be what this thread reads itself, rows left out included, on every fixture
 * export; the analysis that takes it must be the same; a worker that cannot open the export leaves
 * the read to the calling thread.
 */
import { copyFileSync, mkdtempSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { builtEntry } from '../../src/builtEntry.js';
import { openExport, withExport, type ExportHandle } from '../../src/export/openExport.js';
import { excludedRowNotes } from '../../src/export/excludedRows.js';
import { ReadInBackground } from '../../src/worker/readInBackground.js';
import { LoadedExport } from '../../src/load/loadedExport.js';
import { queriedLaunchedCalls } from '../../src/load/projectionReads.js';
import { keepCallsWithGpuWork } from '../../src/load/launchedCalls.js';
import { loadApiCallColumns } from '../../src/load/apiCallColumns.js';
import { analyzeExport } from '../../src/pipeline/analyzeExport.js';
import type { NvtxReadMode } from '../../src/pipeline/request.js';
import { copyExport, editExport } from '../helpers/hostileExport.js';
import { fixture, FIXTURES, fixtureExports } from '../helpers/fixtures.js';

const ENTRY = builtEntry('iterscope-nvtx.mjs', 'src/worker/backgroundWorker.js');
const tmp = mkdtempSync(join(tmpdir(), 'iterscope-launchesbg-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/**
 * The calls folded in a worker and here, each with the export's excluded-row notes after it (two
 * handles: notes are per handle). The worker hands over the calls that launched GPU work only
 * (`keepCallsWithGpuWork`); `all` is the whole fold here.
 */
function bothWays(file: string) {
  const inWorker = withExport(file, (h) => ({ calls: ReadInBackground.start(h, ENTRY, 'launches')!.take(), notes: excludedRowNotes(h) }));
  const all = withExport(file, (h) => ({ calls: queriedLaunchedCalls(new LoadedExport(h)), notes: excludedRowNotes(h) }));
  return { inWorker, here: { calls: keepCallsWithGpuWork(all.calls), notes: all.notes }, all };
}

/** The projection (and which steps were timed) with `nvtxRead`. */
function projection(h: ExportHandle, nvtxRead: NvtxReadMode) {
  const a = analyzeExport(h, { parts: ['nvtxGpu'], nvtxRead });
  return { projection: a.projection, timings: Object.keys(a.timingsMs) };
}

describe.each(fixtureExports(FIXTURES).filter((f) => withExport(f, (h) => h.hasTable('CUPTI_ACTIVITY_KIND_RUNTIME'))).map((file) => ({ file, name: file.slice(FIXTURES.length + 1) })))(
  '$name',
  ({ file }) => {
    it('the calls folded in the worker are the ones folded here', () => {
      const { inWorker, here } = bothWays(file);
      expect(inWorker.calls).toBeDefined();
      expect(inWorker.calls).toEqual(here.calls);
      expect(inWorker.notes).toEqual(here.notes);
    });

    it('the API calls read in the worker are the ones read here', () => {
      const inWorker = withExport(file, (h) => ({ calls: ReadInBackground.start(h, ENTRY, 'apiCalls')!.take(), notes: excludedRowNotes(h) }));
      const here = withExport(file, (h) => ({ calls: loadApiCallColumns(h), notes: excludedRowNotes(h) }));
      expect(inWorker.calls).toBeDefined();
      expect(inWorker).toEqual(here);
    });
  },
);

describe('the API calls from the worker', () => {
  it("pytorch-dense gaps and iterations ('release': no NVTX worker): the API calls taken from the worker, the same analysis", () => {
    const file = fixture('pytorch-dense', 'trace.sqlite');
    const run = (nvtxRead: NvtxReadMode) =>
      withExport(file, (h) => {
        const a = analyzeExport(h, { parts: ['iterations', 'gaps'], nvtxRead });
        return { gaps: a.gaps, iterations: a.iterations, notes: excludedRowNotes(h) };
      });
    const released = run('release');
    expect(released.gaps!.gaps.length).toBeGreaterThan(50);
    expect(released).toEqual(run('inline'));
  });
});

describe('the projection with its launches from the worker', () => {
  it("pytorch-dense ('release': the large table's path): taken from the worker, the same projection as on this thread", () => {
    const file = fixture('pytorch-dense', 'trace.sqlite');
    const released = withExport(file, (h) => projection(h, 'release'));
    const inline = withExport(file, (h) => projection(h, 'inline'));
    expect(released.timings).toContain('launchesWorker');
    expect(inline.timings).not.toContain('launchesWorker');
    expect(released.projection!.rows.length).toBeGreaterThan(10);
    expect(released.projection!.coverage.gpuOps).toBeGreaterThan(10_000);
    expect(released.projection).toEqual(inline.projection);
  });

  it("pytorch-dense ('release'): the worker's launches are taken right after the NVTX read, before the NVTX parts run beside its fold", () => {
    const file = fixture('pytorch-dense', 'trace.sqlite');
    const run = (nvtxRead: NvtxReadMode) =>
      withExport(file, (h) => {
        const a = analyzeExport(h, { parts: ['nvtx', 'nvtxGpu'], nvtxRead });
        return { nvtx: a.nvtx, projection: a.projection, steps: Object.keys(a.timingsMs) };
      });
    const released = run('release');
    expect(released.steps.slice(0, 3)).toEqual(['nvtxColumns', 'launchesWorker', 'nvtx']);
    const inline = run('inline');
    expect(inline.steps).not.toContain('launchesWorker');
    expect({ nvtx: released.nvtx, projection: released.projection }).toEqual({ nvtx: inline.nvtx, projection: inline.projection });
  });

  it('runtime rows with unusable times: left out and noted alike, the key carried by two calls counted once', () => {
    const path = editExport(copyExport(fixture('pytorch-dense', 'trace.sqlite'), join(tmp, 'bad-runtime.sqlite')), (db) => {
      db.exec(`UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET "end" = start - 1 WHERE rowid IN (SELECT rowid FROM CUPTI_ACTIVITY_KIND_RUNTIME LIMIT 3)`);
      // A second call with the correlation id of a launch (its process's): both get that launch's ops.
      db.exec(`INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, "end", eventClass, globalTid, correlationId, nameId, returnValue, callchainId)
        SELECT start + 1, "end" - 1, eventClass, globalTid, correlationId, nameId, returnValue, callchainId FROM CUPTI_ACTIVITY_KIND_RUNTIME
        WHERE correlationId IN (SELECT correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY rowid LIMIT 1)`);
    });
    const { inWorker, here, all } = bothWays(path);
    expect(here.notes).toEqual([expect.stringContaining('3 CUPTI_ACTIVITY_KIND_RUNTIME rows excluded')]);
    expect(here.calls.duplicateCorrelationIds).toBe(1);
    // The two calls of the shared key both launched work: both kept, one key (the first's, renumbered).
    expect([...here.calls.sharedKey].filter((d) => d === 1)).toHaveLength(2);
    expect(new Set(here.calls.keyOf.values()).size).toBe(1);
    expect(here.calls.count).toBeLessThan(all.calls.count);
    expect(inWorker).toEqual(here);
    const released = withExport(path, (h) => projection(h, 'release'));
    expect(released.timings).toContain('launchesWorker');
    expect(released.projection!.coverage.duplicateCorrelationIds).toBe(1);
    expect(released.projection).toEqual(withExport(path, (h) => projection(h, 'inline')).projection);
  });

  it('a worker that cannot open the export leaves the fold to this thread, with the same projection', () => {
    // The file is removed once open here: this connection still reads it, the worker's cannot open it.
    const path = join(tmp, 'gone.sqlite');
    copyFileSync(fixture('pytorch-dense', 'trace.sqlite'), path);
    const h = openExport(path);
    let gone: ReturnType<typeof projection>;
    try {
      unlinkSync(path);
      gone = projection(h, 'release');
    } finally {
      h.close();
    }
    expect(gone.timings).toContain('launchesWorker');
    expect(gone.projection).toEqual(withExport(fixture('pytorch-dense', 'trace.sqlite'), (x) => projection(x, 'inline')).projection);
  });
});
