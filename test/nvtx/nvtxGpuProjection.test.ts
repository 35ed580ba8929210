/**
 * `projectNvtxOntoGpu` against NVIDIA's own `nsys stats -r nvtx_gpu_proj_sum --format csv` output
 * (the `nsys-stats/` oracles beside each fixture), against a plain-SQL brute force of the same
 * rules on the real pytorch-dense export, and, for nesting (which the fixtures never exercise:
 * every oracle row has level 0 and no children), against the brute force on synthetic exports.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withExport } from '../../src/export/openExport.js';
import { projectNvtxOntoGpu, type NvtxGpuProjection, type NvtxGpuProjectionInstance } from '../../src/analysis/nvtxGpuProjection.js';
import { fixture } from '../helpers/fixtures.js';
import { parseCsvObjects } from '../helpers/csv.js';
import { DERIVED_TOLERANCE, exactInt } from '../helpers/nsysStats.js';
import { LoadedExport } from '../../src/load/loadedExport.js';

const HEADER = [
  'Range',
  'Style',
  'Total Proj Time (ns)',
  'Total Range Time (ns)',
  'Range Instances',
  'Proj Avg (ns)',
  'Proj Med (ns)',
  'Proj Min (ns)',
  'Proj Max (ns)',
  'Proj StdDev (ns)',
  'Total GPU Ops',
  'Avg GPU Ops',
  'Avg Range Lvl',
  'Avg Num Child',
];

const CASES = [
  { name: 'pytorch-dense', export: fixture('pytorch-dense', 'trace.sqlite'), oracle: fixture('pytorch-dense', 'nsys-stats', 'nvtx_gpu_proj_sum.csv') },
  { name: 'pytorch-moe-window', export: fixture('pytorch-moe-window', 'trace.sqlite'), oracle: fixture('pytorch-moe-window', 'nsys-stats', 'nvtx_gpu_proj_sum.csv') },
  { name: 'sglang', export: fixture('sglang', 'trace.sqlite'), oracle: fixture('sglang', 'nsys-stats', 'nvtx_gpu_proj_sum.csv') },
  ...[1, 2].map((i) => ({
    name: `cpp-legacy-windows trace.${i}`,
    export: fixture('cpp-legacy-windows', `trace.${i}.sqlite`),
    oracle: fixture('cpp-legacy-windows', 'nsys-stats', `${i}.nvtx_gpu_proj_sum.csv`),
  })),
];

function near(ours: number, cell: string, what: string): void {
  const o = Number(cell);
  expect(cell, `${what}: '${cell}' is a number`).toMatch(/^-?\d+(\.\d+)?$/);
  expect(Math.abs(ours - o), `${what}: ours ${ours} vs nsys ${cell}`).toBeLessThanOrEqual(DERIVED_TOLERANCE + 1e-9);
}

describe.each(CASES)('nvtx GPU projection agrees with nsys nvtx_gpu_proj_sum on $name', (c) => {
  let proj: NvtxGpuProjection;
  let oracle: Record<string, string>[];
  beforeAll(() => {
    proj = withExport(c.export, (h) => projectNvtxOntoGpu(new LoadedExport(h)));
    const parsed = parseCsvObjects(readFileSync(c.oracle, 'utf8'));
    expect(parsed.header).toEqual(HEADER);
    oracle = parsed.rows;
  });

  it('has the same (Range, Style) rows, in the same order', () => {
    expect(oracle.length).toBeGreaterThan(0);
    expect(proj.missingTables).toEqual([]);
    const key = (range: string, style: string) => `${style} ${range}`;
    expect(new Set(proj.rows.map((r) => key(r.range, r.style)))).toEqual(new Set(oracle.map((o) => key(o['Range'], o['Style']))));
    expect(proj.rows.map((r) => key(r.range, r.style))).toEqual(oracle.map((o) => key(o['Range'], o['Style'])));
  });

  it('counts and ns columns exactly, derived columns within nsys rounding', () => {
    const byKey = new Map(proj.rows.map((r) => [`${r.style} ${r.range}`, r]));
    for (const o of oracle) {
      const label = `${o['Style']} ${o['Range'].slice(0, 70)}`;
      const r = byKey.get(`${o['Style']} ${o['Range']}`);
      expect(r, label).toBeDefined();
      if (!r) continue;
      expect(r.instances, `${label}: Range Instances`).toBe(exactInt(o['Range Instances']));
      expect(r.totalProjNs, `${label}: Total Proj Time`).toBe(exactInt(o['Total Proj Time (ns)']));
      expect(r.totalRangeNs, `${label}: Total Range Time`).toBe(exactInt(o['Total Range Time (ns)']));
      expect(r.projMin, `${label}: Proj Min`).toBe(exactInt(o['Proj Min (ns)']));
      expect(r.projMax, `${label}: Proj Max`).toBe(exactInt(o['Proj Max (ns)']));
      expect(r.totalGpuOps, `${label}: Total GPU Ops`).toBe(exactInt(o['Total GPU Ops']));
      near(r.projAvg, o['Proj Avg (ns)'], `${label}: Proj Avg`);
      near(r.projMed, o['Proj Med (ns)'], `${label}: Proj Med`);
      near(r.projStdDev, o['Proj StdDev (ns)'], `${label}: Proj StdDev`);
      near(r.avgGpuOps, o['Avg GPU Ops'], `${label}: Avg GPU Ops`);
      near(r.avgRangeLvl, o['Avg Range Lvl'], `${label}: Avg Range Lvl`);
      near(r.avgNumChild, o['Avg Num Child'], `${label}: Avg Num Child`);
    }
  });

  it('accounts for every GPU op and graph-trace row of the export', () => {
    const db = new BetterSqlite3(c.export, { readonly: true, fileMustExist: true });
    try {
      const count = (t: string) => (db.prepare(`SELECT count(*) FROM sqlite_master WHERE name = ?`).pluck().get(t) ? (db.prepare(`SELECT count(*) FROM ${t}`).pluck().get() as number) : 0);
      const ops = count('CUPTI_ACTIVITY_KIND_KERNEL') + count('CUPTI_ACTIVITY_KIND_MEMCPY') + count('CUPTI_ACTIVITY_KIND_MEMSET');
      expect(proj.coverage.gpuOps).toBe(ops);
      expect(proj.coverage.graphTraceRowsIgnored).toBe(count('CUPTI_ACTIVITY_KIND_GRAPH_TRACE'));
      expect(proj.coverage.projectedRanges).toBe(oracle.reduce((a, o) => a + exactInt(o['Range Instances']), 0));
      expect(proj.coverage.gpuOpsWithoutApiCall).toBeLessThanOrEqual(ops);
    } finally {
      db.close();
    }
  });
});

describe('projected instances on pytorch-dense, recomputed by plain SQL', () => {
  const path = fixture('pytorch-dense', 'trace.sqlite');
  // The rules written out as one brute-force query, for the executor's own ranges only (a
  // ranges x calls join over all 123k ranges would take minutes).
  const BRUTE = `
    WITH
      rng AS (
        SELECT n.rowid AS id, n.start AS s, n."end" AS e, n.globalTid AS tid, coalesce(sid.value, n.text) AS text
        FROM NVTX_EVENTS n LEFT JOIN StringIds sid ON sid.id = n.textId
        WHERE n.eventType = 59 AND n.endGlobalTid IS NULL
          AND (coalesce(sid.value, n.text) LIKE '[Executor] _forward_step %' OR coalesce(sid.value, n.text) = '_prepare_inputs')
      ),
      ops AS (
        SELECT start, "end", correlationId, globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL
        UNION ALL SELECT start, "end", correlationId, globalPid FROM CUPTI_ACTIVITY_KIND_MEMCPY
        UNION ALL SELECT start, "end", correlationId, globalPid FROM CUPTI_ACTIVITY_KIND_MEMSET
      ),
      calls AS (
        SELECT g.id AS id, r.correlationId AS corr, r.globalTid AS gtid
        FROM rng g JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.globalTid = g.tid AND r.start >= g.s AND r."end" <= g.e
      )
    SELECT c.id AS rangeId, min(o.start) AS projStart, max(o."end") AS projEnd, count(DISTINCT c.corr) AS numGpuOps
    FROM calls c JOIN ops o ON o.correlationId = c.corr AND o.globalPid = (c.gtid & -16777216)
    GROUP BY c.id ORDER BY c.id`;
  let instances: NvtxGpuProjectionInstance[];
  let brute: { rangeId: number; projStart: number; projEnd: number; numGpuOps: number }[];
  beforeAll(() => {
    instances = withExport(path, (h) => projectNvtxOntoGpu(new LoadedExport(h), { includeInstances: true })).instances!;
    const db = new BetterSqlite3(path, { readonly: true, fileMustExist: true });
    try {
      brute = db.prepare(BRUTE).all() as typeof brute;
    } finally {
      db.close();
    }
  });

  it('every _forward_step and _prepare_inputs instance has the brute-force projection', () => {
    const mine = instances.filter((i) => i.range.startsWith('TensorRT-LLM:[Executor] _forward_step ') || i.range === 'TensorRT-LLM:_prepare_inputs');
    expect(brute.length).toBeGreaterThan(200);
    expect(mine.map((i) => ({ rangeId: i.rangeId, projStart: i.projStart, projEnd: i.projEnd, numGpuOps: i.numGpuOps })).sort((a, b) => a.rangeId - b.rangeId)).toEqual(brute);
  });

  it('one _forward_step instance, end to end', () => {
    const b = brute.find((x) => instances.find((i) => i.rangeId === x.rangeId)?.range.includes('_forward_step 1:'));
    expect(b).toBeDefined();
    const i = instances.find((x) => x.rangeId === b!.rangeId)!;
    expect(i.style).toBe('PushPop');
    expect(i.projDuration).toBe(b!.projEnd - b!.projStart);
    // The oracle's only `_forward_step 1:` row: a single instance, so its totals are this instance.
    const oracle = parseCsvObjects(readFileSync(fixture('pytorch-dense', 'nsys-stats', 'nvtx_gpu_proj_sum.csv'), 'utf8')).rows.find((o) => o['Range'] === i.range)!;
    expect(oracle).toBeDefined();
    expect(i.projDuration).toBe(exactInt(oracle['Total Proj Time (ns)']));
    expect(i.end - i.start).toBe(exactInt(oracle['Total Range Time (ns)']));
    expect(i.numGpuOps).toBe(exactInt(oracle['Total GPU Ops']));
    expect(i.level).toBe(0);
    expect(i.parentId).toBeNull();
  });

  it('lists instances as nsys nvtx_gpu_proj_trace does: projected start asc, duration desc', () => {
    for (let k = 1; k < instances.length; k++) {
      const a = instances[k - 1];
      const b = instances[k];
      expect(a.projStart < b.projStart || (a.projStart === b.projStart && a.projDuration >= b.projDuration)).toBe(true);
    }
  });
});

// ---- Synthetic exports: nesting, unclosed and cross-thread ranges, trimmed and duplicated ids ----

const VM = 2 ** 48; // a VM id bit, as in the fixtures' globalTids
const PID = 111;
const pidPart = (pid: number) => VM + pid * 2 ** 24;
const gtid = (pid: number, tid: number) => pidPart(pid) + tid;

interface SynRange {
  start: number;
  end: number | null;
  type?: number; // 59 default
  tid?: number; // thread in process PID; default 1
  pid?: number;
  endTid?: number | null; // endGlobalTid thread (same process)
  text?: string;
  domainId?: number;
}
interface SynCall {
  start: number;
  end: number;
  corr: number;
  tid?: number;
  pid?: number;
}
interface SynOp {
  start: number;
  end: number;
  corr: number;
  pid?: number;
  table?: 'KERNEL' | 'MEMCPY' | 'MEMSET';
}
interface Synthetic {
  ranges: SynRange[];
  calls: SynCall[];
  ops: SynOp[];
  graphs?: SynOp[];
  domains?: { id: number; name: string; pid?: number }[];
}

let tmp: string;
let seq = 0;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'iterscope-nvtxproj-'));
});
afterAll(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

function writeExport(s: Synthetic): string {
  const path = join(tmp, `syn${seq++}.sqlite`);
  const db = new BetterSqlite3(path);
  try {
    // One transaction: the same tables and rows, without a journal sync per statement (the property test writes 100 exports).
    db.transaction(() => {
      db.exec(`
        CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, "end" INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER, category INTEGER, color INTEGER,
          text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER, domainId INTEGER);
        CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, "end" INTEGER NOT NULL, eventClass INTEGER NOT NULL, globalTid INTEGER,
          correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL);
      `);
      for (const t of ['KERNEL', 'MEMCPY', 'MEMSET', 'GRAPH_TRACE']) {
        db.exec(`CREATE TABLE CUPTI_ACTIVITY_KIND_${t} (start INTEGER NOT NULL, "end" INTEGER NOT NULL, deviceId INTEGER NOT NULL, streamId INTEGER NOT NULL,
          correlationId INTEGER, globalPid INTEGER)`);
      }
      const nv = db.prepare(`INSERT INTO NVTX_EVENTS (start, "end", eventType, text, globalTid, endGlobalTid, domainId) VALUES (?, ?, ?, ?, ?, ?, ?)`);
      for (const d of s.domains ?? []) nv.run(0, null, 75, d.name, gtid(d.pid ?? PID, 1), null, d.id);
      for (const r of s.ranges) {
        const pid = r.pid ?? PID;
        nv.run(r.start, r.end, r.type ?? 59, r.text ?? 'r', gtid(pid, r.tid ?? 1), r.endTid == null ? null : gtid(pid, r.endTid), r.domainId ?? 0);
      }
      const rt = db.prepare(`INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 0, ?, ?, 0, 0)`);
      for (const c of s.calls) rt.run(c.start, c.end, gtid(c.pid ?? PID, c.tid ?? 1), c.corr);
      for (const o of s.ops) {
        db.prepare(`INSERT INTO CUPTI_ACTIVITY_KIND_${o.table ?? 'KERNEL'} VALUES (?, ?, 0, 7, ?, ?)`).run(o.start, o.end, o.corr, pidPart(o.pid ?? PID));
      }
      for (const g of s.graphs ?? []) db.prepare(`INSERT INTO CUPTI_ACTIVITY_KIND_GRAPH_TRACE VALUES (?, ?, 0, 7, ?, ?)`).run(g.start, g.end, g.corr, pidPart(g.pid ?? PID));
    })();
  } finally {
    db.close();
  }
  return path;
}

interface RefInstance {
  rangeId: number;
  projStart: number;
  projEnd: number;
  numGpuOps: number;
  parentId: number | null;
  level: number | null;
  numChild: number;
}

/**
 * The projection rules as one brute-force SQL query (quadratic; tiny inputs only). Parents are
 * searched among ALL candidate ranges, as nsys does (the implementation searches projected ones):
 * tightest = least (c.start - p.start) + (p.end - c.end), lowest rowid on a tie.
 */
