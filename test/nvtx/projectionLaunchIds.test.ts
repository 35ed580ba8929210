/**
 * The NVTX GPU projection joins GPU ops to API calls, and calls to NVTX ranges, from the pipeline's
 * columns, which keep only the PID of each id: it may do so only when every id shares the NVTX
 * rows' bits above the PID. The API-call and GPU-op loaders check that in their own scan
 * (`launchIds`), and the row counts their scans made travel with the columns to the NVTX worker
 * (`adoptLaunches`): the projection then counts no table and scans none a second time. On
 * pytorch-dense and on a copy whose calls carry other upper bits (which the columns must not join).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { withExport } from '../../src/export/openExport.js';
import { analyzeExport } from '../../src/pipeline/analyzeExport.js';
import { projectNvtxOntoGpu, type NvtxGpuProjection } from '../../src/analysis/nvtxGpuProjection.js';
import { loadGpuOpColumns } from '../../src/load/gpuOpColumns.js';
import { loadApiCallColumns } from '../../src/load/apiCallColumns.js';
import { LoadedExport } from '../../src/load/loadedExport.js';
import type { ExportHandle } from '../../queries/handle.js';
import { copyExport, editExport } from '../helpers/hostileExport.js';
import { fixture } from '../helpers/fixtures.js';

const DENSE = fixture('pytorch-dense', 'trace.sqlite');
const R = 'CUPTI_ACTIVITY_KIND_RUNTIME';
/** 139 of pytorch-dense's 41,817 API calls. */
const CALL_ROWS = 'rowid % 300 = 0';

const tmp = mkdtempSync(join(tmpdir(), 'iterscope-launchids-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A copy of pytorch-dense whose CALL_ROWS calls have bit 49 set in their globalTid (upper bits 3, the NVTX rows' are 1). */
const otherUpperBits = editExport(copyExport(DENSE, join(tmp, 'upper.sqlite')), (db) => db.exec(`UPDATE ${R} SET globalTid = globalTid + 562949953421312 WHERE ${CALL_ROWS}`));

/** The SQL the projection's own checks would run: counts of the launch tables and the irregular-id scan. */
const CHECK_SQL = /count\(\*\).*"CUPTI_ACTIVITY_KIND_(RUNTIME|KERNEL|MEMCPY|MEMSET)"|globalTid >> 48\) !=|globalPid >> 48\) !=/;

/** The statements `handle` prepares while `fn` runs. */
function preparedDuring<T>(handle: ExportHandle, fn: () => T): { value: T; sql: string[] } {
  const sql: string[] = [];
  const prepare = handle.sqlite.prepare.bind(handle.sqlite);
  handle.sqlite.prepare = ((source: string) => (sql.push(source), prepare(source))) as typeof handle.sqlite.prepare;
  try {
    return { value: fn(), sql };
  } finally {
    handle.sqlite.prepare = prepare;
  }
}

/** The projection from columns read on one connection and adopted by a LoadedExport over another (as the NVTX worker does). */
function projectAdopted(path: string): { projection: NvtxGpuProjection; sql: string[] } {
  const launches = withExport(path, (h) => ({ gpuOps: loadGpuOpColumns(h, { launchIds: true }), apiCalls: loadApiCallColumns(h, { launchIds: true }) }));
  return withExport(path, (h) => {
    const { value, sql } = preparedDuring(h, () => {
      const loaded = new LoadedExport(h);
      loaded.adoptLaunches(launches);
      return projectNvtxOntoGpu(loaded);
    });
    return { projection: value, sql };
  });
}

const byQueries = (path: string) => withExport(path, (h) => projectNvtxOntoGpu(new LoadedExport(h)));

describe('the API calls checked as they are read (launchIds)', () => {
  it('pytorch-dense: every call shares upper bits 1 (as the SQL check finds)', () => {
    withExport(DENSE, (h) => {
      const calls = loadApiCallColumns(h, { launchIds: true });
      expect(calls.count).toBe(41817);
      expect(calls.launchIds).toEqual({ upper: 1, irregular: false });
      expect(h.sqlite.prepare(`SELECT count(*) AS n FROM ${R} WHERE globalTid IS NULL OR (globalTid >> 48) != 1`).get()).toEqual({ n: 0 });
      // Not asked: not read (the scan hands JS one column fewer).
      expect(loadApiCallColumns(h).launchIds).toBeUndefined();
    });
  });

  it('a copy with other upper bits on 139 calls: irregular, the first call read giving `upper`', () => {
    withExport(otherUpperBits, (h) => {
      expect(h.sqlite.prepare(`SELECT count(*) AS n FROM ${R} WHERE (globalTid >> 48) = 3`).get()).toEqual({ n: 139 });
      expect(loadApiCallColumns(h, { launchIds: true }).launchIds).toEqual({ upper: 1, irregular: true });
    });
  });
});

describe('the projection from adopted columns', () => {
  it('pytorch-dense: the same projection as its own queries, with no count or id scan of the launch tables', () => {
    const { projection, sql } = projectAdopted(DENSE);
    expect(projection).toEqual(byQueries(DENSE));
    expect(projection.rows.reduce((a, r) => a + r.totalGpuOps, 0)).toBeGreaterThan(1000);
    expect(sql.filter((s) => CHECK_SQL.test(s))).toEqual([]);
  });

  it('calls with other upper bits: not joined from the columns (the queries join by the whole id), on every path', () => {
    const expected = byQueries(otherUpperBits);
    // The edit matters: by the whole id, the 139 calls leave their threads' ranges.
    expect(expected).not.toEqual(byQueries(DENSE));
    expect(projectAdopted(otherUpperBits).projection).toEqual(expected);
    for (const nvtxRead of ['inline', 'background'] as const) {
      const a = withExport(otherUpperBits, (h) => analyzeExport(h, { parts: ['nvtxGpu', 'iterations'], nvtxRead }));
      expect(a.projection, nvtxRead).toEqual(expected);
    }
  });
});
