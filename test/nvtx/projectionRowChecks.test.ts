/**
 * Issue 29, item 1: the NVTX GPU projection sees the same validated GPU-op and API-call rows as
 * the kernels, iterations and gaps (rowChecks.ts), on every path it reads them by: its own
 * queries (`nvtx --gpu`), the pipeline's columns on this thread (`nvtxRead: 'inline'`), and the
 * same columns in the NVTX worker thread (`nvtxRead: 'background'`). Each case damages rows of a
 * copy of pytorch-dense the way the sqlite3 shell would; the projection must equal that of a copy
 * without those rows, and the export's notes must name the rows excluded, once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { withExport } from '../../src/export/openExport.js';
import { excludedRowNotes, UNUSABLE_TIMES } from '../../src/export/excludedRows.js';
import { analyzeExport } from '../../src/pipeline/analyzeExport.js';
import type { NvtxReadMode } from '../../src/pipeline/request.js';
import { projectNvtxOntoGpu, type NvtxGpuProjection } from '../../src/analysis/nvtxGpuProjection.js';
import { loadGpuOpColumns } from '../../src/load/gpuOpColumns.js';
import { loadApiCallColumns } from '../../src/load/apiCallColumns.js';
import { copyExport, editExport, retypeColumn } from '../helpers/hostileExport.js';
import { fixture } from '../helpers/fixtures.js';
import { runCli } from '../helpers/cli.js';
import { LoadedExport } from '../../src/load/loadedExport.js';

const DENSE = fixture('pytorch-dense', 'trace.sqlite');
const K = 'CUPTI_ACTIVITY_KIND_KERNEL';
const R = 'CUPTI_ACTIVITY_KIND_RUNTIME';
/** 113 kernels, 21 of them launched inside NVTX ranges (the others' GPU ops count as outside). */
const KERNEL_ROWS = 'rowid % 500 = 0';
/** 296 API calls, launches among them. */
const CALL_ROWS = 'rowid % 300 = 0';

