/**
 * The GPU ops' device and stream ids and the GPU ops' and API calls' correlation ids are held in
 * narrower typed arrays while every value fits (`NarrowingIntColumn`, `Uint32OrFloat64Column`):
 * 1 byte for a device id and an NVTX domain id, 2 for a stream id, 4 for a correlation id; 2 for the process and thread
 * ids of GPU ops, API calls and NVTX rows, API name ids and NVTX text indices; a column widens to the
 * narrowest width that holds the value that did not fit. The numbers read back
 * must be what the Int32 and Float64 columns held, on a real export and on copies edited past each width.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withExport } from '../../src/export/openExport.js';
import { loadGpuOpColumns } from '../../src/load/gpuOpColumns.js';
import { loadApiCallColumns } from '../../src/load/apiCallColumns.js';
import { loadNvtxColumns } from '../../src/load/nvtxEventColumns.js';
import { NarrowingIntColumn, Uint32OrFloat64Column } from '../../src/columns/typedColumn.js';
import { fixture } from '../helpers/fixtures.js';
import { copyExport, editExport } from '../helpers/hostileExport.js';

const dense = fixture('pytorch-dense', 'trace.sqlite');
const dir = mkdtempSync(join(tmpdir(), 'iterscope-narrow-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The kernels' ids as SQL gives them, in table order (the loader reads the kernels first, in that order). */
function kernelIds(file: string): { deviceId: number; streamId: number; correlationId: number | null }[] {
  return withExport(file, (h) => h.sqlite.prepare('SELECT deviceId, streamId, correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL').all() as never);
}

const plainTypes = (a: ArrayLike<number>) => Array.from(a);

describe('pytorch-dense: narrow id columns as nsys writes them', () => {
  it('the GPU ops hold device ids in bytes, stream ids in two, correlation ids in four, with the values SQL gives', () => {
    const ops = withExport(dense, (h) => loadGpuOpColumns(h));
    expect(ops.deviceId).toBeInstanceOf(Int8Array);
    expect(ops.streamId).toBeInstanceOf(Int16Array);
    expect(ops.correlationId).toBeInstanceOf(Uint32Array);
    const sql = kernelIds(dense);
    expect(sql.length).toBeGreaterThan(1000);
    const n = sql.length;
    expect(plainTypes(ops.deviceId.subarray(0, n))).toEqual(sql.map((r) => r.deviceId));
    expect(plainTypes(ops.streamId.subarray(0, n))).toEqual(sql.map((r) => r.streamId));
    expect(plainTypes(ops.correlationId.subarray(0, n))).toEqual(sql.map((r) => r.correlationId));
  });

  it('the API calls hold correlation ids in four bytes, with the values SQL gives', () => {
    const calls = withExport(dense, (h) => loadApiCallColumns(h));
    expect(calls.correlationId).toBeInstanceOf(Uint32Array);
    const sql = withExport(dense, (h) => h.sqlite.prepare('SELECT correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME').pluck().all() as number[]);
    expect(calls.count).toBe(sql.length);
    expect(plainTypes(calls.correlationId)).toEqual(sql);
  });
});

describe('pytorch-dense copies edited past each width: the columns widen, every value kept', () => {
  it('a device id of 300, a stream id of 70000 and a NULL correlation id widen the GPU-op columns (to two bytes and four)', () => {
    const before = withExport(dense, (h) => loadGpuOpColumns(h));
    const copy = editExport(copyExport(dense, join(dir, 'wide-ops.sqlite')), (db) => {
      const ids = db.prepare('SELECT rowid FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY rowid LIMIT 3 OFFSET 500').pluck().all() as number[];
      db.prepare('UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET deviceId = 300 WHERE rowid = ?').run(ids[0]);
      db.prepare('UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET streamId = 70000 WHERE rowid = ?').run(ids[1]);
      db.prepare('UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET correlationId = NULL WHERE rowid = ?').run(ids[2]);
    });
    const after = withExport(copy, (h) => loadGpuOpColumns(h));
    expect(after.deviceId).toBeInstanceOf(Int16Array);
    expect(after.streamId).toBeInstanceOf(Int32Array);
    expect(after.correlationId).toBeInstanceOf(Float64Array);
    expect(after.count).toBe(before.count);
    expect([after.deviceId[500], after.streamId[501], after.correlationId[502]]).toEqual([300, 70000, NaN]);
    const expectedDevices = plainTypes(before.deviceId);
    expectedDevices[500] = 300;
    const expectedStreams = plainTypes(before.streamId);
    expectedStreams[501] = 70000;
    const expectedCorrs = plainTypes(before.correlationId);
    expectedCorrs[502] = NaN;
    expect(plainTypes(after.deviceId)).toEqual(expectedDevices);
    expect(plainTypes(after.streamId)).toEqual(expectedStreams);
    expect(plainTypes(after.correlationId)).toEqual(expectedCorrs);
  });

  it('an API call with correlation id 2^32 widens the calls to Float64, the id kept', () => {
    const copy = editExport(copyExport(dense, join(dir, 'wide-calls.sqlite')), (db) => {
      db.prepare('UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET correlationId = ? WHERE rowid = (SELECT max(rowid) FROM CUPTI_ACTIVITY_KIND_RUNTIME)').run(2 ** 32);
    });
    const calls = withExport(copy, (h) => loadApiCallColumns(h));
    expect(calls.correlationId).toBeInstanceOf(Float64Array);
    expect(calls.correlationId[calls.count - 1]).toBe(2 ** 32);
    const plain = withExport(dense, (h) => loadApiCallColumns(h));
    expect(plainTypes(calls.correlationId.subarray(0, calls.count - 1))).toEqual(plainTypes(plain.correlationId.subarray(0, plain.count - 1)));
  });
});

