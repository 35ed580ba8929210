/**
 * The NVTX GPU projection's launch side from the loaded columns (`foldColumnsIntoCalls`) is the
 * one its own queries give (`queriedLaunchedCalls`, through `foldOpsIntoCalls`): the same calls in
 * the same order, threads, times, folded ops, and keys carried by several calls. On every fixture
 * export the columns can serve, and on a copy of pytorch-dense whose runtime rows share
 * correlation ids or have none.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { withExport } from '../../src/export/openExport.js';
import type { ExportHandle } from '../../src/export/openExport.js';
import { foldColumnsIntoCalls, keepCallsWithGpuWork, type LaunchedCalls } from '../../src/load/launchedCalls.js';
import { LoadedExport } from '../../src/load/loadedExport.js';
import { queriedLaunchedCalls } from '../../src/load/projectionReads.js';
import { copyExport, editExport } from '../helpers/hostileExport.js';
import { fixture, fixtureExports } from '../helpers/fixtures.js';
import { plainLaunchedCalls } from '../helpers/launchedCalls.js';

const tmp = mkdtempSync(join(tmpdir(), 'iterscope-fold-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** CUPTI_ACTIVITY_KIND_GRAPH_TRACE as nsys 2025.5.2 writes it (external/nsys2025.5.2_cudagraph_flameox.sqlite). */
const GRAPH_TRACE_DDL = `CREATE TABLE CUPTI_ACTIVITY_KIND_GRAPH_TRACE (
    start                       INTEGER   NOT NULL,
    end                         INTEGER   NOT NULL,
    deviceId                    INTEGER   NOT NULL,
    contextId                   INTEGER   NOT NULL,
    greenContextId              INTEGER,
    streamId                    INTEGER   NOT NULL,
    correlationId               INTEGER,
    globalPid                   INTEGER,
    graphId                     INTEGER   NOT NULL,
    graphExecId                 INTEGER   NOT NULL
)`;

/** Both folds of one export, or null when the columns cannot serve it (their ids or rows differ from the queries'). */
function bothFolds(h: ExportHandle): { columns: LaunchedCalls; queried: LaunchedCalls } | null {
  if (!h.hasTable('NVTX_EVENTS') || !h.hasTable('CUPTI_ACTIVITY_KIND_RUNTIME') || !h.hasTable('CUPTI_ACTIVITY_KIND_KERNEL')) return null;
  const loaded = new LoadedExport(h, { launchIds: true });
  const ops = loaded.gpuOps();
  const calls = loaded.apiCalls();
  const upper = loaded.nvtx().upperBits;
  const regular = (ids: { irregular: boolean; upper: number | null } | undefined) => ids !== undefined && !ids.irregular && (ids.upper === null || ids.upper === upper);
  if (upper === null || calls.backtraceRows !== 0 || !regular(ops.launchIds) || !regular(calls.launchIds)) return null;
  return { columns: foldColumnsIntoCalls(ops, calls, loaded.apiCallIndex(), upper * 2 ** 24), queried: queriedLaunchedCalls(new LoadedExport(h)) };
}

/** The fold as plain values (typed arrays of any backing compared by value). */
const plain = plainLaunchedCalls;