const tmp = mkdtempSync(join(tmpdir(), 'iterscope-projchecks-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

type Db = Parameters<Parameters<typeof editExport>[1]>[0];
const count = (db: Db, table: string, where: string) => (db.prepare(`SELECT count(*) AS n FROM "${table}" WHERE ${where}`).get() as { n: number }).n;

/** A copy of pytorch-dense with `edit` applied; and the number of rows of `table` matching `where`. */
function damagedCopy(name: string, table: string, where: string, edit: (db: Db) => void): { path: string; rows: number } {
  let rows = 0;
  const path = editExport(copyExport(DENSE, join(tmp, `${name}.sqlite`)), (db) => {
    rows = count(db, table, where);
    edit(db);
  });
  return { path, rows };
}

/** The copy without the rows a case damages: what the valid rows give. */
const baselines = new Map<string, NvtxGpuProjection>();
function baseline(table: string, where: string): NvtxGpuProjection {
  const key = `${table} ${where}`;
  let p = baselines.get(key);
  if (!p) {
    const path = editExport(copyExport(DENSE, join(tmp, `without-${baselines.size}.sqlite`)), (db) => db.exec(`DELETE FROM "${table}" WHERE ${where}`));
    baselines.set(key, (p = withExport(path, (h) => projectNvtxOntoGpu(new LoadedExport(h)))));
  }
  return p;
}

/** The projection by one path, with the export's excluded-row notes. */
function projectBy(path: string, how: 'queries' | NvtxReadMode): { projection: NvtxGpuProjection; notes: string[] } {
  return withExport(path, (h) => {
    if (how === 'queries') return { projection: projectNvtxOntoGpu(new LoadedExport(h)), notes: excludedRowNotes(h) };
    const a = analyzeExport(h, { parts: ['nvtxGpu', 'iterations'], nvtxRead: how });
    // Only the worker path times what this thread builds while the worker projects.
    expect('launchIndexes' in a.timingsMs, how).toBe(how === 'background');
    return { projection: a.projection!, notes: excludedRowNotes(h) };
  });
}

const note = (path: string, n: number, table: string) => `${path}: ${n} ${table} rows excluded: ${UNUSABLE_TIMES} (a damaged or edited export; nsys writes none)`;

const CASES: { name: string; table: string; where: string; edit: (db: Db) => void }[] = [
  { name: 'kernel NULL start', table: K, where: KERNEL_ROWS, edit: (db) => (retypeColumn(db, K, 'start', 'INTEGER'), db.exec(`UPDATE ${K} SET start = NULL WHERE ${KERNEL_ROWS}`)) },
  { name: 'kernel end at 2^62', table: K, where: KERNEL_ROWS, edit: (db) => db.exec(`UPDATE ${K} SET "end" = 4611686018427387904 WHERE ${KERNEL_ROWS}`) },
  { name: 'kernel end before start', table: K, where: KERNEL_ROWS, edit: (db) => db.exec(`UPDATE ${K} SET "end" = start - 1000 WHERE ${KERNEL_ROWS}`) },
  { name: 'kernel NULL end', table: K, where: KERNEL_ROWS, edit: (db) => (retypeColumn(db, K, 'end', 'INTEGER'), db.exec(`UPDATE ${K} SET "end" = NULL WHERE ${KERNEL_ROWS}`)) },
  { name: 'kernel TEXT start', table: K, where: KERNEL_ROWS, edit: (db) => db.exec(`UPDATE ${K} SET start = 'abc' WHERE ${KERNEL_ROWS}`) },
  { name: 'kernel BLOB start', table: K, where: KERNEL_ROWS, edit: (db) => db.exec(`UPDATE ${K} SET start = X'00ff' WHERE ${KERNEL_ROWS}`) },
  { name: 'kernel REAL start (fractional ns)', table: K, where: KERNEL_ROWS, edit: (db) => db.exec(`UPDATE ${K} SET start = start + 0.75 WHERE ${KERNEL_ROWS}`) },
  { name: 'API call TEXT start', table: R, where: CALL_ROWS, edit: (db) => db.exec(`UPDATE ${R} SET start = 'x' WHERE ${CALL_ROWS}`) },
];

describe.each(CASES)('$name', ({ name, table, where, edit }) => {
  it('the projection equals that of the export without those rows, on every path, with one note naming them', () => {
    const { path, rows } = damagedCopy(name.replace(/\W+/g, '-'), table, where, edit);
    expect(rows).toBeGreaterThan(100);
    const valid = baseline(table, where);
    for (const how of ['queries', 'inline', 'background'] as const) {
      const got = projectBy(path, how);
      expect(got.projection, how).toEqual(valid);
      expect(got.notes, how).toEqual([note(path, rows, table)]);
    }
  });
});

describe('the rows the damaged ones are', () => {
  it('matter to the projection: without them it has fewer GPU ops and calls in ranges', () => {
    const whole = withExport(DENSE, (h) => projectNvtxOntoGpu(new LoadedExport(h)));
    for (const [table, where] of [
      [K, KERNEL_ROWS],
      [R, CALL_ROWS],
    ]) {
      const valid = baseline(table, where);
      const ops = (p: NvtxGpuProjection) => p.rows.reduce((a, r) => a + r.totalGpuOps, 0);
      expect(ops(valid), table).toBeLessThan(ops(whole));
    }
  });

  it('left out of the columns, the projection still reads the columns (a shifted copy of them shows)', () => {
    const { path } = damagedCopy('shift', K, KERNEL_ROWS, (db) => db.exec(`UPDATE ${K} SET "end" = start - 1 WHERE ${KERNEL_ROWS}`));
    withExport(path, (h) => {
      const gpuOps = loadGpuOpColumns(h, { launchIds: true });
      const apiCalls = loadApiCallColumns(h);
      const instances = (ops: typeof gpuOps) => {
        const loaded = new LoadedExport(h);
        loaded.adoptLaunches({ gpuOps: ops, apiCalls });
        return projectNvtxOntoGpu(loaded, { includeInstances: true }).instances!;
      };
      // Every op 1 ns later: every projected instance starts 1 ns later (read from the columns, not the tables).
      const shifted = { ...gpuOps, start: gpuOps.start.map((t) => t + 1), end: gpuOps.end.map((t) => t + 1) };
      const here = instances(gpuOps);
      expect(here.length).toBeGreaterThan(100);
      expect(instances(shifted).map((i) => i.projStart)).toEqual(here.map((i) => i.projStart + 1));
    });
  });
});

describe('the CLI', () => {
  it('nvtx --gpu and report say which kernel rows were excluded, once, and project the valid rows', () => {
    const { path, rows } = damagedCopy('cli-null-start', K, KERNEL_ROWS, (db) => (retypeColumn(db, K, 'start', 'INTEGER'), db.exec(`UPDATE ${K} SET start = NULL WHERE ${KERNEL_ROWS}`)));
    const nvtx = runCli(['nvtx', path, '--gpu', '--format', 'json']);
    expect(nvtx.status).toBe(0);
    const line = `iterscope: ${note(path, rows, K)}\n`;
    expect(nvtx.stderr.split(line).length).toBe(2);
    const total = (rs: { totalProjNs: number }[]) => rs.reduce((a, r) => a + r.totalProjNs, 0);
    expect(total((JSON.parse(nvtx.stdout) as { rows: { totalProjNs: number }[] }).rows)).toBe(total(baseline(K, KERNEL_ROWS).rows));
    const report = runCli(['report', path]);
    expect(report.status).toBe(0);
    expect(report.stderr.split(line).length).toBe(2);
  });
});
