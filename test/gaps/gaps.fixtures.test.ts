import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import BetterSqlite3 from 'better-sqlite3';
import { openExport } from '../../src/export/openExport.js';
import type { ExportHandle } from '../../queries/handle.js';
import { analyzeGaps, idleByCausePerIteration, type GapAnalysis } from '../../src/gaps/analyzeGaps.js';
import { analyzeIterations } from '../../src/iterations/analyzeIterations.js';
import { unionIntervals, overlapLength } from '../../src/math/intervals.js';
import { fixture } from '../helpers/fixtures.js';
import { gapsOf } from '../helpers/pipeline.js';
import { LoadedExport } from '../../src/load/loadedExport.js';

const DENSE = fixture('pytorch-dense', 'trace.sqlite');
const sum = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);

/**
 * nsys's `gpu_gaps` rule (schema notes §5.5): per (pid, device), ops of KERNEL/MEMCPY/MEMSET with
 * start > 0, starts and ends sorted independently and paired by ROW_NUMBER; a gap is reported when
 * `duration > threshold` (strict) and gapStart < gapEnd. Graph-level traces are not GPU ops there.
 */
function nsysGpuGaps(db: BetterSqlite3.Database, thresholdNs: number): { deviceId: number; pid: number; startNs: number; endNs: number }[] {
  const tables = ['CUPTI_ACTIVITY_KIND_KERNEL', 'CUPTI_ACTIVITY_KIND_MEMCPY', 'CUPTI_ACTIVITY_KIND_MEMSET'].filter(
    (t) => db.prepare(`SELECT 1 FROM sqlite_master WHERE name = ?`).get(t) !== undefined,
  );
  const ops = tables
    .map((t) => `SELECT start, end, (globalPid >> 24) & 0x00FFFFFF AS pid, globalPid AS globalId, deviceId, contextId FROM ${t} WHERE start > 0`)
    .join(' UNION ALL ');
  const q = `
    WITH ops AS (${ops}),
    starts AS (SELECT ROW_NUMBER() OVER(ORDER BY pid, deviceId, start) AS rowNum, start, pid, deviceId FROM ops),
    ends AS (SELECT ROW_NUMBER() OVER(ORDER BY pid, deviceId, end) AS rowNum, end, pid, globalId, deviceId, contextId FROM ops)
    SELECT start - end AS duration, end AS gapStart, start AS gapEnd, ends.pid AS pid, ends.deviceId AS deviceId
    FROM starts JOIN ends ON starts.rowNum - 1 == ends.rowNum AND starts.deviceId == ends.deviceId AND starts.pid == ends.pid
    WHERE duration > ${Math.trunc(thresholdNs)} AND gapStart < gapEnd
    ORDER BY deviceId, gapStart`;
  return (db.prepare(q).all() as { duration: number; gapStart: number; gapEnd: number; pid: number; deviceId: number }[]).map((r) => ({
    deviceId: r.deviceId,
    pid: r.pid,
    startNs: r.gapStart,
    endNs: r.gapEnd,
  }));
}

const key = (g: { deviceId: number; pid: number; startNs: number; endNs: number }) => `${g.deviceId}/${g.pid}/${g.startNs}/${g.endNs}`;

/** Checks every invariant in plain JS (60k gaps) and asserts once, with the first failures. */
function checkInvariants(a: GapAnalysis): void {
  const bad: string[] = [];
  const check = (ok: boolean, what: string) => {
    if (!ok && bad.length < 10) bad.push(what);
  };
  for (const d of a.devices) {
    check(d.busyNs + d.idleNs === d.spanNs, `device ${d.deviceId}: busy + idle != span`);
    check(d.gapIdleNs + d.fragmentedIdleNs === d.idleNs, `device ${d.deviceId}: gap + fragmented idle != idle`);
    check(d.gaps + d.fragmentedGaps === d.gapCount, `device ${d.deviceId}: gap counts`);
    check(sum(d.idleByCauseNs) === d.gapIdleNs, `device ${d.deviceId}: causes != gap idle`);
  }
  for (const g of a.gaps) {
    const at = `gap ${g.deviceId}@${g.startNs}`;
    check(g.durationNs === g.endNs - g.startNs, `${at}: duration`);
    check(g.durationNs >= a.minGapNs, `${at}: shorter than min gap`);
    check(sum(g.causes) === g.durationNs, `${at}: causes sum ${sum(g.causes)} != ${g.durationNs}`);
    check(Object.values(g.causes).every((v) => v > 0), `${at}: zero part`);
    check(g.causes[g.cause] === Math.max(...Object.values(g.causes)), `${at}: primary cause is not the largest`);
    check(!g.before || g.before.endNs === g.startNs, `${at}: op before does not end at the gap start`);
    check(!g.after || g.after.startNs === g.endNs, `${at}: op after does not start at the gap end`);
  }
  check(sum(a.idleByCauseNs) === a.gaps.reduce((x, g) => x + g.durationNs, 0), 'total causes != total gap time');
  expect(bad).toEqual([]);
}