describe('foldColumnsIntoCalls', () => {
  it('equals the queries\' fold on every fixture export the columns can serve', () => {
    let served = 0;
    for (const file of fixtureExports()) {
      withExport(file, (h) => {
        const folds = bothFolds(h);
        if (!folds) return;
        served++;
        expect(folds.columns.count, file).toBeGreaterThan(0);
        expect(plain(folds.columns), file).toEqual(plain(folds.queried));
      });
    }
    expect(served).toBeGreaterThanOrEqual(8);
  });

  it('runtime rows sharing a correlation id, rows with none, whole-graph rows: the same calls, keys and folds', () => {
    const file = editExport(copyExport(fixture('pytorch-dense', 'trace.sqlite'), join(tmp, 'shared-ids.sqlite')), (db) => {
      // Every 50th call takes the correlation id of the row before it (a key of two calls, the
      // second carrying the first's ops); every 70th call loses its id (not a call of the fold).
      db.exec(`UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET correlationId = (SELECT r2.correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r2 WHERE r2.rowid = CUPTI_ACTIVITY_KIND_RUNTIME.rowid - 1) WHERE rowid % 50 = 0`);
      db.exec(`UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET correlationId = NULL WHERE rowid % 70 = 0`);
      // Whole-graph rows (nsys 2025.5's DDL, from the flameox export) carrying kernels' launch
      // keys: nsys does not project them, so neither fold counts them.
      db.exec(GRAPH_TRACE_DDL);
      db.exec(`INSERT INTO CUPTI_ACTIVITY_KIND_GRAPH_TRACE SELECT start, "end", deviceId, contextId, NULL, streamId, correlationId, globalPid, 1, 2 FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid % 40 = 0`);
    });
    withExport(file, (h) => {
      const folds = bothFolds(h)!;
      expect(folds).not.toBeNull();
      const ops = new LoadedExport(h).gpuOps();
      expect(ops.kind.filter((k) => k === 3).length).toBeGreaterThan(0);
      expect(folds.columns.gpuOps).toBe(ops.kind.filter((k) => k !== 3).length);
      expect(folds.columns.duplicateCorrelationIds).toBeGreaterThan(0);
      const calls = new LoadedExport(h).apiCalls();
      expect(folds.columns.count).toBeLessThan(calls.count);
      expect(plain(folds.columns)).toEqual(plain(folds.queried));
    });
  });

  it('correlation ids past 2^32 (the key index and the columns widen to Float64): the same folds as with the ids nsys wrote', () => {
    const dense = fixture('pytorch-dense', 'trace.sqlite');
    const file = editExport(copyExport(dense, join(tmp, 'wide-ids.sqlite')), (db) => {
      // Every 30th call and the GPU ops it launched move past 32 bits together: the same keys.
      db.exec(`CREATE TEMP TABLE moved AS SELECT correlationId AS c FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE rowid % 30 = 0 AND correlationId IS NOT NULL`);
      for (const t of ['CUPTI_ACTIVITY_KIND_RUNTIME', 'CUPTI_ACTIVITY_KIND_KERNEL', 'CUPTI_ACTIVITY_KIND_MEMCPY', 'CUPTI_ACTIVITY_KIND_MEMSET']) {
        db.exec(`UPDATE ${t} SET correlationId = correlationId + 4294967296 WHERE correlationId IN (SELECT c FROM moved)`);
      }
    });
    const wide = withExport(file, (h) => {
      const loaded = new LoadedExport(h);
      expect(loaded.apiCalls().correlationId).toBeInstanceOf(Float64Array);
      expect(loaded.gpuOps().correlationId).toBeInstanceOf(Float64Array);
      return bothFolds(h)!;
    });
    const asWritten = withExport(dense, (h) => bothFolds(h)!);
    expect(wide.queried.gpuOpsWithoutApiCall).toBe(asWritten.queried.gpuOpsWithoutApiCall);
    expect([...wide.queried.opCount]).toEqual([...asWritten.queried.opCount]);
    expect(plain(wide.columns)).toEqual(plain(wide.queried));
    expect(plain(wide.queried)).toEqual(plain(asWritten.queried));
  });
});

describe('keepCallsWithGpuWork', () => {
  it('pytorch-dense: only the calls that launched GPU work are kept, as many as SQL finds, each as it was in the fold', () => {
    withExport(fixture('pytorch-dense', 'trace.sqlite'), (h) => {
      const all = queriedLaunchedCalls(new LoadedExport(h));
      const kept = keepCallsWithGpuWork(all);
      const launching = h.sqlite
        .prepare(
          `SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r WHERE r.correlationId IN (
             SELECT correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL UNION SELECT correlationId FROM CUPTI_ACTIVITY_KIND_MEMCPY
             UNION SELECT correlationId FROM CUPTI_ACTIVITY_KIND_MEMSET)`,
        )
        .pluck()
        .get() as number;
      expect(launching).toBeLessThan(all.count);
      expect(kept.count).toBe(launching);
      const from = [...all.opCount.keys()].filter((i) => all.opCount[i] > 0);
      expect(from).toHaveLength(kept.count);
      for (const field of ['thread', 'start', 'end', 'opStart', 'opEnd', 'opCount', 'sharedKey'] as const) {
        expect([...kept[field]], field).toEqual(from.map((i) => all[field][i]));
      }
      expect({ ...kept, thread: 0, start: 0, end: 0, opStart: 0, opEnd: 0, opCount: 0, sharedKey: 0, count: 0 }).toEqual({ ...all, thread: 0, start: 0, end: 0, opStart: 0, opEnd: 0, opCount: 0, sharedKey: 0, count: 0 });
    });
  });
});