describe('pytorch-dense: NVTX domain ids in one byte', () => {
  const domains = (file: string) =>
    withExport(file, (h) => h.sqlite.prepare('SELECT coalesce(domainId, 0) FROM NVTX_EVENTS WHERE eventType IS NOT NULL ORDER BY rowid').pluck().all() as number[]);

  it('as nsys writes them: Int8, the values SQL gives', () => {
    const c = withExport(dense, (h) => loadNvtxColumns(h));
    expect(c.domainId).toBeInstanceOf(Int8Array);
    const sql = domains(dense);
    expect(c.count).toBe(sql.length);
    expect(new Set(sql).size).toBeGreaterThan(1);
    expect(plainTypes(c.domainId)).toEqual(sql);
  });

  it('a copy with a domain id of 40000: Int32, every value kept', () => {
    const copy = editExport(copyExport(dense, join(dir, 'wide-domain.sqlite')), (db) => {
      db.prepare('UPDATE NVTX_EVENTS SET domainId = 40000 WHERE rowid = (SELECT max(rowid) FROM NVTX_EVENTS WHERE domainId IS NOT NULL)').run();
    });
    const c = withExport(copy, (h) => loadNvtxColumns(h));
    expect(c.domainId).toBeInstanceOf(Int32Array);
    const sql = domains(copy);
    expect(sql).toContain(40000);
    expect(plainTypes(c.domainId)).toEqual(sql);
  });
});

describe('process ids, thread ids, API names and NVTX texts in two bytes while they fit', () => {
  const callRows = (file: string) =>
    withExport(file, (h) => h.sqlite.prepare('SELECT (globalTid >> 24) & 16777215 AS pid, globalTid & 16777215 AS tid, nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME').all() as { pid: number; tid: number; nameId: number }[]);
  const nvtxRows = (file: string) =>
    withExport(file, (h) =>
      h.sqlite
        .prepare(
          `SELECT CASE WHEN globalTid IS NULL THEN 0 ELSE (globalTid >> 24) & 16777215 END AS pid, CASE WHEN globalTid IS NULL THEN -1 ELSE globalTid & 16777215 END AS tid,
             coalesce((SELECT value FROM StringIds WHERE id = textId), text) AS text FROM NVTX_EVENTS WHERE eventType IS NOT NULL ORDER BY rowid`,
        )
        .all() as { pid: number; tid: number; text: string | null }[],
    );

  it('pytorch-dense as nsys writes it: Int16 columns with the values SQL gives', () => {
    const ops = withExport(dense, (h) => loadGpuOpColumns(h));
    expect(ops.pid).toBeInstanceOf(Int16Array);
    const kernelPids = withExport(dense, (h) => h.sqlite.prepare('SELECT (globalPid >> 24) & 16777215 FROM CUPTI_ACTIVITY_KIND_KERNEL').pluck().all() as number[]);
    expect(plainTypes(ops.pid.subarray(0, kernelPids.length))).toEqual(kernelPids);
    const calls = withExport(dense, (h) => loadApiCallColumns(h));
    for (const col of [calls.pid, calls.tid, calls.nameId]) expect(col).toBeInstanceOf(Int16Array);
    const sql = callRows(dense);
    expect([plainTypes(calls.pid), plainTypes(calls.tid), plainTypes(calls.nameId)]).toEqual([sql.map((r) => r.pid), sql.map((r) => r.tid), sql.map((r) => r.nameId)]);
    const c = withExport(dense, (h) => loadNvtxColumns(h));
    for (const col of [c.pid, c.tid, c.text]) expect(col).toBeInstanceOf(Int16Array);
    const rows = nvtxRows(dense);
    expect(c.count).toBe(rows.length);
    expect([plainTypes(c.pid), plainTypes(c.tid)]).toEqual([rows.map((r) => r.pid), rows.map((r) => r.tid)]);
    expect(Array.from(c.text, (t) => (t < 0 ? null : c.texts[t]))).toEqual(rows.map((r) => r.text));
  });

  it('a copy with pids and tids past 2^15, an API name id of 40000 and 40,000 distinct NVTX texts: Int32, every value kept', () => {
    const copy = editExport(copyExport(dense, join(dir, 'wide-threads.sqlite')), (db) => {
      const big = 70000 * 2 ** 24 + 50000;
      db.prepare('UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET globalPid = ? WHERE rowid = (SELECT max(rowid) FROM CUPTI_ACTIVITY_KIND_KERNEL)').run(70000 * 2 ** 24);
      db.prepare('UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET globalTid = ?, nameId = 40000 WHERE rowid = (SELECT max(rowid) FROM CUPTI_ACTIVITY_KIND_RUNTIME)').run(big);
      db.prepare('UPDATE NVTX_EVENTS SET globalTid = ? WHERE rowid = (SELECT max(rowid) FROM NVTX_EVENTS WHERE globalTid IS NOT NULL)').run(big);
      // Inline texts, each its own: the texts' index passes 2^15.
      const insert = db.prepare('INSERT INTO NVTX_EVENTS (start, "end", eventType, text, globalTid) VALUES (?, ?, 59, ?, (SELECT globalTid FROM NVTX_EVENTS WHERE globalTid IS NOT NULL LIMIT 1))');
      db.transaction(() => {
        for (let i = 0; i < 40_000; i++) insert.run(1000 + i, 2000 + i, `range ${i}`);
      })();
    });
    const ops = withExport(copy, (h) => loadGpuOpColumns(h));
    expect(ops.pid).toBeInstanceOf(Int32Array);
    expect(ops.pid[withExport(copy, (h) => h.sqlite.prepare('SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL').pluck().get() as number) - 1]).toBe(70000);
    const calls = withExport(copy, (h) => loadApiCallColumns(h));
    for (const col of [calls.pid, calls.tid, calls.nameId]) expect(col).toBeInstanceOf(Int32Array);
    const sql = callRows(copy);
    expect(sql[sql.length - 1]).toEqual({ pid: 70000, tid: 50000, nameId: 40000 });
    expect([plainTypes(calls.pid), plainTypes(calls.tid), plainTypes(calls.nameId)]).toEqual([sql.map((r) => r.pid), sql.map((r) => r.tid), sql.map((r) => r.nameId)]);
    const c = withExport(copy, (h) => loadNvtxColumns(h));
    for (const col of [c.pid, c.tid, c.text]) expect(col).toBeInstanceOf(Int32Array);
    const rows = nvtxRows(copy);
    expect(c.count).toBe(rows.length);
    expect(c.texts.length).toBeGreaterThan(40_000);
    expect([plainTypes(c.pid), plainTypes(c.tid)]).toEqual([rows.map((r) => r.pid), rows.map((r) => r.tid)]);
    expect(Array.from(c.text, (t) => (t < 0 ? null : c.texts[t]))).toEqual(rows.map((r) => r.text));
  });
});