describe('gaps on pytorch-dense', () => {
  let h: ExportHandle;
  let db: BetterSqlite3.Database;
  let all: GapAnalysis;
  let dflt: GapAnalysis;
  beforeAll(() => {
    h = openExport(DENSE);
    db = new BetterSqlite3(DENSE, { readonly: true });
    all = gapsOf(h, { minGapNs: 0 });
    dflt = gapsOf(h);
  });
  afterAll(() => {
    h.close();
    db.close();
  });

  it('the fixture is a fair ground for nsys comparisons: no graph-level traces, no ops at t <= 0, no zero-length ops', () => {
    expect(h.hasTable('CUPTI_ACTIVITY_KIND_GRAPH_TRACE')).toBe(false);
    for (const t of ['CUPTI_ACTIVITY_KIND_KERNEL', 'CUPTI_ACTIVITY_KIND_MEMCPY', 'CUPTI_ACTIVITY_KIND_MEMSET']) {
      expect((db.prepare(`SELECT count(*) AS n FROM ${t} WHERE start <= 0 OR end <= start`).get() as { n: number }).n).toBe(0);
    }
  });

  it('per device: busy + all gaps (min-gap 0) = captured span (first op start .. last op end), exactly', () => {
    const spans = db
      .prepare(
        `SELECT deviceId, min(start) AS s, max(end) AS e, count(*) AS n FROM (
           SELECT deviceId, start, end FROM CUPTI_ACTIVITY_KIND_KERNEL UNION ALL
           SELECT deviceId, start, end FROM CUPTI_ACTIVITY_KIND_MEMCPY UNION ALL
           SELECT deviceId, start, end FROM CUPTI_ACTIVITY_KIND_MEMSET) GROUP BY deviceId ORDER BY deviceId`,
      )
      .all() as { deviceId: number; s: number; e: number; n: number }[];
    expect(all.devices.map((d) => d.deviceId)).toEqual(spans.map((s) => s.deviceId));
    for (const [i, d] of all.devices.entries()) {
      expect(d.spanStartNs).toBe(spans[i].s);
      expect(d.spanEndNs).toBe(spans[i].e);
      expect(d.opCount).toBe(spans[i].n);
      const gapNs = all.gaps.filter((g) => g.deviceId === d.deviceId).reduce((a, g) => a + g.durationNs, 0);
      expect(d.fragmentedGaps).toBe(0);
      expect(d.gaps).toBe(d.gapCount);
      expect(d.busyNs + gapNs).toBe(spans[i].e - spans[i].s);
    }
  });

  it('with min-gap 0 every gap is the same as nsys gpu_gaps at threshold 0 (duration > 0)', () => {
    const ref = nsysGpuGaps(db, 0);
    expect(all.gaps.map(key)).toEqual(ref.map(key));
  });

  // iterscope reports durationNs >= minGap; nsys reports duration > threshold. On integer ns,
  // `> T` is `>= T + 1`: compare iterscope at T + 1 with nsys at T, and iterscope at T with nsys at
  // T - 1 (which is nsys's list at T plus gaps of exactly T ns).
  for (const [label, t] of [
    ['500ms', 500_000_000],
    ['1ms', 1_000_000],
    ['100us', 100_000],
  ] as const) {
    it(`same gap list as nsys's gpu_gaps rule in SQL at ${label}`, () => {
      const nsysStrict = nsysGpuGaps(db, t);
      const nsysAtLeast = nsysGpuGaps(db, t - 1);
      const ours = analyzeGaps(new LoadedExport(h), { minGapNs: t, iterations: null });
      const oursStrict = analyzeGaps(new LoadedExport(h), { minGapNs: t + 1, iterations: null });
      expect(ours.gaps.map(key)).toEqual(nsysAtLeast.map(key));
      expect(oursStrict.gaps.map(key)).toEqual(nsysStrict.map(key));
      // and on this fixture no gap lasts exactly T ns, so `--min-gap T` equals nsys's `> T` list too.
      expect(ours.gaps.filter((g) => g.durationNs === t)).toEqual([]);
      expect(ours.gaps.map(key)).toEqual(nsysStrict.map(key));
      // the reported gaps equal the min-gap-0 gaps that are long enough
      expect(ours.gaps.map(key)).toEqual(all.gaps.filter((g) => g.durationNs >= t).map(key));
      if (t === 1_000_000) expect(ours.gaps.length).toBeGreaterThan(0);
    });
  }

  it('every gap splits exactly into its causes; gaps overlapping Python GC carry gc = the overlap', () => {
    checkInvariants(all);
    checkInvariants(dflt);
    expect(dflt.gcTraced).toBe(true);
    // Python GC ranges of the process, straight from SQL (text or registered string, default domain).
    const gcRows = db
      .prepare(
        `SELECT n.start AS s, n.end AS e FROM NVTX_EVENTS n LEFT JOIN StringIds si ON si.id = n.textId
         WHERE coalesce(si.value, n.text) = 'Python GC' AND coalesce(n.domainId, 0) = 0 AND n.eventType IN (59, 60, 70, 71) AND n.end IS NOT NULL`,
      )
      .all() as { s: number; e: number }[];
    expect(gcRows.length).toBeGreaterThan(0);
    const gc = unionIntervals(gcRows.map((r) => r.s), gcRows.map((r) => r.e));
    let withGc = 0;
    for (const g of dflt.gaps) {
      const ov = overlapLength(gc, g.startNs, g.endNs);
      if (ov > 0) withGc++;
      expect(g.causes.gc ?? 0).toBe(ov);
    }
    expect(withGc).toBeGreaterThan(0);
    expect(dflt.gaps.some((g) => g.cause === 'gc')).toBe(true);
  });

  it('launch_late is the time from the launch call (started inside the gap) to the gap end, when nothing ranked higher covers it', () => {
    let late = 0;
    for (const g of dflt.gaps) {
      const call = g.launchCall;
      const inside = call != null && call.startNs > g.startNs && call.startNs < g.endNs;
      if (!inside) {
        expect(g.causes.launch_late).toBeUndefined();
        continue;
      }
      late++;
      expect(g.causes.launch_late ?? 0).toBeLessThanOrEqual(g.endNs - call.startNs);
      if (!g.causes.gc && !g.causes.gil_wait && !g.causes.sync) expect(g.causes.launch_late).toBe(g.endNs - call.startNs);
    }
    expect(late).toBeGreaterThan(0);
  });

  it("each gap's launch call is the runtime row of the op after it: same process and correlation id, its start, thread and name", () => {
    // The op after the gap, found by SQL among the GPU ops of its process and device starting at the gap's end.
    const opAt = db.prepare(
      `SELECT correlationId FROM (SELECT start, correlationId, deviceId, (globalPid >> 24) & 0xFFFFFF AS pid FROM CUPTI_ACTIVITY_KIND_KERNEL
         UNION ALL SELECT start, correlationId, deviceId, (globalPid >> 24) & 0xFFFFFF FROM CUPTI_ACTIVITY_KIND_MEMCPY
         UNION ALL SELECT start, correlationId, deviceId, (globalPid >> 24) & 0xFFFFFF FROM CUPTI_ACTIVITY_KIND_MEMSET)
       WHERE start = ? AND deviceId = ? AND pid = ?`,
    );
    const callOf = db.prepare(
      `SELECT r.start, r.globalTid & 0xFFFFFF AS tid, s.value AS name FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId
       WHERE r.correlationId = ? AND (r.globalTid >> 24) & 0xFFFFFF = ? ORDER BY r.rowid LIMIT 1`,
    );
    let checked = 0;
    for (const g of dflt.gaps) {
      const ops = opAt.all(g.endNs, g.deviceId, g.pid) as { correlationId: number }[];
      if (ops.length !== 1) continue;
      const row = callOf.get(ops[0].correlationId, g.pid) as { start: number; tid: number; name: string } | undefined;
      expect(g.launchCall).toEqual(row ? { startNs: row.start, tid: row.tid, name: row.name.replace(/_v\d+$/, '') } : null);
      checked++;
    }
    expect(checked).toBeGreaterThan(dflt.gaps.length / 2);
  });

  it('GIL waits and NVTX ranges of the executor thread explain gaps; Holding GIL never does', () => {
    expect(dflt.gilTraced).toBe(true);
    expect(dflt.idleByCauseNs.gil_wait).toBeGreaterThan(0);
    const causes = Object.keys(dflt.idleByCauseNs);
    expect(causes).toContain('nvtx:_sample_async');
    expect(causes.some((c) => /GIL|Python GC/.test(c))).toBe(false);
    expect(dflt.threads).toEqual([expect.objectContaining({ executorTid: expect.any(Number) })]);
    expect(dflt.syncApis).toContain('cudaStreamSynchronize');
  });

  it('gaps are placed in iterations and phases; idleByCausePerIteration sums them', () => {
    expect(dflt.iterationsFound).toBe(true);
    const its = analyzeIterations(new LoadedExport(h)).iterations;
    expect(dflt.iterations.map((i) => i.iter)).toEqual(its.map((i) => i.iter));
    for (const g of dflt.gaps) {
      if (g.iter == null) {
        expect(its.some((i) => i.pid === g.pid && g.startNs >= i.startNs && g.startNs < i.endNs)).toBe(false);
      } else {
        const it_ = its.find((i) => i.iter === g.iter)!;
        expect(g.startNs).toBeGreaterThanOrEqual(it_.startNs);
        expect(g.startNs).toBeLessThan(it_.endNs);
        expect(g.phase).toBe(it_.phase);
      }
    }
    const per = idleByCausePerIteration(dflt, its);
    expect(per.size).toBe(its.length);
    for (const it_ of its) {
      const expected = dflt.gaps.filter((g) => g.iter === it_.iter).reduce((a, g) => a + g.durationNs, 0);
      expect(sum(per.get(it_.iter)!)).toBe(expected);
    }
    const withFrag = idleByCausePerIteration(dflt, its, { includeFragmented: true });
    const s = dflt.iterations.find((i) => i.fragmentedIdleNs > 0)!;
    expect(withFrag.get(s.iter)!.fragmented).toBe(s.fragmentedIdleNs);
    // phases add up to the whole
    const phaseIdle = dflt.phases.reduce((a, p) => a + p.gapIdleNs + p.fragmentedIdleNs, 0);
    expect(phaseIdle).toBe(dflt.devices.reduce((a, d) => a + d.idleNs, 0));
    // passing the iterations in gives the same analysis as finding them
    const passed = analyzeGaps(new LoadedExport(h), { iterations: its });
    expect(passed.gaps).toEqual(dflt.gaps);
  });

  it('--device filter: an absent device yields nothing, the present one the same gaps', () => {
    expect(analyzeGaps(new LoadedExport(h), { deviceId: 7, iterations: null }).gaps).toEqual([]);
    expect(gapsOf(h, { deviceId: 0 }).gaps.map(key)).toEqual(dflt.gaps.map(key));
  });
});