function bruteForce(path: string): RefInstance[] {
  const db = new BetterSqlite3(path, { readonly: true });
  try {
    return db
      .prepare(
        `WITH RECURSIVE
          mx AS (SELECT max(max(start), max("end")) AS m FROM NVTX_EVENTS WHERE eventType IN (59, 60, 70, 71)),
          rng AS (SELECT rowid AS id, start AS s, coalesce("end", (SELECT m FROM mx)) AS e, globalTid AS tid
                  FROM NVTX_EVENTS WHERE eventType IN (59, 60, 70, 71) AND endGlobalTid IS NULL),
          ops AS (SELECT start, "end", correlationId, globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL
                  UNION ALL SELECT start, "end", correlationId, globalPid FROM CUPTI_ACTIVITY_KIND_MEMCPY
                  UNION ALL SELECT start, "end", correlationId, globalPid FROM CUPTI_ACTIVITY_KIND_MEMSET),
          proj AS (SELECT g.id AS id, min(o.start) AS ps, max(o."end") AS pe, count(DISTINCT r.correlationId) AS n
                   FROM ops o
                   JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = o.correlationId AND o.globalPid = (r.globalTid & -16777216)
                   JOIN rng g ON g.tid = r.globalTid AND g.s <= r.start AND g.e >= r."end"
                   GROUP BY g.id),
          par AS (SELECT c.id AS cid,
                    (SELECT p.id FROM rng p WHERE p.id != c.id AND p.tid = c.tid AND p.s <= c.s AND p.e >= c.e
                     ORDER BY (c.s - p.s) + (p.e - c.e), p.id LIMIT 1) AS pid
                  FROM rng c),
          tree(id, lvl) AS (SELECT cid, 0 FROM par WHERE pid IS NULL
                            UNION ALL SELECT par.cid, tree.lvl + 1 FROM par JOIN tree ON par.pid = tree.id)
        SELECT proj.id AS rangeId, proj.ps AS projStart, proj.pe AS projEnd, proj.n AS numGpuOps, par.pid AS parentId, tree.lvl AS level,
               (SELECT count(*) FROM par c2 JOIN proj p2 ON p2.id = c2.cid WHERE c2.pid = proj.id) AS numChild
        FROM proj JOIN par ON par.cid = proj.id LEFT JOIN tree ON tree.id = proj.id
        ORDER BY proj.id`,
      )
      .all() as RefInstance[];
  } finally {
    db.close();
  }
}