describe('the columns store what an Int32 or Float64 column stores', () => {
  const make = <T,>(Type: { new (n: number): T }, n: number): T => new Type(n);

  it('NarrowingIntColumn: values past the narrow type widen to Int32; NULL, fractions and texts convert as Int32Array converts them', () => {
    const col = new NarrowingIntColumn(make as never, Int8Array, 2);
    const values = [5, -1, null, 1.9, -128, 127, 128, 2 ** 31, -7.5] as (number | null)[];
    col.ensure(values.length);
    values.forEach((v, i) => col.put(i, v));
    expect(col.data).toBeInstanceOf(Int32Array);
    expect(plainTypes(col.trim(values.length))).toEqual(plainTypes(Int32Array.from(values, (v) => v as number)));
    // Step by step: a byte column meeting 300 goes to two bytes, and to four only past them.
    const stepwise = new NarrowingIntColumn(make as never, Int8Array, 4);
    [7, 300].forEach((v, i) => stepwise.put(i, v));
    expect(stepwise.data).toBeInstanceOf(Int16Array);
    [-32768, 70000].forEach((v, i) => stepwise.put(i + 2, v));
    expect(stepwise.data).toBeInstanceOf(Int32Array);
    expect(plainTypes(stepwise.trim(4))).toEqual([7, 300, -32768, 70000]);
    const small = new NarrowingIntColumn(make as never, Int16Array, 4);
    [3, -32768, 32767, null].forEach((v, i) => small.put(i, v));
    expect(small.data).toBeInstanceOf(Int16Array);
    expect(plainTypes(small.trim(4))).toEqual([3, -32768, 32767, 0]);
  });

  it('Uint32OrFloat64Column: whole ids below 2^32 stay Uint32; NULL, -0, fractions, texts and 2^32 widen to Float64 as a Float64 column holds them', () => {
    const narrow = new Uint32OrFloat64Column(make as never, 3);
    [0, 2 ** 32 - 1, 17].forEach((v, i) => narrow.put(i, v));
    expect(narrow.data).toBeInstanceOf(Uint32Array);
    expect(plainTypes(narrow.trim(3))).toEqual([0, 2 ** 32 - 1, 17]);
    for (const odd of [null, -0, 1.5, -1, 2 ** 32, '12' as unknown as number]) {
      const col = new Uint32OrFloat64Column(make as never, 1);
      col.ensure(3);
      col.put(0, 9);
      col.put(1, odd);
      col.put(2, 10);
      expect(col.data, String(odd)).toBeInstanceOf(Float64Array);
      const expected = new Float64Array(3);
      expected[0] = 9;
      expected[1] = (odd ?? NaN) as number;
      expected[2] = 10;
      expect(col.trim(3), String(odd)).toEqual(expected);
    }
  });
});