describe('gaps on other fixtures', () => {
  it('pytorch-moe-window (GIL + GC traced, profile window)', () => {
    const h = openExport(fixture('pytorch-moe-window', 'trace.sqlite'));
    try {
      const a = gapsOf(h);
      checkInvariants(a);
      expect(a.gcTraced).toBe(true);
      expect(a.gilTraced).toBe(true);
      expect(a.iterationsFound).toBe(true);
      expect(a.gaps.length).toBeGreaterThan(0);
      expect(a.idleByCauseNs.gil_wait).toBeGreaterThan(0);
      expect(a.notes.some((n) => /not traced/.test(n))).toBe(false);
    } finally {
      h.close();
    }
  });

  it('pytorch-tp2 rank 0 (no GIL trace: says so, no gil_wait)', () => {
    const h = openExport(fixture('pytorch-tp2', 'trace.rank0.sqlite'));
    try {
      const a = gapsOf(h);
      checkInvariants(a);
      expect(a.gilTraced).toBe(false);
      expect(a.idleByCauseNs.gil_wait).toBeUndefined();
      expect(a.notes.some((n) => /GIL not traced/.test(n))).toBe(true);
      // the NCCL watchdog thread polls events but launches nothing: one launching thread
      expect(a.threads.length).toBe(1);
      expect(a.threads[0].tids.length).toBe(1);
    } finally {
      h.close();
    }
  });

  it('cpp-legacy-windows trace.2 (graph-level trace: graph launches count as busy)', () => {
    const path = fixture('cpp-legacy-windows', 'trace.2.sqlite');
    const h = openExport(path);
    const db = new BetterSqlite3(path, { readonly: true });
    try {
      expect(h.hasTable('CUPTI_ACTIVITY_KIND_GRAPH_TRACE')).toBe(true);
      const a = gapsOf(h, { minGapNs: 0 });
      checkInvariants(a);
      const rows = db
        .prepare(`SELECT deviceId AS d, start AS s, end AS e FROM CUPTI_ACTIVITY_KIND_MEMCPY UNION ALL SELECT deviceId, start, end FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE`)
        .all() as { d: number; s: number; e: number }[];
      const busy = unionIntervals(rows.map((r) => r.s), rows.map((r) => r.e));
      const d = a.devices[0];
      expect(d.busyNs).toBe(overlapLength(busy, -Infinity, Infinity));
      expect(d.spanStartNs).toBe(Math.min(...rows.map((r) => r.s)));
      expect(d.spanEndNs).toBe(Math.max(...rows.map((r) => r.e)));
      // no gap lies inside a graph launch
      const graphs = db.prepare(`SELECT start AS s, end AS e FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE`).all() as { s: number; e: number }[];
      for (const g of a.gaps) for (const gr of graphs) expect(g.endNs <= gr.s || g.startNs >= gr.e).toBe(true);
      expect(a.gaps.some((g) => g.before?.kind === 'graph' || g.after?.kind === 'graph')).toBe(true);
      expect(a.notes.some((n) => /whole-graph launches/.test(n))).toBe(true);
      expect(a.gcTraced).toBe(false);
    } finally {
      h.close();
      db.close();
    }
  });

  it('an external export without NVTX (cloverleaf, nsys 2024.5): works, no iterations, says why', () => {
    const h = openExport(fixture('external', 'nsys2024.5_cloverleaf_pipit.sqlite'));
    try {
      expect(h.hasTable('NVTX_EVENTS')).toBe(false);
      const a = gapsOf(h);
      checkInvariants(a);
      expect(a.iterationsFound).toBe(false);
      expect(a.gaps.length).toBeGreaterThan(0);
      expect(a.gaps.every((g) => g.iter === null)).toBe(true);
      expect(a.notes.some((n) => /no iterations/.test(n))).toBe(true);
      expect(a.notes.some((n) => /no NVTX/.test(n))).toBe(true);
      expect(Object.keys(a.idleByCauseNs).every((c) => ['sync', 'launch_late', 'unattributed'].includes(c))).toBe(true);
    } finally {
      h.close();
    }
  });

  it('exports from other nsys versions and without GPU work do not crash', () => {
    for (const f of ['nsys2022.2_mpi_saxpy_pipit.sqlite', 'nsys2025.5.2_cudagraph_flameox.sqlite', 'nsys2023.4_nocuda_python.sqlite', 'nsys2026.2_h100_2gpu_1s_nsysai.sqlite', 'legacy2021_mordred.sqlite']) {
      const h = openExport(fixture('external', f));
      try {
        const a = gapsOf(h);
        checkInvariants(a);
      } finally {
        h.close();
      }
    }
  });
});