function project(path: string, pid?: number): NvtxGpuProjection {
  return withExport(path, (h) => projectNvtxOntoGpu(new LoadedExport(h), { includeInstances: true, pid }));
}

function asRef(p: NvtxGpuProjection): RefInstance[] {
  return p
    .instances!.map((i) => ({ rangeId: i.rangeId, projStart: i.projStart, projEnd: i.projEnd, numGpuOps: i.numGpuOps, parentId: i.parentId, level: i.level, numChild: i.numChild }))
    .sort((a, b) => a.rangeId - b.rangeId);
}

describe('nvtx GPU projection on synthetic exports', () => {
  it('nests push/pop ranges: every enclosing range gets the op; level and projected children', () => {
    // rowids follow insertion: 1 domain row, then ranges 2.. in order.
    const path = writeExport({
      domains: [{ id: 1, name: 'D' }],
      ranges: [
        { start: 0, end: 100, text: 'outer', domainId: 1 }, // 2
        { start: 10, end: 50, text: 'mid' }, // 3
        { start: 20, end: 30, text: 'inner' }, // 4
        { start: 60, end: 90, text: 'mid' }, // 5: no op inside -> no instance, no child
        { start: 5, end: 8, type: 60, text: 'se' }, // 6: start/end, encloses call 4
        { start: 40, end: 45, type: 60, text: 'cross', endTid: 2 }, // 7: ended on another thread: ignored
      ],
      calls: [
        { start: 21, end: 22, corr: 1 },
        { start: 41, end: 42, corr: 2 },
        { start: 95, end: 96, corr: 3 },
        { start: 6, end: 7, corr: 4 },
        { start: 61, end: 62, corr: 5 }, // no GPU op
      ],
      ops: [
        { start: 200, end: 210, corr: 1 },
        { start: 205, end: 260, corr: 1, table: 'MEMCPY' },
        { start: 300, end: 310, corr: 2, table: 'MEMSET' },
        { start: 150, end: 151, corr: 3 },
        { start: 120, end: 121, corr: 4 },
        { start: 500, end: 501, corr: 99 }, // no API row
      ],
      graphs: [{ start: 400, end: 450, corr: 5 }], // graph-level rows are not projected
    });
    const p = project(path);
    expect(asRef(p)).toEqual(bruteForce(path));
    const byId = new Map(p.instances!.map((i) => [i.rangeId, i]));
    expect(byId.get(2)).toMatchObject({ range: 'D:outer', projStart: 120, projEnd: 310, numGpuOps: 4, level: 0, parentId: null, numChild: 2 });
    expect(byId.get(3)).toMatchObject({ range: ':mid', projStart: 200, projEnd: 310, numGpuOps: 2, level: 1, parentId: 2, numChild: 1 });
    expect(byId.get(4)).toMatchObject({ range: ':inner', projStart: 200, projEnd: 260, numGpuOps: 1, level: 2, parentId: 3, numChild: 0 });
    expect(byId.get(6)).toMatchObject({ range: ':se', style: 'StartEnd', level: 1, parentId: 2 });
    expect(byId.has(5)).toBe(false);
    expect(byId.has(7)).toBe(false);
    expect(p.coverage).toMatchObject({
      candidateRanges: 5,
      crossThreadRanges: 1,
      projectedRanges: 4,
      gpuOps: 6,
      gpuOpsWithoutApiCall: 1,
      apiCallsWithGpuOps: 4,
      apiCallsOutsideRanges: 0,
      graphTraceRowsIgnored: 1,
    });
    const mid = p.rows.find((r) => r.range === ':mid')!;
    expect(mid).toMatchObject({ instances: 1, totalProjNs: 110, totalRangeNs: 40, totalGpuOps: 2, avgRangeLvl: 1, avgNumChild: 1 });
    expect(p.rows.map((r) => r.range)).toEqual(['D:outer', ':mid', ':inner', ':se']);
  });

  it('closes unclosed ranges at the latest NVTX range timestamp, and keeps threads and processes apart', () => {
    const path = writeExport({
      ranges: [
        { start: 0, end: null, text: 'open' }, // ends at 70 (max over range events, incl. the cross-thread one)
        { start: 10, end: 20, tid: 2, text: 'other thread' },
        { start: 0, end: 70, type: 60, endTid: 3, text: 'x' },
        { start: 0, end: 50, pid: 222, text: 'other process' },
      ],
      calls: [
        { start: 65, end: 69, corr: 1 },
        { start: 12, end: 13, corr: 1, pid: 222 }, // same correlation id, other process
        { start: 11, end: 12, corr: 2, tid: 2 },
      ],
      ops: [
        { start: 100, end: 110, corr: 1 },
        { start: 300, end: 330, corr: 1, pid: 222 },
        { start: 200, end: 201, corr: 2 },
      ],
    });
    const p = project(path);
    expect(asRef(p)).toEqual(bruteForce(path));
    expect(p.maxTimestampNs).toBe(70);
    expect(p.coverage.unclosedRanges).toBe(1);
    const byRange = new Map(p.instances!.map((i) => [i.range, i]));
    expect(byRange.get(':open')).toMatchObject({ end: 70, projStart: 100, projEnd: 110, numGpuOps: 1 });
    expect(byRange.get(':other process')).toMatchObject({ pid: 222, projStart: 300, projEnd: 330 });
    expect(byRange.get(':other thread')).toMatchObject({ tid: 2, projStart: 200, projEnd: 201 });
    const only222 = project(path, 222);
    expect(only222.instances!.map((i) => i.range)).toEqual([':other process']);
    expect(only222.coverage.gpuOps).toBe(1);
  });

  it('identical ranges are each other\u2019s tightest parent: no level, as in nsys', () => {
    const path = writeExport({
      ranges: [
        { start: 0, end: 10, text: 'twin' },
        { start: 0, end: 10, text: 'twin' },
        { start: 2, end: 8, text: 'child' },
      ],
      calls: [{ start: 3, end: 4, corr: 1 }],
      ops: [{ start: 50, end: 60, corr: 1 }],
    });
    const p = project(path);
    expect(asRef(p)).toEqual(bruteForce(path));
    expect(p.instances!.every((i) => i.level === null)).toBe(true);
    expect(Number.isNaN(p.rows.find((r) => r.range === ':twin')!.avgRangeLvl)).toBe(true);
  });

  it('containment is inclusive: a zero-length range and call at the end of the enclosing range nest', () => {
    const path = writeExport({
      ranges: [
        { start: 0, end: 10, text: 'p' },
        { start: 10, end: 10, text: 'c' },
      ],
      calls: [{ start: 10, end: 10, corr: 1 }],
      ops: [{ start: 30, end: 40, corr: 1 }],
    });
    const p = project(path);
    expect(asRef(p)).toEqual(bruteForce(path));
    const byRange = new Map(p.instances!.map((i) => [i.range, i]));
    expect(byRange.get(':c')).toMatchObject({ level: 1, parentId: 1, projStart: 30, projEnd: 40 });
    expect(byRange.get(':p')).toMatchObject({ level: 0, numChild: 1 });
  });

  it('counts an API call once per range when two API rows share its correlation id', () => {
    const path = writeExport({
      ranges: [{ start: 0, end: 100 }],
      calls: [
        { start: 10, end: 11, corr: 5 },
        { start: 20, end: 21, corr: 5 },
      ],
      ops: [{ start: 200, end: 210, corr: 5 }],
    });
    const p = project(path);
    expect(asRef(p)).toEqual(bruteForce(path));
    expect(p.instances![0].numGpuOps).toBe(1);
    expect(p.coverage.duplicateCorrelationIds).toBe(1);
  });

  it('matches the brute force on random ranges, calls and ops (overlapping, nested, equal, open)', () => {
    const interval = fc.tuple(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 12 }));
    const arb = fc.record({
      ranges: fc.array(
        fc.record({
          iv: interval,
          open: fc.integer({ min: 0, max: 9 }).map((x) => x < 2),
          type: fc.constantFrom(59, 59, 60),
          tid: fc.constantFrom(1, 1, 2),
          cross: fc.constantFrom(false, false, false, true),
        }),
        { maxLength: 14 },
      ),
      calls: fc.array(fc.record({ iv: fc.tuple(fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 3 })), corr: fc.integer({ min: 1, max: 12 }), tid: fc.constantFrom(1, 1, 2) }), { maxLength: 12 }),
      ops: fc.array(fc.record({ iv: fc.tuple(fc.integer({ min: 0, max: 90 }), fc.integer({ min: 0, max: 20 })), corr: fc.integer({ min: 1, max: 14 }), table: fc.constantFrom('KERNEL', 'MEMCPY', 'MEMSET') }), { maxLength: 16 }),
    });
    fc.assert(
      fc.property(arb, (a) => {
        const path = writeExport({
          ranges: a.ranges.map((r) => ({ start: r.iv[0], end: r.open ? null : r.iv[0] + r.iv[1], type: r.type, tid: r.tid, endTid: r.cross ? 3 : null })),
          calls: a.calls.map((c) => ({ start: c.iv[0], end: c.iv[0] + c.iv[1], corr: c.corr, tid: c.tid })),
          ops: a.ops.map((o) => ({ start: o.iv[0], end: o.iv[0] + o.iv[1], corr: o.corr, table: o.table as SynOp['table'] })),
        });
        const p = project(path);
        expect(asRef(p)).toEqual(bruteForce(path));
        expect(p.coverage.projectedRanges).toBe(p.instances!.length);
        expect(p.rows.reduce((s, r) => s + r.instances, 0)).toBe(p.instances!.length);
      }),
      { numRuns: 100 },
    );
  });

  it('returns nothing (and says why) without NVTX or CUDA API data', () => {
    const path = join(tmp, 'empty.sqlite');
    const db = new BetterSqlite3(path);
    db.exec(`CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT); CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, "end" INTEGER, correlationId INTEGER, globalPid INTEGER)`);
    db.close();
    const p = project(path);
    expect(p.rows).toEqual([]);
    expect(p.instances).toEqual([]);
    expect(p.missingTables).toEqual(['NVTX_EVENTS', 'CUPTI_ACTIVITY_KIND_RUNTIME']);
  });
});
